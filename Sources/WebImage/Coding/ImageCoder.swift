#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// How a decoder should decode.
public struct DecodeOptions: Sendable, Hashable {
    /// Decode straight to an image whose longer side is at most this many pixels (a thumbnail),
    /// keeping the aspect ratio; `nil` decodes at full size. Decoders that can scale while decoding
    /// (JPEG's DCT scaling) never allocate the full-size bitmap.
    public var maxPixelSize: Int?
    /// The most pixels (width × height of the canvas) a decode may produce. Checked against the
    /// dimensions declared in the header, before any pixel memory is allocated.
    public var pixelLimit: Int
    /// When the declared size is over ``pixelLimit``: `true` decodes downsampled to fit the limit,
    /// `false` throws ``WebImageError/tooLarge(_:)``.
    public var scaleDownLargeImages: Bool
    /// Decode only the first frame of an animation.
    public var firstFrameOnly: Bool
    /// Turn the pixels by the EXIF orientation (and report ``ImageOrientation/up``).
    public var applyOrientation: Bool
    /// The most bytes all frames of an animation may take together: each frame's pixels as
    /// returned (its thumbnail when ``maxPixelSize`` asks for one) plus ``frameOverheadBytes``.
    ///
    /// Checked before each frame is decoded: a frame that would not fit is never decoded, and the
    /// image comes back with the frames that fit and ``DecodedImage/truncation`` set to
    /// ``DecodedImage/AnimationTruncation/byteLimit``; no error is thrown. The first frame is always decoded
    /// (``pixelLimit`` bounds it, as for a still image). A thumbnail composes every frame at full
    /// size before shrinking it, so it also stops once the full-size frames composed pass
    /// ``thumbnailWorkFactor`` × this limit: a bound on time, as the limit itself bounds memory.
    public var animationByteLimit: Int
    /// The most frames an animation may have; the decode stops before the frame past it and sets
    /// ``DecodedImage/truncation`` to ``DecodedImage/AnimationTruncation/frameCount`` (no error is thrown).
    public var maxFrameCount: Int
    /// The scale given to the decoded image (2 for `@2x` assets).
    public var scale: Double
    /// Whether one large decode may use a second thread: the 1/8-scale JPEG decoder splits big
    /// scans, the resampler splits big resizes, for lower latency. A server that already decodes
    /// an image per core gains nothing from it and may turn it off to keep one thread per decode.
    public var parallelDecoding: Bool
    /// Keep the pixels in the colour space the file declares: no ICC profile, PNG `gAMA`/`cHRM`
    /// or ICC-managed CMYK conversion, the plain decode (the profile is then kept in
    /// ``DecodedImage/iccProfile`` and re-embedded by the encoders). `false` (the default)
    /// converts to sRGB with Little CMS.
    public var keepsColors: Bool
    /// A flag that stops the decode at its next band of rows or frame (``WebImageError/cancelled``):
    /// a server's render past its deadline gives its thread back there, not at the decode's end.
    package var stop = StopFlag()

    /// 100 megapixels: 400 MB of RGBA8, far above any photo a camera takes, far below what hurts.
    public static let defaultPixelLimit = 100_000_000
    /// 10 000 frames: 16 minutes at 10 frames a second, longer than any animation made to be shown.
    public static let defaultMaxFrameCount = 10_000
    /// What each frame costs in ``animationByteLimit`` besides its pixels: its buffer object, its
    /// entry in the frame list and allocator rounding, so a 1×1 animation cannot admit millions.
    public static let frameOverheadBytes = 256
    /// How many times ``animationByteLimit`` of full-size frames a thumbnail may compose.
    public static let thumbnailWorkFactor = 4

    /// Creates options; the defaults decode at full size, all frames, orientation reported only.
    public init(maxPixelSize: Int? = nil, pixelLimit: Int = DecodeOptions.defaultPixelLimit,
                scaleDownLargeImages: Bool = false, firstFrameOnly: Bool = false,
                applyOrientation: Bool = false, animationByteLimit: Int = 512 << 20, scale: Double = 1,
                parallelDecoding: Bool = true, maxFrameCount: Int = DecodeOptions.defaultMaxFrameCount,
                keepsColors: Bool = false) {
        self.maxPixelSize = maxPixelSize
        self.pixelLimit = pixelLimit
        self.scaleDownLargeImages = scaleDownLargeImages
        self.firstFrameOnly = firstFrameOnly
        self.applyOrientation = applyOrientation
        self.animationByteLimit = animationByteLimit
        self.scale = scale
        self.parallelDecoding = parallelDecoding
        self.maxFrameCount = maxFrameCount
        self.keepsColors = keepsColors
    }

