/// The chunks of a PNG, in file order, walked by their lengths only (no CRC is checked and no
/// chunk is inflated): the one walker behind format sniffing (`acTL` before `IDAT`), the APNG
/// decoder's chunk list and ``ImageInfo``'s PNG reader.
///
/// Starts after the 8-byte signature. A chunk whose body (plus its CRC) runs past the end of the
/// data is the last one yielded, its body clipped to the data, and sets ``isTruncated`` (as
/// ``JPEGMarkerWalker`` yields a truncated segment); so does a length field cut short (nothing
/// yielded) or a length above 2³¹ − 1, which PNG forbids. Every step moves forward by at least
/// 12 bytes, so the walk is bounded by the data's size.
struct PNGChunkWalker: Sequence, IteratorProtocol {
    /// One chunk: its four-character type and the range of its body in the walked bytes.
    struct Chunk: Equatable {
        var type: String
        var body: Range<Int>
        /// `false` for the last chunk of a truncated walk, whose body is clipped to the data.
        var isComplete = true
    }

    private let bytes: UnsafeRawBufferPointer
    private var offset = 8
    private var isFinished = false
    /// Whether the walk stopped at a chunk running past the end of the data (or a malformed length)
    /// rather than after `IEND` or at the exact end of the data. Set once ``next()`` returned the
    /// last chunk it will.
    private(set) var isTruncated = false

    /// Walks the chunks of `bytes`, a PNG file from its signature on.
    init(_ bytes: UnsafeRawBufferPointer) {
        self.bytes = bytes
    }

    /// The next chunk, or `nil` after `IEND`, at the end of the data, or at a chunk that does not fit.
    mutating func next() -> Chunk? {
        guard !isFinished, offset < bytes.count else {
            isFinished = true
            return nil
        }
        guard bytes.count - offset >= 8, let length = bytes.bigEndianUInt32(at: offset).map(Int.init) else { return finish(truncated: true) }
        guard length <= Int(Int32.max) else { return finish(truncated: true) }
        let type = String(decoding: bytes[offset + 4..<offset + 8], as: UTF8.self)
        let bodyStart = offset + 8
        // The body and its 4-byte CRC must lie inside the data; `length` < 2³¹, so nothing overflows.
        guard length + 4 <= bytes.count - bodyStart else {
            isFinished = true
            isTruncated = true
            return Chunk(type: type, body: bodyStart..<Swift.min(bodyStart + length, bytes.count), isComplete: false)
        }
        offset = bodyStart + length + 4
        if type == "IEND" { isFinished = true }
        return Chunk(type: type, body: bodyStart..<bodyStart + length)
    }

    private mutating func finish(truncated: Bool) -> Chunk? {
        isFinished = true
        isTruncated = truncated
        return nil
    }
}
