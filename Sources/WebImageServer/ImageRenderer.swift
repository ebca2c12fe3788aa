#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import WebImage

/// Decode, resize, encode: one source's bytes to one response body. Synchronous CPU work, run on
/// NIO's blocking thread pool by the service.
struct ImageRenderer: Sendable {
    let coders: ImageCodersManager
    let maxSourcePixels: Int
    /// The most bytes all decoded frames of an animation may take.
    let animationByteLimit: Int

    /// Renders `source` for `parameters`; `sourceValidators` (the source's ETag or Last-Modified,
    /// or a hash of its bytes) and the options make the strong ETag.
    func render(_ source: Data, sourceValidators: String, parameters: ImageParameters,
                choice: FormatNegotiation.Choice) throws -> RenderedImage {
        let detection = FormatDetection(source)
        let keepsFrames = FormatNegotiation.canAnimate(
            FormatNegotiation.format(for: choice, isAnimated: detection.isAnimated, hasAlpha: false))
        var options = DecodeOptions(pixelLimit: maxSourcePixels, firstFrameOnly: !keepsFrames, applyOrientation: true,
                                    animationByteLimit: animationByteLimit, parallelDecoding: false)
        // A thumbnail decode (JPEG scales in the DCT) when the box is known; checked afterwards
        // against what the resize needs, and decoded again at full size when it fell short.
        options.maxPixelSize = Self.decodeSide(parameters)
        var image = try coders.decode(source, options: options)
        if let side = options.maxPixelSize, max(image.width, image.height) >= side, !Self.isLargeEnough(image, for: parameters) {
            options.maxPixelSize = nil
            image = try coders.decode(source, options: options)
        }
        if let resize = Self.resize(for: parameters, width: image.width, height: image.height) {
            image = try resize.transform(image)
        }
        let format = FormatNegotiation.format(for: choice, isAnimated: image.isAnimated, hasAlpha: image.hasAlpha)
        let encodeOptions = EncodeOptions(quality: Double(parameters.quality) / 100,
                                          firstFrameOnly: !FormatNegotiation.canAnimate(format))
        let body = try coders.encode(image, format: format, options: encodeOptions)
        let etag = Self.etag(sourceValidators: sourceValidators, parameters: parameters, format: format)
        return RenderedImage(body: body, contentType: format.mimeType ?? "application/octet-stream", etag: etag)
    }

    /// The strong ETag: a hash of the source's validators, the options and the output format.
    static func etag(sourceValidators: String, parameters: ImageParameters, format: ImageFormat) -> String {
        let digest = SHA256.hex(of: Array("\(sourceValidators)\n\(parameters.url.absoluteString)\n\(parameters.renderKey)\n\(format.rawValue)".utf8))
        return "\"" + digest.prefix(32) + "\""
    }

    /// The longer side to decode to: enough for the box unless the source's aspect ratio is
    /// extreme (then ``isLargeEnough(_:for:)`` sends it back for a full decode).
    static func decodeSide(_ parameters: ImageParameters) -> Int? {
        switch (parameters.width, parameters.height) {
        case (nil, nil): return nil
        case (let w?, let h?): return parameters.fit == .contain ? max(w, h) : 2 * max(w, h)
        case (let side?, nil), (nil, let side?): return 2 * side
        }
    }

    /// Whether a thumbnail-decoded `image` holds enough pixels for the resize asked for.
    static func isLargeEnough(_ image: DecodedImage, for parameters: ImageParameters) -> Bool {
        let width = Double(image.width), height = Double(image.height)
        switch (parameters.width, parameters.height) {
        case (nil, nil): return true
        case (let w?, nil): return width >= Double(w)
        case (nil, let h?): return height >= Double(h)
        case (let w?, let h?):
            switch parameters.fit {
            case .contain: return Double(w) / width <= 1 || Double(h) / height <= 1
            case .cover: return max(Double(w) / width, Double(h) / height) <= 1
            case .fill: return width >= Double(w) && height >= Double(h)
            }
        }
    }

    /// The resize for the box, `nil` for the original size. One side given: that side, the
    /// other from the aspect ratio (whatever `fit` says).
    static func resize(for parameters: ImageParameters, width: Int, height: Int) -> ResizeTransformer? {
        let unbounded = 1 << 30
        switch (parameters.width, parameters.height) {
        case (nil, nil):
            return nil
        case (let w?, nil):
            return ResizeTransformer(width: w, height: unbounded, mode: .fit, allowUpscaling: parameters.enlarge)
        case (nil, let h?):
            return ResizeTransformer(width: unbounded, height: h, mode: .fit, allowUpscaling: parameters.enlarge)
        case (let w?, let h?):
            let mode: ResizeTransformer.Mode = switch parameters.fit {
            case .contain: .fit
            case .cover: .fill
            case .fill: .exact
            }
            return ResizeTransformer(width: w, height: h, mode: mode, allowUpscaling: parameters.enlarge)
        }
    }
}
