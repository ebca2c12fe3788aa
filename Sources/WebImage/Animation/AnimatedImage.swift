#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// An animation that keeps its compressed data and decodes frames on demand (SDWebImage's
/// `SDAnimatedImage`): GIF, APNG, animated WebP, AVIF sequences and JPEG XL animations.
///
/// The frame count, loop count and every frame's duration come from the file's headers when it
/// is made (the blocks, chunks or WebP frames are walked, no pixel is decoded). ``frame(at:)``
/// decodes any frame, applying the format's disposal and blending: it goes on from the last
/// frame it drew when asked for a later one, else starts over on a blank canvas at the nearest
/// key frame (a frame that does not depend on the frames before it). At most one full-size
/// canvas is kept, so memory does not grow with the number of frames; an
/// ``AnimatedImagePlayer`` adds a frame buffer with a byte budget.
///
/// The limits of ``DecodeOptions`` hold as for a whole decode: the canvas is checked against
/// ``DecodeOptions/pixelLimit`` (and, for GIF and APNG, against what the file's bytes could fill)
/// before anything is allocated, and frames past ``DecodeOptions/maxFrameCount`` are not
/// listed (``truncation`` says so). Thumbnails (``DecodeOptions/maxPixelSize``) shrink each frame,
/// and ``DecodeOptions/applyOrientation`` turns each frame upright, as in a whole decode.
public final class AnimatedImage: Sendable {
    /// The compressed file.
    public let data: Data
    /// The format the frames are decoded from.
    public var format: ImageFormat { source.format }
    /// How many frames there are (at most ``DecodeOptions/maxFrameCount``).
    public let frameCount: Int
    /// How many times the animation plays; 0 means forever.
    public var loopCount: Int { source.loopCount }
    /// Each frame's duration in seconds, as the file gives it.
    public let durations: [Double]
    /// The canvas size in pixels, before any thumbnail or transform.
    public var canvasWidth: Int { source.canvasWidth }
    /// The canvas height in pixels.
    public var canvasHeight: Int { source.canvasHeight }
    /// Whether the file declares transparency.
    public var hasAlpha: Bool { source.hasAlpha }
    /// ``DecodedImage/AnimationTruncation/frameCount`` when the file has more frames than ``DecodeOptions/maxFrameCount``.
    public let truncation: DecodedImage.AnimationTruncation?
    /// The options frames are decoded with.
    public let options: DecodeOptions
    /// Transformers applied to each frame as it is decoded, in order.
    public let transformers: [any ImageTransformer]
    /// The default byte budget of a player's frame buffer for this animation
    /// (``AnimatedImagePlayer/BufferBudget/defaultBytes(frameBytes:frameCount:)``); a memory cache counts
    /// this, not every frame.
    public let bufferBudget: Int

    let source: any AnimationFrameSource
    /// The reader behind ``frame(at:)``; held while one frame decodes, so calls from several
    /// threads take turns rather than racing on the canvas. Players keep their own reader.
    private let reader: Locked<AnimationCursor>

    /// Reads the headers of an animated GIF, APNG, WebP, AVIF sequence or JPEG XL animation.
    /// - Returns: `nil` when `data` is not one of those formats or does not animate (one frame).
    /// - Throws: ``WebImageError`` when the headers are corrupt, truncated, or over the limits.
    public convenience init?(data: Data, options: DecodeOptions = DecodeOptions()) throws {
        try self.init(data: data, options: options, applyCleanAperture: true)
    }

    /// See ``init(data:options:)``; `applyCleanAperture` is the AVIF coder's setting.
    convenience init?(data: Data, options: DecodeOptions, applyCleanAperture: Bool) throws {
        guard let source = try Self.source(for: data, options: options, applyCleanAperture: applyCleanAperture),
              source.frames.count > 1 else { return nil }
        try self.init(source: source, data: data, options: options, transformers: [])
    }

    init(source: any AnimationFrameSource, data: Data, options: DecodeOptions, transformers: [any ImageTransformer]) throws {
        self.source = source
        self.data = data
        self.options = options
        self.transformers = transformers
        let limit = max(1, options.maxFrameCount)
        frameCount = min(source.frames.count, limit)
        truncation = source.frames.count > limit ? .frameCount : nil
        durations = source.frames.prefix(frameCount).map(\.duration)
        let size = (try? options.targetSize(width: source.canvasWidth, height: source.canvasHeight)) ?? (source.canvasWidth, source.canvasHeight)
        bufferBudget = AnimatedImagePlayer.BufferBudget.defaultBytes(frameBytes: Bitmap.byteCount(width: size.0, height: size.1) ?? .max,
                                                          frameCount: frameCount)
        reader = Locked(try AnimationCursor(source: source, options: options))
    }

