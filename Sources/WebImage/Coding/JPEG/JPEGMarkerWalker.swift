/// The marker segments of a JPEG, in file order, read the way libjpeg's `next_marker` reads them:
/// the one walker behind the 1/8-scale decoder's header reader, the EXIF/XMP and ICC lookups,
/// Adobe detection, the declared-size and info readers and the plausibility check, so they all
/// agree on what a file's segments are.
///
/// The rules, all libjpeg's (jdmarker.c):
/// - The file starts with SOI (`FF D8`); otherwise there are no segments.
/// - Bytes other than 0xFF before a marker are stray and skipped (libjpeg warns and skips them).
///   So are `FF 00` pairs: a stuffed zero is no marker. The same rule carries the walk through a
///   scan's entropy-coded data to the marker after it, so callers that need the segments after the
///   first scan simply keep iterating.
/// - Any number of 0xFF fill bytes may precede a marker code.
/// - RST0–7, TEM, SOI and EOI stand alone: no length follows (``Segment/length`` is `nil`).
/// - A length below 2 (which cannot even cover itself) gives an empty payload and the walk goes on
///   after the length field, as libjpeg skips such a segment; the segment readers that need a
///   payload (SOF, DHT, DQT, SOS) treat it as malformed, as libjpeg does.
/// - A length running past the end yields the segment clipped to the data (``Segment/isTruncated``),
///   and the walk ends there; so does the data ending inside a marker. Nothing traps on any input.
/// - The walk ends after EOI.
struct JPEGMarkerWalker: Sequence, IteratorProtocol {
    /// Marker codes (the byte after 0xFF) this module reads.
    enum Marker {
        static let sof0: UInt8 = 0xC0, sof1: UInt8 = 0xC1, dht: UInt8 = 0xC4
        static let soi: UInt8 = 0xD8, eoi: UInt8 = 0xD9, sos: UInt8 = 0xDA, dqt: UInt8 = 0xDB, dri: UInt8 = 0xDD
        static let app1: UInt8 = 0xE1, app2: UInt8 = 0xE2, app14: UInt8 = 0xEE
        static let tem: UInt8 = 0x01
        static let restarts: ClosedRange<UInt8> = 0xD0...0xD7

        /// Whether `code` starts a frame (SOF0–SOF15), leaving out the three codes in that range
        /// that do not: DHT (`C4`), JPG (`C8`) and DAC (`CC`).
        static func isStartOfFrame(_ code: UInt8) -> Bool {
            (0xC0...0xCF).contains(code) && code != dht && code != 0xC8 && code != 0xCC
        }

        /// Whether `code` is a marker with no length field.
        static func isStandalone(_ code: UInt8) -> Bool {
            code == tem || restarts.contains(code) || code == soi || code == eoi
        }
    }

    /// One marker and its payload.
    struct Segment: Equatable {
        /// The marker code, e.g. `0xE1` for APP1.
        var marker: UInt8
        /// Offset of the first 0xFF before the marker code (fill bytes included).
        var start: Int
        /// The bytes after the length field: empty for a standalone marker or a length below 2,
        /// clipped to the data when the length runs past it. For SOS, the scan header (the
        /// entropy-coded data starts at `payload.upperBound`).
        var payload: Range<Int>
        /// The declared length (it counts its own two bytes), `nil` for a standalone marker.
        var length: Int?
        /// Whether the declared length runs past the end of the data.
        var isTruncated: Bool

        /// Whether the segment has a length field of at least 2 and lies wholly inside the data:
        /// what a reader of the segment's contents needs.
        var isComplete: Bool { (length ?? 0) >= 2 && !isTruncated }
    }

    private let bytes: UnsafeRawBufferPointer
    private var offset: Int
    private var isFinished: Bool

    /// Walks the segments of `bytes` after its SOI; none when it does not start with SOI.
    init(_ bytes: UnsafeRawBufferPointer) {
        self.bytes = bytes
        offset = 2
        isFinished = !(bytes.count >= 2 && bytes[0] == 0xFF && bytes[1] == Marker.soi)
    }

    /// The next segment, or `nil` after EOI, a truncated segment, or the end of the data.
    mutating func next() -> Segment? {
        guard !isFinished else { return nil }
        while offset < bytes.count {
            // Stray bytes (and `FF 00`) up to the next 0xFF are skipped, as libjpeg skips them.
            guard bytes[offset] == 0xFF else { offset += 1; continue }
            let start = offset
            guard let codeOffset = Self.markerCode(afterFillAt: offset, in: bytes) else { break }
            let code = bytes[codeOffset]
            offset = codeOffset + 1
            if code == 0x00 { continue }
            if Marker.isStandalone(code) {
                if code == Marker.eoi { isFinished = true }
                return Segment(marker: code, start: start, payload: offset..<offset, length: nil, isTruncated: false)
            }
            guard let length = bytes.bigEndianUInt16(at: offset).map(Int.init) else { break }
            let payloadStart = offset + 2
            // `length` is at most 65535, so no sum here can overflow.
            let payloadEnd = Swift.max(payloadStart, offset + length)
            if payloadEnd > bytes.count {
                isFinished = true
                return Segment(marker: code, start: start, payload: payloadStart..<bytes.count, length: length, isTruncated: true)
            }
            offset = payloadEnd
            return Segment(marker: code, start: start, payload: payloadStart..<payloadEnd, length: length, isTruncated: false)
        }
        isFinished = true
        return nil
    }

    /// The offset of the marker code after the 0xFF at `offset` and any 0xFF fill bytes after
    /// it, or `nil` when the data ends first. Shared with ``JPEGEntropyData``, which reads the
    /// markers inside a scan by the same rule.
    @inline(__always)
    static func markerCode(afterFillAt offset: Int, in bytes: UnsafeRawBufferPointer) -> Int? {
        var next = offset + 1
        while next < bytes.count, bytes[next] == 0xFF { next += 1 }
        return next < bytes.count ? next : nil
    }

    /// The bodies (after `signature`) of the complete `marker` segments before the first scan
    /// whose payload starts with `signature`, in file order. For example the APP1 `Exif\0\0`
    /// block, or every APP2 `ICC_PROFILE\0` chunk of an ICC profile (which then starts with its
    /// chunk number and count).
    static func payloads(of marker: UInt8, signature: [UInt8], in bytes: UnsafeRawBufferPointer) -> [UnsafeRawBufferPointer] {
        var found: [UnsafeRawBufferPointer] = []
        for segment in JPEGMarkerWalker(bytes) {
            if segment.marker == Marker.sos { break }
            guard segment.marker == marker, segment.isComplete, segment.payload.count >= signature.count,
                  bytes[segment.payload.prefix(signature.count)].elementsEqual(signature) else { continue }
            found.append(UnsafeRawBufferPointer(rebasing: bytes[(segment.payload.lowerBound + signature.count)..<segment.payload.upperBound]))
        }
        return found
    }
}
