/// The item property boxes of a HEIF file (`meta` → `iprp` → `ipco`), read without libheif: which
/// codings its images use.
///
/// libheif picks a decoder by each item's coding, so a HEIF container holding AV1 (AVIF's coding
/// without AVIF's brands, which the format sniffing calls HEIF) would reach libheif's dav1d plugin.
/// That plugin leaks on some broken streams (libheif issue 1753 reports the same from its own
/// fuzzing), and libheif 1.15 ignores a named decoder in its decoding options; AVIF is libavif's
/// job. ``HEIFCoder`` refuses files with any AV1-coded item (a thumbnail too: it may decode one).
enum HEIFItemProperties {
    /// Whether the properties hold an AV1 configuration (`av1C`).
    static func hasAV1Items(_ bytes: UnsafeRawBufferPointer) -> Bool {
        propertyTypes(bytes).contains("av1C")
    }

    /// The four-character types of the boxes in `meta/iprp/ipco` (empty when there are none).
    static func propertyTypes(_ bytes: UnsafeRawBufferPointer) -> Set<String> {
        // `meta` is a full box: its children start after a version and flags word.
        guard let meta = boxes(in: 0..<bytes.count, of: bytes).first(where: { $0.type == "meta" }),
              meta.payload.count >= 4,
              let properties = boxes(in: meta.payload.lowerBound + 4..<meta.payload.upperBound, of: bytes)
                .first(where: { $0.type == "iprp" }),
              let container = boxes(in: properties.payload, of: bytes).first(where: { $0.type == "ipco" }) else { return [] }
        return Set(boxes(in: container.payload, of: bytes).map(\.type))
    }

    /// The boxes laid end to end in `range`: each one's type and payload. Stops at the first box
    /// whose size does not fit (a hostile size never reads past `range`) and after 4096 boxes.
    static func boxes(in range: Range<Int>, of bytes: UnsafeRawBufferPointer) -> [(type: String, payload: Range<Int>)] {
        var found: [(type: String, payload: Range<Int>)] = []
        var offset = range.lowerBound
        while offset <= range.upperBound - 8, found.count < 4096, let size32 = bytes.bigEndianUInt32(at: offset).map(Int.init) {
            let type = String(decoding: bytes[offset + 4..<offset + 8], as: UTF8.self)
            var header = 8
            let size: Int
            switch size32 {
            case 0: size = range.upperBound - offset
            case 1:
                guard offset <= range.upperBound - 16, let large = bytes.bigEndianUInt64(at: offset + 8),
                      large <= UInt64(range.upperBound - offset) else { return found }
                size = Int(large)
                header = 16
            default: size = size32
            }
            guard size >= header, size <= range.upperBound - offset else { return found }
            found.append((type, offset + header..<offset + size))
            offset += size
        }
        return found
    }
}
