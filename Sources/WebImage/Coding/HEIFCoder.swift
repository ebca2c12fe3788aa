import CHEIF
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// HEIC/HEIF decoding with libheif (HEVC through libde265, as Debian builds it): the primary
/// image, its alpha, 8 to 12 bits reduced to RGBA8.
///
/// - Transformations: libheif applies the file's `clap`, `irot` and `imir`, which HEIF makes
///   part of the image (they take precedence over any EXIF orientation in the file), so the
///   image is reported as ``ImageOrientation/up``, as `heif-convert` and browsers show it.
/// - Thumbnails: when ``DecodeOptions/maxPixelSize`` is set and the file carries a thumbnail
///   image at least that big, the thumbnail is decoded instead of the primary image and
///   resampled to the requested size; otherwise the primary image is decoded and resampled,
///   from a half-size RGBA image made straight from its YCbCr planes when the target is at
///   most half the size (``HEIFHalfSizeDecode``).
/// - Colour: YUV becomes RGB by the file's `nclx` matrix; then the ICC profile of its `colr` box,
///   or its nclx primaries and transfer (Display P3, BT.2020, PQ and HLG tone-mapped), are
///   converted to sRGB (see ``ColorConversion``) unless ``DecodeOptions/keepsColors``.
/// - Limits: the declared size is checked against ``DecodeOptions/pixelLimit`` before decoding.
///   Image sequences (`msf1`) decode to their primary still image; libheif 1.15 reads no tracks.
package struct HEIFCoder: ImageCoder {
    /// Creates the coder.
    package init() {}

    /// libheif is opened, and its plugins registered, once per process before the first decode.
    static let initialized: Bool = {
        CodecLibrary.heif.isAvailable && heif_init(nil).code == heif_error_Ok
    }()

    package func canDecode(_ data: Data) -> Bool {
        ImageFormat.detect(data) == .heic
    }

    package func decode(_ data: Data, options: DecodeOptions) throws -> DecodedImage {
        guard !data.isEmpty else { throw WebImageError.emptyData }
        guard Self.initialized else {
            try CodecLibrary.heif.require()
            throw WebImageError.unsupportedFormat("HEIF: libheif did not initialize")
        }
        guard heif_have_decoder_for_format(heif_compression_HEVC) != 0 else {
            throw WebImageError.unsupportedFormat("HEIF: this libheif has no HEVC decoder")
        }
        guard let context = heif_context_alloc() else { throw WebImageError.tooLarge("HEIF: cannot create a context") }
        defer { heif_context_free(context) }
        return try data.withUnsafeBytes { bytes -> DecodedImage in
            guard let base = bytes.baseAddress else { throw WebImageError.emptyData }
            guard !HEIFItemProperties.hasAV1Items(bytes) else {
                throw WebImageError.unsupportedFormat("HEIF: AV1-coded images are decoded as AVIF only")
            }
            // The context reads from `bytes` without copying: it lives only inside this closure.
            try Self.check(heif_context_read_from_memory_without_copy(context, base, bytes.count, nil))
            var primary: OpaquePointer?
            try Self.check(heif_context_get_primary_image_handle(context, &primary))
            guard let primary else { throw WebImageError.corruptData("HEIF: no primary image") }
            defer { heif_image_handle_release(primary) }
            // The coded size (ispe) is what the decoder allocates, before any crop or turn.
            let codedWidth = Int(heif_image_handle_get_ispe_width(primary)), codedHeight = Int(heif_image_handle_get_ispe_height(primary))
            try options.checkFullSizeCanvas(width: codedWidth, height: codedHeight)
            let width = Int(heif_image_handle_get_width(primary)), height = Int(heif_image_handle_get_height(primary))
            let target = try options.targetSize(width: width, height: height)
            let hasAlpha = heif_image_handle_has_alpha_channel(primary) != 0
            let isFullSize = (target.width, target.height) == (width, height)
            let decoded: (bitmap: Bitmap, profile: Data?)
            if !isFullSize, let thumbnail = Self.thumbnail(of: primary, atLeast: max(target.width, target.height)) {
                defer { heif_image_handle_release(thumbnail) }
                decoded = try Self.decode(thumbnail, profile: Self.colorProfile(primary), convertingRows: false)
            } else if !isFullSize, target.width <= (width + 1) / 2, target.height <= (height + 1) / 2, HEIFHalfSizeDecode.applies(to: primary),
                      let halved = try Self.decodeHalfSize(primary, profile: Self.colorProfile(primary)) {
                decoded = halved
            } else {
                // At full size the rows are converted as they are copied out of libheif.
                decoded = try Self.decode(primary, profile: Self.colorProfile(primary), convertingRows: isFullSize && !options.keepsColors)
            }
            var bitmap = decoded.bitmap
            let profile = decoded.profile
            if (target.width, target.height) != (bitmap.width, bitmap.height) {
                bitmap = try Resampler.resize(bitmap, width: target.width, height: target.height, options: options)
            }
            if !isFullSize, !options.keepsColors, let transform = ColorConversion.rgbaTransform(for: profile) {
                bitmap = try ColorConversion.convert(bitmap, with: transform, parallel: options.parallelDecoding)
            }
            var image = DecodedImage(bitmap: bitmap, format: .heic, orientation: .up, scale: options.scale, hasAlpha: hasAlpha)
            if options.keepsColors { image.iccProfile = ColorConversion.keptProfile(profile) }
            return image
        }
    }

    /// The smallest embedded thumbnail whose longer side is at least `side`, if any.
    static func thumbnail(of handle: OpaquePointer, atLeast side: Int) -> OpaquePointer? {
        let count = Int(heif_image_handle_get_number_of_thumbnails(handle))
        guard count > 0, count <= 64 else { return nil }
        var ids = [heif_item_id](repeating: 0, count: count)
        let listed = Int(heif_image_handle_get_list_of_thumbnail_IDs(handle, &ids, Int32(count)))
        var best: (handle: OpaquePointer, side: Int)?
        for id in ids.prefix(listed) {
            var thumbnail: OpaquePointer?
            guard heif_image_handle_get_thumbnail(handle, id, &thumbnail).code == heif_error_Ok, let thumbnail else { continue }
            let longer = max(Int(heif_image_handle_get_width(thumbnail)), Int(heif_image_handle_get_height(thumbnail)))
            if longer >= side, longer < best?.side ?? .max {
                if let previous = best { heif_image_handle_release(previous.handle) }
                best = (thumbnail, longer)
            } else {
                heif_image_handle_release(thumbnail)
            }
        }
        return best?.handle
    }

    /// The colour space of the primary image: its ICC profile (`rICC`/`prof`) when it has one,
    /// else a profile made from its nclx primaries and transfer; `nil` for sRGB or unspecified.
    /// (An embedded thumbnail is shown in its primary image's colours, as the format intends.)
    static func colorProfile(_ handle: OpaquePointer) -> Data? {
        if let embedded = embeddedProfile(handle) { return embedded }
        guard let nclx = takeNCLX({ heif_image_handle_get_nclx_color_profile(handle, $0) }) else { return nil }
        return ColorProfileBuilder.nclxProfile(primaries: Int(nclx.color_primaries.rawValue),
                                               transfer: Int(nclx.transfer_characteristics.rawValue))
    }

    /// The ICC profile the image's `colr` box embeds (`rICC`/`prof`), or `nil`; profiles over
    /// ``ICCTransformCache/maximumProfileSize`` are not read.
    static func embeddedProfile(_ handle: OpaquePointer) -> Data? {
        let size = heif_image_handle_get_raw_color_profile_size(handle)
        guard size > 0, size <= ICCTransformCache.maximumProfileSize else { return nil }
        var bytes = [UInt8](repeating: 0, count: size)
        guard heif_image_handle_get_raw_color_profile(handle, &bytes).code == heif_error_Ok else { return nil }
        return Data(bytes)
    }

    /// The nclx values one of libheif's nclx getters hands out, the struct freed whatever the
    /// result: libheif 1.15 allocates it into `out` before checking its values and returns an
    /// error with the allocation still there (DecodeFuzzer's LeakSanitizer found 52 bytes lost per
    /// file with unsupported primaries).
    static func takeNCLX(_ get: (UnsafeMutablePointer<UnsafeMutablePointer<heif_color_profile_nclx>?>) -> heif_error)
        -> heif_color_profile_nclx? {
        var nclx: UnsafeMutablePointer<heif_color_profile_nclx>?
        let error = get(&nclx)
        defer { if let nclx { heif_nclx_color_profile_free(nclx) } }
        guard error.code == heif_error_Ok, let nclx else { return nil }
        return nclx.pointee
    }

    /// Decodes `handle` at half its size (see ``HEIFHalfSizeDecode``) with its colour profile, or
    /// `nil` when the decoded planes are not ones that path converts.
    private static func decodeHalfSize(_ handle: OpaquePointer, profile boxProfile: Data?) throws -> (bitmap: Bitmap, profile: Data?)? {
        guard let decodingOptions = heif_decoding_options_alloc() else { throw WebImageError.tooLarge("HEIF: out of memory") }
        defer { heif_decoding_options_free(decodingOptions) }
        var image: OpaquePointer?
        // libheif 1.15 turns "undefined" (the decoder's own layout) into RGB, so 4:2:0 is asked for:
        // HEVC's usual layout, handed out as decoded; other layouts are converted to it.
        try check(heif_decode_image(handle, &image, heif_colorspace_YCbCr, heif_chroma_420, decodingOptions))
        guard let image else { throw WebImageError.corruptData("HEIF: no image decoded") }
        defer { heif_image_release(image) }
        let nclx = takeNCLX { heif_image_get_nclx_color_profile(image, $0) }
        guard let bitmap = try HEIFHalfSizeDecode.bitmap(of: image, nclx: nclx) else { return nil }
        let profile = boxProfile ?? nclx.flatMap {
            ColorProfileBuilder.nclxProfile(primaries: Int($0.color_primaries.rawValue),
                                            transfer: Int($0.transfer_characteristics.rawValue))
        }
        return (bitmap, profile)
    }

    /// Decodes one image handle to RGBA8, transformations applied, and returns it with its colour
    /// profile: `profile` (from the `colr` box), else the nclx values of the HEVC stream itself
    /// (its VUI, where `heif-enc` puts them). With `convertingRows`, the rows are converted to
    /// sRGB as they are copied out of libheif.
    private static func decode(_ handle: OpaquePointer, profile boxProfile: Data?, convertingRows: Bool) throws -> (bitmap: Bitmap, profile: Data?) {
        guard let decodingOptions = heif_decoding_options_alloc() else { throw WebImageError.tooLarge("HEIF: out of memory") }
        defer { heif_decoding_options_free(decodingOptions) }
        decodingOptions.pointee.convert_hdr_to_8bit = 1
        var image: OpaquePointer?
        try check(heif_decode_image(handle, &image, heif_colorspace_RGB, heif_chroma_interleaved_RGBA, decodingOptions))
        guard let image else { throw WebImageError.corruptData("HEIF: no image decoded") }
        defer { heif_image_release(image) }
        let width = Int(heif_image_get_width(image, heif_channel_interleaved))
        let height = Int(heif_image_get_height(image, heif_channel_interleaved))
        var profile = boxProfile
        if profile == nil, let nclx = takeNCLX({ heif_image_get_nclx_color_profile(image, $0) }) {
            profile = ColorProfileBuilder.nclxProfile(primaries: Int(nclx.color_primaries.rawValue),
                                                      transfer: Int(nclx.transfer_characteristics.rawValue))
        }
        let transform = convertingRows ? ColorConversion.rgbaTransform(for: profile) : nil
        var stride: Int32 = 0
        guard let plane = heif_image_get_plane_readonly(image, heif_channel_interleaved, &stride),
              width > 0, height > 0, Int(stride) >= width * 4 else {
            throw WebImageError.corruptData("HEIF: decoded image has no RGBA plane")
        }
        let bitmap = try Bitmap(width: width, height: height) { buffer in
            guard let target = buffer.baseAddress else { return }
            let rowBytes = width * 4
            for row in 0..<height {
                if let transform {
                    transform.run(plane + row * Int(stride), target + row * rowBytes, pixelCount: width)
                } else {
                    (target + row * rowBytes).copyMemory(from: plane + row * Int(stride), byteCount: rowBytes)
                }
            }
        }
        return (bitmap, profile)
    }

    static func check(_ error: heif_error) throws {
        guard error.code != heif_error_Ok else { return }
        let text = "HEIF: " + (error.message.map { String(cString: $0) } ?? "error \(error.code.rawValue)")
        switch error.code {
        case heif_error_Memory_allocation_error: throw WebImageError.tooLarge(text)
        case heif_error_Unsupported_feature, heif_error_Unsupported_filetype: throw WebImageError.unsupportedFormat(text)
        default:
            if error.subcode == heif_suberror_Security_limit_exceeded { throw WebImageError.tooLarge(text) }
            if error.subcode == heif_suberror_End_of_data { throw WebImageError.truncatedData(text) }
            throw WebImageError.corruptData(text)
        }
    }
}