    /// The size to decode a `width` × `height` image to under these options: the full size, or a
    /// smaller one that keeps the aspect ratio when ``maxPixelSize`` asks for it or when the image is
    /// over ``pixelLimit`` and ``scaleDownLargeImages`` is set.
    /// - Throws: ``WebImageError/tooLarge(_:)`` when the image is over the limit and may not be
    ///   scaled down; ``WebImageError/corruptData(_:)`` for a side that is not positive.
    public func targetSize(width: Int, height: Int) throws -> (width: Int, height: Int) {
        guard width > 0, height > 0 else { throw WebImageError.corruptData("image size \(width)×\(height)") }
        var scale = 1.0
        if let maxPixelSize, maxPixelSize > 0, max(width, height) > maxPixelSize {
            scale = Double(maxPixelSize) / Double(max(width, height))
        }
        let (pixels, overflow) = width.multipliedReportingOverflow(by: height)
        if overflow || pixels > pixelLimit {
            guard scaleDownLargeImages else {
                throw WebImageError.tooLarge("\(width)×\(height) is over the limit of \(pixelLimit) pixels")
            }
            scale = min(scale, (Double(pixelLimit) / (Double(width) * Double(height))).squareRoot())
        }
        guard scale < 1 else { return (width, height) }
        return (max(1, Int((Double(width) * scale).rounded())), max(1, Int((Double(height) * scale).rounded())))
    }
}

extension DecodeOptions {
    /// Checks that a canvas a decoder must build at full size (PNG, GIF, animations: formats that
    /// cannot decode smaller) fits the pixel limit, before any pixel memory is allocated. When
    /// scale-down is allowed the full-size canvas may be up to 4× the limit, since it is shrunk
    /// right after decoding.
    /// - Throws: ``WebImageError/tooLarge(_:)`` or ``WebImageError/corruptData(_:)``.
    public func checkFullSizeCanvas(width: Int, height: Int) throws {
        var limits = self
        limits.maxPixelSize = nil
        limits.scaleDownLargeImages = false
        if scaleDownLargeImages {
            limits.pixelLimit = max(pixelLimit, 1).multipliedReportingOverflow(by: 4).overflow ? .max : max(pixelLimit, 1) * 4
        }
        _ = try limits.targetSize(width: width, height: height)
    }
}

/// How an encoder should encode.
public struct EncodeOptions: Sendable, Hashable {
    /// Quality for lossy formats, 0...1 (JPEG, lossy WebP).
    public var quality: Double
    /// Encode WebP losslessly.
    public var lossless: Bool
    /// Encode only the first frame of an animation.
    public var firstFrameOnly: Bool
    /// Write a progressive JPEG (libjpeg's simple progression: the image sharpens as it loads)
    /// or an interlaced (Adam7) PNG; other formats ignore it.
    public var progressive: Bool
    /// A flag that stops the encode at its next band of rows or frame (``WebImageError/cancelled``).
    package var stop = StopFlag()

    /// Creates options; the default quality is 0.9, lossy where the format allows.
    public init(quality: Double = 0.9, lossless: Bool = false, firstFrameOnly: Bool = false, progressive: Bool = false) {
        self.quality = quality
        self.lossless = lossless
        self.firstFrameOnly = firstFrameOnly
        self.progressive = progressive
    }
}

/// A decoder and encoder for one or more formats, pluggable into ``ImageCodersManager``.
///
/// Coders are called from any task, often in parallel: they must keep no per-call state in
/// themselves (incremental decoding keeps its state in an ``IncrementalImageDecoder``).
public protocol ImageCoder: Sendable {
    /// Whether this coder decodes `data` (usually a look at its signature).
    func canDecode(_ data: Data) -> Bool
    /// Decodes `data` to a straight-alpha RGBA8 image.
    /// - Throws: ``WebImageError`` (``WebImageError/corruptData(_:)``, ``WebImageError/truncatedData(_:)``,
    ///   ``WebImageError/tooLarge(_:)``...), never traps on bad input.
    func decode(_ data: Data, options: DecodeOptions) throws -> DecodedImage
    /// Whether this coder encodes to `format`.
    func canEncode(_ format: ImageFormat) -> Bool
    /// Encodes `image` to `format`.
    func encode(_ image: DecodedImage, format: ImageFormat, options: EncodeOptions) throws -> Data
    /// A decoder that takes data as it arrives and shows what it has so far (progressive loading),
    /// or `nil` when this coder cannot decode `format` incrementally.
    func makeIncrementalDecoder(for format: ImageFormat, options: DecodeOptions) -> (any IncrementalImageDecoder)?
}

extension ImageCoder {
    /// Decoding only by default.
    public func canEncode(_ format: ImageFormat) -> Bool { false }
    /// Throws ``WebImageError/unsupportedFormat(_:)``.
    public func encode(_ image: DecodedImage, format: ImageFormat, options: EncodeOptions) throws -> Data {
        throw WebImageError.unsupportedFormat("no encoder for \(format.rawValue) in \(type(of: self))")
    }
    /// No incremental decoding by default.
    public func makeIncrementalDecoder(for format: ImageFormat, options: DecodeOptions) -> (any IncrementalImageDecoder)? { nil }
}

/// Decodes an image while its data is still arriving.
///
/// One instance serves one download; it is used from one task at a time and is not `Sendable`.
public protocol IncrementalImageDecoder: AnyObject {
    /// Gives the decoder all the data received so far (each call passes the whole prefix, which
    /// only grows) and returns the best image it can show now, or `nil` when nothing is decodable yet.
    /// When `isComplete` is `true` the data is the whole file and the result is the final image.
    func update(with data: Data, isComplete: Bool) throws -> DecodedImage?
}
