import CHEIF
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// ``ImageInfo`` for a HEIC/HEIF, from libheif's handle of the primary image (boxes only; no
/// HEVC decoder is needed or run): the size libheif decodes to, with `clap`, `irot` and `imir`
/// applied as ``HEIFCoder`` shows the image (so the orientation is ``ImageOrientation/up``),
/// whether it has an alpha image, and its ICC profile (`rICC`/`prof`). libheif 1.15 reads no
/// tracks, so an image sequence (`msf1`) reports its primary still image: one frame.
enum HEIFInfoReader {
    static func read(_ data: Data) throws -> ImageInfo {
        guard HEIFCoder.initialized else {
            try CodecLibrary.heif.require()
            throw WebImageError.unsupportedFormat("HEIF: libheif did not initialize")
        }
        guard let context = heif_context_alloc() else { throw WebImageError.tooLarge("HEIF: cannot create a context") }
        defer { heif_context_free(context) }
        return try data.withUnsafeBytes { bytes throws -> ImageInfo in
            guard let base = bytes.baseAddress else { throw WebImageError.emptyData }
            // The context reads from `bytes` without copying: it lives only inside this closure.
            try HEIFCoder.check(heif_context_read_from_memory_without_copy(context, base, bytes.count, nil))
            var primary: OpaquePointer?
            try HEIFCoder.check(heif_context_get_primary_image_handle(context, &primary))
            guard let primary else { throw WebImageError.corruptData("HEIF: no primary image") }
            defer { heif_image_handle_release(primary) }
            let profile = HEIFCoder.embeddedProfile(primary)
            return ImageInfo(format: .heic, width: Int(heif_image_handle_get_width(primary)),
                             height: Int(heif_image_handle_get_height(primary)), frames: 1, orientation: .up,
                             hasAlpha: heif_image_handle_has_alpha_channel(primary) != 0, bytes: bytes.count,
                             colorProfile: profile.flatMap(ICCProfileDescription.description(of:)))
        }
    }
}
