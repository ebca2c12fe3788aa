import CWebP
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// WebP decoding and encoding with libwebp: lossy, lossless, alpha and animation.
///
/// Still images decode straight into the returned bitmap, and thumbnails use libwebp's own
/// scaling so the full-size bitmap never exists. Animations are composited by libwebp's
/// animation decoder. The EXIF orientation of extended files is reported, not applied.
package struct WebPCoder: ImageCoder {
    /// Creates the coder.
    package init() {}

    package func canDecode(_ data: Data) -> Bool {
        data.count >= 12 && data.starts(with: Array("RIFF".utf8)) && data[data.startIndex + 8..<data.startIndex + 12].elementsEqual("WEBP".utf8)
    }

    package func decode(_ data: Data, options: DecodeOptions) throws -> DecodedImage {
        guard !data.isEmpty else { throw WebImageError.emptyData }
        let image = try decodeKeepingColors(data, options: options)
        let profile = data.withUnsafeBytes { bytes in
            bytes.bindMemory(to: UInt8.self).baseAddress.flatMap { WebPICCProfile.read($0, count: bytes.count) }
        }
        return try ColorConversion.applying(profile, to: image, options: options)
    }

    private func decodeKeepingColors(_ data: Data, options: DecodeOptions) throws -> DecodedImage {
        try data.withUnsafeBytes { bytes -> DecodedImage in
            guard let base = bytes.bindMemory(to: UInt8.self).baseAddress else { throw WebImageError.emptyData }
            var features = WebPBitstreamFeatures()
            let status = WebPGetFeatures(base, bytes.count, &features)
            guard status == VP8_STATUS_OK else { throw Self.error(status) }
            let orientation = Self.orientation(base, count: bytes.count)
            if features.has_animation != 0 {
                var image = try WebPAnimationDecoder.decode(base, count: bytes.count, options: options)
                image.orientation = orientation
                return image
            }
            let target = try options.targetSize(width: Int(features.width), height: Int(features.height))
            var config = WebPDecoderConfig()
            guard WebPInitDecoderConfig(&config) != 0 else { throw WebImageError.corruptData("WebP: decoder version mismatch") }
            if (target.width, target.height) != (Int(features.width), Int(features.height)) {
                config.options.use_scaling = 1
                config.options.scaled_width = Int32(target.width)
                config.options.scaled_height = Int32(target.height)
            }
            let bitmap = try Bitmap(width: target.width, height: target.height) { buffer in
                config.output.colorspace = MODE_RGBA
                config.output.is_external_memory = 1
                config.output.u.RGBA.rgba = buffer.bindMemory(to: UInt8.self).baseAddress
                config.output.u.RGBA.stride = Int32(target.width * 4)
                config.output.u.RGBA.size = buffer.count
                let decoded = WebPDecode(base, bytes.count, &config)
                WebPFreeDecBuffer(&config.output)
                guard decoded == VP8_STATUS_OK else { throw Self.error(decoded) }
            }
            return DecodedImage(bitmap: bitmap, format: .webp, orientation: orientation, scale: options.scale,
                                hasAlpha: features.has_alpha != 0)
        }
    }

    package func canEncode(_ format: ImageFormat) -> Bool { format == .webp }

    /// Encodes lossy (`options.quality`) or lossless (`options.lossless`); an animated image
    /// becomes an animated WebP unless `options.firstFrameOnly`.
    package func encode(_ image: DecodedImage, format: ImageFormat, options: EncodeOptions) throws -> Data {
        guard format == .webp else { throw WebImageError.unsupportedFormat("WebPCoder encodes WebP only") }
        if image.isAnimated, !options.firstFrameOnly {
            let encoded = try WebPAnimationEncoder.encode(image, options: options)
            guard let profile = image.iccProfile else { return encoded }
            return try WebPICCProfile.embedding(profile, in: encoded)
        }
        let bitmap = image.bitmap
        var output: UnsafeMutablePointer<UInt8>?
        let size = bitmap.withUnsafeBytes { bytes in
            let pixels = bytes.bindMemory(to: UInt8.self).baseAddress
            return options.lossless
                ? WebPEncodeLosslessRGBA(pixels, Int32(bitmap.width), Int32(bitmap.height), Int32(bitmap.bytesPerRow), &output)
                : WebPEncodeRGBA(pixels, Int32(bitmap.width), Int32(bitmap.height), Int32(bitmap.bytesPerRow),
                                 Float(min(1, max(0, options.quality)) * 100), &output)
        }
        defer { WebPFree(output) }
        guard size > 0, let output else { throw WebImageError.encodingFailed("WebP encoder failed") }
        let encoded = Data(bytes: output, count: size)
        guard let profile = image.iccProfile else { return encoded }
        return try WebPICCProfile.embedding(profile, in: encoded)
    }

    static func error(_ status: VP8StatusCode) -> WebImageError {
        switch status {
        case VP8_STATUS_NOT_ENOUGH_DATA: .truncatedData("WebP: not enough data")
        case VP8_STATUS_OUT_OF_MEMORY: .tooLarge("WebP: out of memory")
        case VP8_STATUS_UNSUPPORTED_FEATURE: .unsupportedFormat("WebP: unsupported feature")
        default: .corruptData("WebP: bitstream error \(status.rawValue)")
        }
    }

    /// The orientation in an extended file's EXIF chunk.
    static func orientation(_ base: UnsafePointer<UInt8>, count: Int) -> ImageOrientation {
        var webPData = WebPData(bytes: base, size: count)
        guard let demuxer = WebPDemux(&webPData) else { return .up }
        defer { WebPDemuxDelete(demuxer) }
        var iterator = WebPChunkIterator()
        guard WebPDemuxGetChunk(demuxer, "EXIF", 1, &iterator) != 0 else { return .up }
        defer { WebPDemuxReleaseChunkIterator(&iterator) }
        guard let bytes = iterator.chunk.bytes, iterator.chunk.size > 0 else { return .up }
        return EXIFReader.orientation(inTIFF: Data(bytes: bytes, count: iterator.chunk.size)) ?? .up
    }
}
