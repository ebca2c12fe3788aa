#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A decoded image: one or more frames of straight-alpha RGBA8 with what is known about them.
///
/// Cheap to copy and to send across tasks: frames share their immutable pixel buffers.
public struct DecodedImage: Sendable {
    /// The frames, at least one. A still image has exactly one.
    public private(set) var frames: [ImageFrame]
    /// How many times an animation plays; 0 means forever. 1 for still images.
    public var loopCount: Int
    /// The format the image was decoded from (``ImageFormat/unknown`` for images made in memory).
    public var format: ImageFormat
    /// The EXIF orientation stored with the image; the pixels are not turned by it.
    public var orientation: ImageOrientation
    /// Points per pixel, as in `UIImage.scale` (2 for an `@2x` image).
    public var scale: Double
    /// Whether the image has an alpha channel in its source (a PNG with tRNS, a WebP with ALPH...).
    public var hasAlpha: Bool
    /// Why the animation stopped before its last frame, or `nil` when every frame the file holds
    /// was decoded (or only the first was asked for). An animation over
    /// ``DecodeOptions/maxFrameCount`` or ``DecodeOptions/animationByteLimit`` is not an error:
    /// its first frames are returned and this says so.
    public var truncation: DecodedImage.AnimationTruncation?
    /// The ICC profile the pixels are in, when it is not sRGB: set when the image was decoded
    /// with ``DecodeOptions/keepsColors`` from a file with an RGB profile, and embedded again by
    /// the JPEG, PNG and WebP encoders. `nil` for sRGB pixels (the default decode converts to sRGB).
    public var iccProfile: Data?
    /// The animation behind a lazily decoded image: ``frames`` then holds only the first frame
    /// (the poster) and the others are decoded on demand, by ``AnimatedImage/frame(at:)`` or an
    /// ``AnimatedImagePlayer``. `nil` for still images and animations decoded whole.
    public var animation: AnimatedImage?

    /// Creates an image from its frames.
    /// - Throws: ``WebImageError/corruptData(_:)`` when `frames` is empty.
    public init(frames: [ImageFrame], loopCount: Int = 0, format: ImageFormat = .unknown,
                orientation: ImageOrientation = .up, scale: Double = 1, hasAlpha: Bool) throws {
        guard !frames.isEmpty else { throw WebImageError.corruptData("image has no frames") }
        self.frames = frames
        self.loopCount = frames.count > 1 ? loopCount : 1
        self.format = format
        self.orientation = orientation
        self.scale = scale > 0 ? scale : 1
        self.hasAlpha = hasAlpha
    }

    /// Creates a still image from one bitmap.
    public init(bitmap: Bitmap, format: ImageFormat = .unknown, orientation: ImageOrientation = .up,
                scale: Double = 1, hasAlpha: Bool) {
        self.frames = [ImageFrame(bitmap: bitmap)]
        self.loopCount = 1
        self.format = format
        self.orientation = orientation
        self.scale = scale > 0 ? scale : 1
        self.hasAlpha = hasAlpha
    }

    /// The first frame's pixels (the still image, or the poster frame of an animation).
    public var bitmap: Bitmap { frames[0].bitmap }
    /// Width of the canvas in pixels.
    public var width: Int { frames[0].bitmap.width }
    /// Height of the canvas in pixels.
    public var height: Int { frames[0].bitmap.height }
    /// Whether the decode dropped frames at a limit (``truncation`` is set).
    public var isTruncatedAnimation: Bool { truncation != nil }
    /// How many frames the image has: ``frames``, or all of a lazy ``animation``'s.
    public var frameCount: Int { animation?.frameCount ?? frames.count }
    /// Whether there is more than one frame.
    public var isAnimated: Bool { frames.count > 1 || animation != nil }
    /// Each frame's duration in seconds.
    public var durations: [Double] { animation?.durations ?? frames.map(\.duration) }
    /// One full play of the animation, in seconds.
    public var totalDuration: Double { durations.reduce(0, +) }

    /// What the image costs in a memory cache: the bytes of its decoded frames, plus, for a lazy
    /// animation, the frame buffer a player of it may fill (``AnimatedImage/bufferBudget``), not
    /// the frames it never holds at once.
    public var cost: Int {
        let pixels = frames.reduce(0) { $0 + $1.bitmap.byteCount }
        return pixels + (animation?.bufferBudget ?? 0)
    }

    /// A copy with other frames (used by transformers); other properties are kept.
    /// - Throws: ``WebImageError/corruptData(_:)`` when `frames` is empty.
    public func replacingFrames(_ frames: [ImageFrame]) throws -> DecodedImage {
        guard !frames.isEmpty else { throw WebImageError.corruptData("image has no frames") }
        var copy = self
        copy.frames = frames
        copy.animation = nil
        if frames.count == 1 { copy.loopCount = 1 }
        return copy
    }

    /// The same image with only its first frame.
    public var firstFrameOnly: DecodedImage {
        var copy = self
        copy.frames = [frames[0]]
        copy.loopCount = 1
        copy.truncation = nil
        copy.animation = nil
        return copy
    }

    /// A lazily decoded animation: its first frame as ``frames``, the rest on demand.
    /// - Throws: the format's ``WebImageError`` when the first frame cannot be decoded.
    public init(animation: AnimatedImage) throws {
        let poster = try animation.frame(at: 0)
        self.frames = [poster]
        self.loopCount = animation.loopCount
        self.format = animation.format
        // As the whole decode: the orientation turned the frames, or is reported for the caller to apply.
        self.orientation = animation.options.applyOrientation ? .up : animation.source.orientation
        self.scale = animation.options.scale > 0 ? animation.options.scale : 1
        self.hasAlpha = animation.hasAlpha
        self.truncation = animation.truncation
        if animation.options.keepsColors { self.iccProfile = animation.source.iccProfile.flatMap(ColorConversion.keptProfile) }
        self.animation = animation
    }

    /// All frames decoded: a lazy animation's frames within ``DecodeOptions/animationByteLimit``
    /// (see ``AnimatedImage/decodedImage()``), or this image itself.
    public func materialized() throws -> DecodedImage {
        guard let animation else { return self }
        var image = try animation.decodedImage()
        image.orientation = orientation
        image.scale = scale
        return image
    }
}
