#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Where one reader of an animation is: the canvas as the frames so far left it, and the next
/// frame to draw. Rendering frame N goes on from here when N is ahead and no key frame lies in
/// between; otherwise it starts over on a blank canvas at the nearest key frame at or before N.
///
/// Holds one full-size canvas (plus a copy while a frame that restores the previous canvas is
/// drawn); nothing else grows with the animation. Not thread-safe: one reader, one cursor.
struct AnimationCursor {
    let source: any AnimationFrameSource
    let options: DecodeOptions
    /// The size frames are returned at: the canvas, or the thumbnail asked for.
    let target: (width: Int, height: Int)
    private var canvas: [UInt8] = []
    /// The frame drawn next when rendering goes on from here; `nil` before anything was drawn.
    private var next: Int?
    /// How many frames were drawn (kept or not), for tests of key-frame seeking.
    private(set) var framesDrawn = 0

    init(source: any AnimationFrameSource, options: DecodeOptions) throws {
        self.source = source.forReader()
        self.options = options
        target = try options.targetSize(width: source.canvasWidth, height: source.canvasHeight)
    }

    /// The nearest key frame at or before `index`.
    func keyFrame(atOrBefore index: Int) -> Int {
        var key = index
        while key > 0, !source.frames[key].isKeyFrame { key -= 1 }
        return key
    }

    /// Frame `index` as shown: the canvas after drawing it (before its disposal), at ``target`` size.
    /// - Throws: the format's ``WebImageError`` when a frame cannot be decoded (the cursor then
    ///   starts over at the next call).
    mutating func render(_ index: Int) throws -> Bitmap {
        guard index >= 0, index < source.frames.count else {
            throw WebImageError.corruptData("animation frame \(index) of \(source.frames.count)")
        }
        let key = keyFrame(atOrBefore: index)
        if next.map({ $0 > index || $0 < key }) ?? true {
            try startBlank()
            next = key
        }
        var snapshot: Bitmap?
        do {
            while var current = next, current <= index {
                let kept = try draw(current, keep: current == index)
                if current == index { snapshot = kept }
                current += 1
                next = current
            }
        } catch {
            next = nil
            throw error
        }
        guard let snapshot else { throw WebImageError.corruptData("animation frame \(index) not drawn") }
        return snapshot
    }

    private mutating func startBlank() throws {
        let width = source.canvasWidth, height = source.canvasHeight
        guard let count = Bitmap.byteCount(width: width, height: height) else {
            throw WebImageError.tooLarge("animation canvas \(width)×\(height)")
        }
        if canvas.count == count {
            canvas.withUnsafeMutableBytes { _ = $0.initializeMemory(as: UInt8.self, repeating: 0) }
        } else {
            canvas = [UInt8](repeating: 0, count: count)
        }
    }

    /// Draws one frame and applies its disposal; returns the frame as shown when `keep` is set.
    private mutating func draw(_ index: Int, keep: Bool) throws -> Bitmap? {
        let info = source.frames[index]
        let saved = info.disposal == .restorePrevious ? canvas : nil
        let source = self.source
        try canvas.withUnsafeMutableBytes { try source.draw(index, on: $0) }
        framesDrawn += 1
        var snapshot: Bitmap?
        if keep {
            var bitmap = try Bitmap(width: source.canvasWidth, height: source.canvasHeight) { buffer in
                canvas.withUnsafeBytes { buffer.copyMemory(from: $0) }
            }
            if (target.width, target.height) != (source.canvasWidth, source.canvasHeight) {
                bitmap = try Resampler.resize(bitmap, width: target.width, height: target.height, options: options)
            }
            snapshot = bitmap
        }
        switch info.disposal {
        case .keep:
            break
        case .clear(let rect):
            clear(rect)
        case .restorePrevious:
            if let saved { canvas = saved }
        }
        return snapshot
    }

    private mutating func clear(_ rect: CanvasRect) {
        let width = source.canvasWidth, height = source.canvasHeight
        let left = max(0, rect.x), top = max(0, rect.y)
        let right = min(width, rect.x + rect.width), bottom = min(height, rect.y + rect.height)
        guard left < right, top < bottom else { return }
        canvas.withUnsafeMutableBytes { bytes in
            for row in top..<bottom {
                let start = (row * width + left) * 4
                UnsafeMutableRawBufferPointer(rebasing: bytes[start..<(start + (right - left) * 4)])
                    .initializeMemory(as: UInt8.self, repeating: 0)
            }
        }
    }
}

/// Whole decodes of animations through the same cursor the lazy ``AnimatedImage`` uses: every
/// frame in order, each admitted by the ``AnimationBudget`` before it is decoded.
enum AnimationDecoding {
    static func decodeAll(_ source: any AnimationFrameSource, options: DecodeOptions) throws -> DecodedImage {
        var cursor = try AnimationCursor(source: source, options: options)
        var budget = AnimationBudget(options: options, canvasWidth: source.canvasWidth, canvasHeight: source.canvasHeight,
                                     kept: cursor.target)
        var frames: [ImageFrame] = []
        var sawTransparency = false
        for (index, info) in source.frames.enumerated() {
            guard try budget.admitFrame() else { break }
            let bitmap = try cursor.render(index)
            if source.alphaFromPixels, !sawTransparency { sawTransparency = bitmap.containsTransparency }
            frames.append(ImageFrame(bitmap: bitmap, duration: info.duration))
        }
        var image = try DecodedImage(frames: frames, loopCount: source.loopCount, format: source.format, scale: options.scale,
                                     hasAlpha: source.alphaFromPixels ? sawTransparency : source.hasAlpha)
        image.truncation = budget.truncation
        return image
    }
}
