/// Refuses a JPEG whose compressed data is far too small for the size its header declares, before
/// any pixel memory is taken: the decompression-bomb check.
///
/// A truncated JPEG still decodes (libjpeg fills what is missing with grey, as browsers and
/// Pillow show it), so "the data ran out" cannot be the refusal; otherwise a 200-byte header
/// declaring 10000×10000 would get a 400 MB bitmap written in full. The rule instead is a floor
/// that every complete file meets: the full-resolution component alone has ⌈W/8⌉·⌈H/8⌉ blocks,
/// and a Huffman-coded block needs at least one bit for its DC code (a sequential block needs
/// two: DC and end-of-block; a progressive file's first DC scan one per block; no run of
/// blocks shares a code). So a file whose bytes from its first scan on hold fewer bits than that
/// cannot be a whole image and is refused; a truncated file above the floor decodes, and then
/// costs no more memory than some complete file of the same size would. That bounds the output
/// at 4 bytes per pixel ÷ (1 bit ÷ 64 pixels) = 2048 bytes of bitmap per byte of file.
///
/// Arithmetic-coded JPEGs have no such floor (a flat image costs a small fraction of a bit per
/// block), so the same rule refuses the rare arithmetic file of a huge flat image: the price of
/// bounding what a tiny file may cost.
enum JPEGDataPlausibility {
    /// Throws ``WebImageError/truncatedData(_:)`` when `bytes` is too small for a `width` ×
    /// `height` JPEG.
    static func check(_ bytes: UnsafeRawBufferPointer, width: Int, height: Int) throws {
        guard width > 0, height > 0 else { return }
        let blocks = ((width + 7) / 8).multipliedReportingOverflow(by: (height + 7) / 8)
        let neededBytes = blocks.overflow ? Int.max : (blocks.partialValue + 7) / 8
        // Headers do not count: from the first scan's marker on (everything, if none is found).
        let available = bytes.count - (firstScanOffset(bytes) ?? 0)
        guard available >= neededBytes else {
            throw WebImageError.truncatedData(
                "JPEG of \(width)×\(height) holds \(available) bytes of image data; a complete one needs at least \(neededBytes)")
        }
    }

    /// The offset of the first SOS marker (its first 0xFF, fill bytes included), or `nil`.
    static func firstScanOffset(_ bytes: UnsafeRawBufferPointer) -> Int? {
        JPEGMarkerWalker(bytes).first { $0.marker == JPEGMarkerWalker.Marker.sos }?.start
    }
}
