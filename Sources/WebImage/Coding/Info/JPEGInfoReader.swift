#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// ``ImageInfo`` for a JPEG: the first frame header's size (``FormatDetection/declaredSize(of:)``),
/// the EXIF or XMP orientation (``EXIFReader``) and the APP2 ICC profile (``JPEGICCProfile``),
/// all from the segments before the first scan; the entropy-coded data is never read, so a file
/// cut short after its frame header still answers.
enum JPEGInfoReader {
    static func read(_ data: Data) throws -> ImageInfo {
        guard let size = FormatDetection.declaredSize(of: data) else { throw sizeError(data) }
        let profile = JPEGICCProfile.read(data)
        return ImageInfo(format: .jpeg, width: size.width, height: size.height, frames: 1,
                         orientation: EXIFReader.orientation(inJPEG: data) ?? .up, hasAlpha: false,
                         bytes: data.count, colorProfile: profile.flatMap(ICCProfileDescription.description(of:)))
    }

    /// Why no size was read: a scan or the end of the image before any frame header, or a frame
    /// header declaring an empty side, is corrupt; data ending first is truncated.
    private static func sizeError(_ data: Data) -> WebImageError {
        data.withUnsafeBytes { bytes -> WebImageError in
            for segment in JPEGMarkerWalker(bytes) {
                switch segment.marker {
                case JPEGMarkerWalker.Marker.sos, JPEGMarkerWalker.Marker.eoi:
                    return .corruptData("JPEG: no frame header before the image data")
                case let marker where JPEGMarkerWalker.Marker.isStartOfFrame(marker):
                    if segment.payload.count < 5, segment.isTruncated { return .truncatedData("JPEG: the data ends inside the frame header") }
                    return .corruptData("JPEG: the frame header is short or declares an empty side")
                default:
                    continue
                }
            }
            return .truncatedData("JPEG: the data ends before the frame header")
        }
    }
}
