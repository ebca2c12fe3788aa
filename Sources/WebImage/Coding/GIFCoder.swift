import CGIF
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// GIF decoding with giflib, every frame composited on a full canvas.
///
/// The file's blocks are walked first without decompressing anything (``GIFAnimationSource``),
/// so frames past the animation limits are never decoded and a frame's declared size never
/// becomes an allocation by itself; then each frame is decoded and composited in order by the
/// same cursor ``AnimatedImage`` uses for frames on demand. Thumbnails shrink each frame as it is
/// composed, so only one full-size canvas exists at a time.
///
/// Encoding (stills and animations, see ``GIFEncoder``) quantises each frame to at most 256
/// colours with ``ColorQuantizer``.
package struct GIFCoder: ImageCoder {
    /// The dithering the encoder's quantiser applies.
    package var dithering: ColorQuantizer.Dithering

    /// Creates the coder; the encoder does not dither unless asked.
    package init(dithering: ColorQuantizer.Dithering = .none) {
        self.dithering = dithering
    }

    package func canDecode(_ data: Data) -> Bool {
        data.count >= 6 && (data.starts(with: Array("GIF87a".utf8)) || data.starts(with: Array("GIF89a".utf8)))
    }

    package func decode(_ data: Data, options: DecodeOptions) throws -> DecodedImage {
        guard !data.isEmpty else { throw WebImageError.emptyData }
        let image = try AnimationDecoding.decodeAll(GIFAnimationSource(data: data, options: options), options: options)
        // An ICC profile (rare in GIFs) applies to every frame, like APNG's and WebP's.
        return try ColorConversion.applying(GIFICCProfile.read(data), to: image, options: options)
    }

    package func canEncode(_ format: ImageFormat) -> Bool { format == .gif }

    /// Encodes a still GIF, or an animated one (every frame, its delay and the loop count) unless
    /// `options.firstFrameOnly`. Quality and lossless do not apply: the palette is what GIF has.
    /// - Throws: ``WebImageError/tooLarge(_:)`` for a side over 65535 pixels (before anything is
    ///   allocated), ``WebImageError/encodingFailed(_:)`` for frames of different sizes.
    package func encode(_ image: DecodedImage, format: ImageFormat, options: EncodeOptions) throws -> Data {
        guard format == .gif else { throw WebImageError.unsupportedFormat("GIFCoder encodes GIF only") }
        return try GIFEncoder.encode(image, options: options, quantizer: ColorQuantizer(dithering: dithering))
    }

    static func error(code: Int32, reader: GIFReader) -> WebImageError {
        let message = GifErrorString(code).map { String(cString: $0) } ?? "GIF error \(code)"
        if reader.hitEnd || code == D_GIF_ERR_EOF_TOO_SOON { return .truncatedData("GIF: \(message)") }
        if code == D_GIF_ERR_NOT_ENOUGH_MEM || code == D_GIF_ERR_DATA_TOO_BIG { return .tooLarge("GIF: \(message)") }
        return .corruptData("GIF: \(message)")
    }
}
