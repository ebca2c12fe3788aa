#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The library's rendering for encoded loads: decode (to a thumbnail when asked, which a JPEG
/// does in its DCT without the full bitmap), run the transformers in order, encode. A thumbnail
/// as a file:
///
/// ```swift
/// let rendering = TransformAndEncode(maxPixelSize: 512, transformers: [ResizeTransformer(width: 256, height: 256, mode: .fill)],
///                                    format: .webp, encodeOptions: EncodeOptions(quality: 0.8))
/// let thumbnail = try await manager.encodedImage(for: ImageRequest(url: url, rendering: rendering))
/// try thumbnail.image.body.write(to: file)
/// ```
public struct TransformAndEncode: ImageRendering {
    /// Decode to at most this many pixels on the longer side; `nil`: full size.
    public var maxPixelSize: Int?
    /// The most pixels a source may have.
    public var pixelLimit: Int
    /// Applied in order.
    public var transformers: [any ImageTransformer]
    /// The output format.
    public var format: ImageFormat
    /// Quality, losslessness, progression.
    public var encodeOptions: EncodeOptions
    /// The coders that decode and encode.
    public var coders: ImageCodersManager

    /// A rendering.
    public init(maxPixelSize: Int? = nil, pixelLimit: Int = DecodeOptions.defaultPixelLimit, transformers: [any ImageTransformer] = [],
                format: ImageFormat, encodeOptions: EncodeOptions = EncodeOptions(), coders: ImageCodersManager = .shared) {
        self.maxPixelSize = maxPixelSize
        self.pixelLimit = pixelLimit
        self.transformers = transformers
        self.format = format
        self.encodeOptions = encodeOptions
        self.coders = coders
    }

    /// The source key, the decode size, the transformers' key, the format and encode options.
    public func outputKey(sourceKey: String) -> String {
        let decode = DecodeOptions(maxPixelSize: maxPixelSize)
        let transformed = LoadPlan.finalKey(source: sourceKey, decodeOptions: decode, transformers: transformers)
        let options = encodeOptions
        return transformed + "-encoded(\(format.rawValue),q\(options.quality),\(options.lossless ? "lossless" : "lossy")"
            + "\(options.firstFrameOnly ? ",first" : "")\(options.progressive ? ",progressive" : ""))"
    }

    /// Holds the decoded bitmap (the thumbnail's, when the header tells its size) and the
    /// transform's output.
    public func prepare(_ sources: [SourceImage], memoryBudget: Int?) throws -> ImageManager.PreparedRender {
        guard let source = sources.first else { throw WebImageError.emptyData }
        let declared = FormatDetection.declaredSize(of: source.data)
        var bytes = declared.map { 4 * $0.width * $0.height } ?? memoryBudget ?? 0
        if let maxPixelSize, let size = declared, max(size.width, size.height) > maxPixelSize {
            let scale = Double(maxPixelSize) / Double(max(size.width, size.height))
            bytes = Int(4 * Double(size.width * size.height) * scale * scale) + 4 * max(size.width, size.height)
        }
        let rendering = self
        return ImageManager.PreparedRender(bytes: 2 * bytes) { cancellation in
            try rendering.render(source, cancellation: cancellation)
        }
    }

    private func render(_ source: SourceImage, cancellation: DecodeCancellation) throws -> EncodedImage {
        var decode = DecodeOptions(maxPixelSize: maxPixelSize, pixelLimit: pixelLimit, firstFrameOnly: encodeOptions.firstFrameOnly)
        decode.stop = StopFlag(cancellation)
        var image = try coders.decodeForDisplay(source.data, options: decode)
        for transformer in transformers {
            try cancellation.check()
            image = try image.applying(transformer)
        }
        var options = encodeOptions
        options.stop = StopFlag(cancellation)
        let body = try coders.encode(image, format: format, options: options)
        let tag = SHA256.hex(of: Array((source.validators + "\n" + outputKey(sourceKey: "")).utf8)).prefix(32)
        return EncodedImage(body: body, contentType: format.mimeType ?? "application/octet-stream", etag: "\"\(tag)\"")
    }
}