    /// The lazy source for `data`, or `nil` for a format without one.
    static func source(for data: Data, options: DecodeOptions, applyCleanAperture: Bool = true) throws -> (any AnimationFrameSource)? {
        var options = options
        options.firstFrameOnly = false
        switch ImageFormat.detect(data) {
        case .gif: return try GIFAnimationSource(data: data, options: options)
        case .png: return try APNGDecoder(data: data, options: options)
        case .webp:
            guard FormatDetection(data).isAnimated else { return nil }
            return try WebPAnimationSource(data: data, options: options)
        case .avif:
            guard FormatDetection(data).isAnimated else { return nil }
            return try AVIFAnimationSource(data: data, options: options, applyCleanAperture: applyCleanAperture)
        case .jxl: return try JXLAnimationSource(data: data, options: options)
        default: return nil
        }
    }

    /// Whether frame `index` can be decoded without the frames before it.
    public func isKeyFrame(_ index: Int) -> Bool {
        index >= 0 && index < frameCount && source.frames[index].isKeyFrame
    }

    /// One play of the animation, in seconds.
    public var totalDuration: Double { durations.reduce(0, +) }

    /// The size of one decoded frame before transformers: the canvas, or the thumbnail asked for,
    /// turned when ``DecodeOptions/applyOrientation`` turns the frames a quarter.
    public var frameSize: (width: Int, height: Int) {
        let size = (try? options.targetSize(width: canvasWidth, height: canvasHeight)) ?? (canvasWidth, canvasHeight)
        return appliedOrientation.swapsDimensions ? (size.1, size.0) : size
    }

    /// The orientation each frame is turned by when rendered: the source's when the options ask for it.
    private var appliedOrientation: ImageOrientation { options.applyOrientation ? source.orientation : .up }

    /// Bytes of one decoded frame before transformers.
    public var frameByteCount: Int { Bitmap.byteCount(width: frameSize.width, height: frameSize.height) ?? .max }

    /// Frame `index` as shown, with its duration.
    /// - Throws: ``WebImageError/corruptData(_:)`` for an index out of range, or the format's
    ///   error when the frame cannot be decoded.
    public func frame(at index: Int) throws -> ImageFrame {
        try reader.withLock { cursor in try render(index, with: &cursor) }
    }

    /// How many frames ``frame(at:)``'s reader has drawn (for tests of key-frame seeking).
    var readerFramesDrawn: Int { reader.withLock { $0.framesDrawn } }

    /// A new reader with its own canvas, for a consumer that walks the frames in its own order.
    func makeCursor() throws -> AnimationCursor {
        try AnimationCursor(source: source, options: options)
    }

    /// Renders frame `index` with `cursor`, then turns it upright (when asked), converts colours
    /// and applies the transformers, in the order a whole decode and a load apply them.
    func render(_ index: Int, with cursor: inout AnimationCursor) throws -> ImageFrame {
        guard index >= 0, index < frameCount else { throw WebImageError.corruptData("animation frame \(index) of \(frameCount)") }
        var bitmap = try cursor.render(index)
        if appliedOrientation != .up { bitmap = try bitmap.applying(appliedOrientation) }
        if let profile = source.iccProfile, !options.keepsColors, ColorConversion.needsConversion(iccProfile: profile) {
            bitmap = try ColorConversion.convertToSRGB(bitmap, iccProfile: profile, parallel: options.parallelDecoding)
        }
        var image = DecodedImage(bitmap: bitmap, format: format, scale: options.scale, hasAlpha: hasAlpha)
        for transformer in transformers { image = try transformer.transform(image) }
        return ImageFrame(bitmap: image.bitmap, duration: durations[index])
    }

    /// The same animation with `transformer` applied to each frame when it is decoded (nothing
    /// is decoded now). The compressed data and headers are shared.
    public func transformed(by transformer: any ImageTransformer) throws -> AnimatedImage {
        try AnimatedImage(source: source, data: data, options: options, transformers: transformers + [transformer])
    }

    /// Every frame decoded, as a whole decode returns them, within the budget of
    /// ``DecodeOptions/animationByteLimit``: the way to hand a lazy animation to code that needs
    /// all frames at once (an encoder).
    public func decodedImage() throws -> DecodedImage {
        var cursor = try makeCursor()
        var budget = AnimationBudget(options: options, canvasWidth: canvasWidth, canvasHeight: canvasHeight, kept: frameSize)
        var frames: [ImageFrame] = []
        for index in 0..<frameCount {
            guard try budget.admitFrame() else { break }
            frames.append(try render(index, with: &cursor))
        }
        var image = try DecodedImage(frames: frames, loopCount: loopCount, format: format,
                                     orientation: options.applyOrientation ? .up : source.orientation,
                                     scale: options.scale, hasAlpha: hasAlpha)
        image.truncation = budget.truncation ?? (frames.count == frameCount ? truncation : nil)
        if options.keepsColors { image.iccProfile = source.iccProfile.flatMap(ColorConversion.keptProfile) }
        return image
    }
}
