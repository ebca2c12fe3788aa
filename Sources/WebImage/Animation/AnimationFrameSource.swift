#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A rectangle of an animation's canvas, in pixels.
struct CanvasRect: Hashable, Sendable {
    var x: Int, y: Int, width: Int, height: Int

    func covers(canvasWidth: Int, canvasHeight: Int) -> Bool {
        x <= 0 && y <= 0 && x + width >= canvasWidth && y + height >= canvasHeight
    }

    func contains(_ other: CanvasRect) -> Bool {
        other.width <= 0 || other.height <= 0
            || (other.x >= x && other.y >= y && other.x + other.width <= x + width && other.y + other.height <= y + height)
    }
}

/// What happens to the canvas after a frame was shown, before the next one is drawn.
enum FrameDisposal: Hashable, Sendable {
    /// The frame stays on the canvas.
    case keep
    /// The rectangle is cleared to transparent black.
    case clear(CanvasRect)
    /// The canvas goes back to what it was before the frame was drawn.
    case restorePrevious
}

/// What is known about one frame from the file's headers alone, before any pixel is decoded.
struct AnimationFrameInfo: Sendable {
    /// Seconds the frame shows, as the file says (players apply their own minimum).
    var duration: Double
    var disposal: FrameDisposal
    /// Whether drawing this frame on a blank canvas gives the same picture as drawing it after
    /// every frame before it: random access decodes from the nearest such frame.
    var isKeyFrame: Bool
}

/// One format's animation as the lazy decoder sees it: the header facts (canvas, loop count, the
/// frames' durations, disposals and key frames) read by parsing or demuxing only, and a way to
/// draw one frame on the canvas the earlier frames left. The shared ``AnimationCursor`` does the
/// rest (blank start at a key frame, disposal, snapshots, thumbnails) for every format.
protocol AnimationFrameSource: Sendable {
    var format: ImageFormat { get }
    var canvasWidth: Int { get }
    var canvasHeight: Int { get }
    /// How many times the animation plays; 0 means forever.
    var loopCount: Int { get }
    /// The frames, at least one; at most one past ``DecodeOptions/maxFrameCount`` (so that a
    /// decode can tell the limit stopped it), one under ``DecodeOptions/firstFrameOnly``.
    var frames: [AnimationFrameInfo] { get }
    /// Whether the source declares an alpha channel.
    var hasAlpha: Bool { get }
    /// Whether ``hasAlpha`` is only a guess from the headers and a whole decode should look at the
    /// pixels instead (GIF: a transparent index says little about the frames shown).
    var alphaFromPixels: Bool { get }
    /// The ICC profile the frames are in, converted to sRGB after drawing unless the decode keeps colours.
    var iccProfile: Data? { get }
    /// How the frames should be turned to be shown upright (EXIF, AVIF `irot`/`imir`, JPEG XL
    /// orientation); applied after drawing when ``DecodeOptions/applyOrientation`` asks for it.
    var orientation: ImageOrientation { get }
    /// The source as one more reader (an ``AnimationCursor``) should use it: itself, or, for a
    /// format whose library decoder keeps a position in the file (AVIF, JPEG XL), a copy with a
    /// decoder of its own so that readers do not move each other's.
    func forReader() -> any AnimationFrameSource
    /// Draws frame `index` onto `canvas` (`canvasWidth` × `canvasHeight` RGBA8), which holds what
    /// the frames before it left after their disposal (all zero before a key frame).
    func draw(_ index: Int, on canvas: UnsafeMutableRawBufferPointer) throws
}

extension AnimationFrameSource {
    var alphaFromPixels: Bool { false }
    var iccProfile: Data? { nil }
    var orientation: ImageOrientation { .up }
    func forReader() -> any AnimationFrameSource { self }
}

/// The key frames of formats whose frames either replace or composite onto the canvas (GIF,
/// APNG): frame 0; a frame that overwrites the whole canvas and does not restore what was under
/// it; and a frame drawn on a canvas that the frames before it left blank.
enum KeyFrames {
    struct Frame {
        /// The rectangle drawing touches.
        var drawn: CanvasRect
        /// Whether drawing replaces every pixel of the canvas whatever was there.
        var overwritesCanvas: Bool
        var disposal: FrameDisposal
    }

    static func mark(_ frames: [Frame], canvasWidth: Int, canvasHeight: Int) -> [Bool] {
        var keys: [Bool] = []
        keys.reserveCapacity(frames.count)
        var blankBefore = true
        for (index, frame) in frames.enumerated() {
            let overwrites = frame.overwritesCanvas && frame.disposal != .restorePrevious
            keys.append(index == 0 || blankBefore || overwrites)
            switch frame.disposal {
            case .keep:
                blankBefore = false
            case .clear(let rect):
                blankBefore = rect.covers(canvasWidth: canvasWidth, canvasHeight: canvasHeight)
                    || (blankBefore && rect.contains(frame.drawn))
            case .restorePrevious:
                break
            }
        }
        return keys
    }
}
