import CWebP
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A still WebP (lossy or lossless) decoded while it downloads, with libwebp's incremental
/// decoder (`WebPIDecoder`): each byte is decoded once, straight into a canvas of the target size
/// (libwebp scales thumbnails as it decodes), and each partial image shows the rows decoded so
/// far, the rest transparent. Animated WebPs show no partial images. The final image
/// (`isComplete`) is ``WebPCoder``'s one-shot decode of the whole file.
///
/// The declared size is checked against the pixel limit before libwebp or the canvas allocate.
final class WebPIncrementalDecoder: CancellableIncrementalDecoder {
    let cancellation = DecodeCancellation()

    private let options: DecodeOptions
    /// libwebp keeps pointers into the configuration for the decoder's life, so it has a fixed address.
    private let config = UnsafeMutablePointer<WebPDecoderConfig>.allocate(capacity: 1)
    private var decoder: OpaquePointer?
    private var canvas: PartialCanvas?
    private var profile: Data?
    private var hasAlpha = false
    /// Bytes handed to libwebp so far.
    private var fed = 0
    private var rowsShown = 0
    /// Set when the file shows no partial images (animated) or decoding ended.
    private var idle = false

    init(options: DecodeOptions) {
        self.options = options
        config.initialize(to: WebPDecoderConfig())
    }

    deinit {
        if let decoder { WebPIDelete(decoder) }
        config.deinitialize(count: 1)
        config.deallocate()
    }

    func update(with data: Data, isComplete: Bool) throws -> DecodedImage? {
        try cancellation.check()
        if isComplete { return try WebPCoder().decode(data, options: options) }
        guard !idle else { return nil }
        guard data.count >= fed else { throw WebImageError.corruptData("WebP: the data shrank between updates") }
        return try data.withUnsafeBytes { bytes -> DecodedImage? in
            guard let base = bytes.bindMemory(to: UInt8.self).baseAddress else { return nil }
            if decoder == nil, try !start(base, count: bytes.count) { return nil }
            guard let decoder, let canvas else { return nil }
            let status = WebPIAppend(decoder, base + fed, bytes.count - fed)
            fed = bytes.count
            guard status == VP8_STATUS_OK || status == VP8_STATUS_SUSPENDED else {
                idle = true
                throw WebPCoder.error(status)
            }
            try cancellation.check()
            var lastRow: Int32 = 0
            guard WebPIDecGetRGB(decoder, &lastRow, nil, nil, nil) != nil else { return nil }
            let rows = min(Int(lastRow), canvas.height)
            guard rows > rowsShown else { return nil }
            rowsShown = rows
            if status == VP8_STATUS_OK { idle = true }
            let image = DecodedImage(bitmap: try canvas.snapshot(rows: rows), format: .webp, scale: options.scale,
                                     hasAlpha: hasAlpha || rows < canvas.height)
            return try ColorConversion.applying(profile, to: image, options: options)
        }
    }

    /// Sets libwebp up once the header is in: `false` while it is not (or for an animation).
    private func start(_ base: UnsafePointer<UInt8>, count: Int) throws -> Bool {
        var features = WebPBitstreamFeatures()
        let status = WebPGetFeatures(base, count, &features)
        if status == VP8_STATUS_NOT_ENOUGH_DATA { return false }
        guard status == VP8_STATUS_OK else { throw WebPCoder.error(status) }
        if features.has_animation != 0 {
            idle = true
            return false
        }
        let width = Int(features.width), height = Int(features.height)
        let target = try options.targetSize(width: width, height: height)
        guard WebPInitDecoderConfig(config) != 0 else { throw WebImageError.corruptData("WebP: decoder version mismatch") }
        if (target.width, target.height) != (width, height) {
            config.pointee.options.use_scaling = 1
            config.pointee.options.scaled_width = Int32(target.width)
            config.pointee.options.scaled_height = Int32(target.height)
        }
        let canvas = try PartialCanvas(width: target.width, height: target.height)
        config.pointee.output.colorspace = MODE_RGBA
        config.pointee.output.is_external_memory = 1
        config.pointee.output.u.RGBA.rgba = canvas.bytes.baseAddress?.assumingMemoryBound(to: UInt8.self)
        config.pointee.output.u.RGBA.stride = Int32(canvas.bytesPerRow)
        config.pointee.output.u.RGBA.size = canvas.bytes.count
        guard let decoder = WebPIDecode(nil, 0, config) else { throw WebImageError.tooLarge("WebP: cannot create a decoder") }
        self.decoder = decoder
        self.canvas = canvas
        hasAlpha = features.has_alpha != 0
        profile = WebPICCProfile.read(base, count: count)
        return true
    }
}

extension WebPCoder {
    /// A ``WebPIncrementalDecoder`` for WebP data.
    public func makeIncrementalDecoder(for format: ImageFormat, options: DecodeOptions) -> (any IncrementalImageDecoder)? {
        format == .webp ? WebPIncrementalDecoder(options: options) : nil
    }
}
