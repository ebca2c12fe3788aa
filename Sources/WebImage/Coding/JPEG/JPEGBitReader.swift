/// Reads JPEG entropy-coded bits most significant first, holding the next 56 to 63 of them in a
/// register (F. Giesen's branchless refill), so that decoding a code costs one table read and one
/// shift on the critical path.
///
/// Reads up to 8 bytes past its position: the data must be followed by
/// ``JPEGEntropyData/padding`` bytes.
struct JPEGBitReader {
    /// The next bits, from the top down.
    private var buffer: UInt64 = 0
    /// How many bits of `buffer` are valid.
    private var available = 0
    /// The first byte not yet in `buffer` in full.
    private var next: UnsafePointer<UInt8>

    /// A reader at bit `position` of `data`.
    init(_ data: UnsafePointer<UInt8>, bit position: Int) {
        next = data + (position >> 3)
        refill()
        consume(position & 7)
    }

    /// The bit offset of the next unread bit from `base`.
    @inline(__always)
    func position(from base: UnsafePointer<UInt8>) -> Int { (next - base) &* 8 &- available }

    /// Tops `buffer` up to at least 56 valid bits.
    @inline(__always)
    private mutating func refill() {
        buffer |= UnsafeRawPointer(next).loadUnaligned(as: UInt64.self).bigEndian &>> UInt64(available)
        next += (63 &- available) &>> 3
        available |= 56
    }

    @inline(__always)
    private mutating func consume(_ count: Int) {
        buffer &<<= UInt64(count)
        available &-= count
    }

    /// The top `count` (1...16) bits as a signed magnitude (JPEG's EXTEND); consumes them.
    @inline(__always)
    private mutating func magnitude(_ count: Int) -> Int32 {
        let value = Int32(truncatingIfNeeded: buffer &>> UInt64(64 &- count))
        consume(count)
        return value < Int32(1) &<< Int32(count &- 1) ? value &- (Int32(1) &<< Int32(count)) &+ 1 : value
    }

    /// Decodes one symbol and consumes its code, refilling on the way.
    ///
    /// The table read uses the buffer from before the refill: every step leaves at least 29
    /// valid bits (56 after a refill, less at most 27 for a code and its magnitude: a 16-bit DC
    /// code with 11 magnitude bits; a new reader has 49), more than a lookup needs. So the refill's load runs beside the table read instead
    /// of in front of it, which shortens the chain of dependent operations from one code to the
    /// next by about a third. ``skipAC(_:)`` does the same with its own table.
    @inline(__always)
    private mutating func symbol(_ table: JPEGHuffmanTable.Tables) -> Int? {
        let entry = table.symbolLookup[Int(buffer &>> UInt64(64 - JPEGHuffmanTable.lookupBits))]
        refill()
        if entry != 0 {
            consume(Int(entry & 0xFF))
            return Int(entry &>> 8)
        }
        guard let long = table.decodeLong(buffer) else { return nil }
        consume(long.length)
        return Int(long.symbol)
    }

    /// Decodes a block's DC difference and adds it to `prediction`.
    @inline(__always)
    mutating func decodeDC(_ table: JPEGHuffmanTable.Tables, into prediction: inout Int32) -> Bool {
        guard let size = symbol(table), size <= 11 else { return false }
        if size > 0 { prediction &+= magnitude(size) }
        return true
    }

    /// Walks past a block's AC codes without decoding their values. Like ``symbol(_:)``, each
    /// table read uses the buffer from before the step's refill.
    ///
    /// Each step takes all the codes of its skip entry without asking whether an earlier one
    /// ends the block: that choice would sit on the chain from one table read to the next. Where
    /// one did end it (it filled coefficient 63 without an end of block), the reader goes back
    /// to the step's start and takes the codes up to that one: once a block at most, at its end.
    @inline(__always)
    mutating func skipAC(_ table: JPEGHuffmanTable.Tables) -> Bool {
        var step = 1
        while step < 64 {
            let entry = table.skip[Int(buffer &>> UInt64(64 - JPEGHuffmanTable.skipBits))]
            let before = self, start = step
            refill()
            if entry != 0 {
                consume(Int((entry &>> 32) & 0xFF))
                step &+= Int((entry &>> 40) & 0xFF)
                if step >= 64 { takeCodesUpToTheBlockEnd(entry, from: start, before: before, step: &step) }
                continue
            }
            // No skip entry: a code longer than `skipBits`, or a shorter one whose symbol asks for
            // more magnitude bits than a baseline JPEG holds. The long-code search starts past
            // `lookupBits` and would read a short code as some longer one (found by
            // JPEGEighthScaleFuzzer: a wrong skip, then a DC off by 17 from there on), so a
            // short code ends the decode here, as its size would.
            guard table.symbolLookup[Int(buffer &>> UInt64(64 - JPEGHuffmanTable.lookupBits))] == 0,
                  let long = table.decodeLong(buffer) else { return false }
            let run = Int(long.symbol >> 4), size = Int(long.symbol & 15)
            guard size <= 10 else { return false }
            consume(long.length + size)
            step &+= size != 0 ? run + 1 : (run == 15 ? 16 : 64)
        }
        return true
    }

    /// After a skip step that ended the block: if a code before the entry's last one ended it,
    /// goes back to the step's start (`before`, at zigzag position `start`) and takes the codes
    /// up to that one alone. The ones after it are the next block's.
    @inline(__always)
    private mutating func takeCodesUpToTheBlockEnd(_ entry: UInt64, from start: Int, before: JPEGBitReader, step: inout Int) {
        let all = entry &>> 32 & 0xFFFF
        for codes in 0..<2 {
            let taken = Int((entry &>> UInt64(16 * codes)) & 0xFFFF)
            let end = start &+ taken &>> 8
            guard end < 64 else {
                // Most blocks end on their entry's last code (an end of block takes no more).
                guard taken != all else { return }
                self = before
                refill()
                consume(taken & 0xFF)
                step = end
                return
            }
        }
    }

    /// Decodes a block's AC coefficients into the ten sums of the 2×2 inverse DCT's first pass
    /// (see ``JPEGReducedIDCT/twoByTwoFirstPass(sums:into:)``): each coefficient times its
    /// quantizer and its factor, added to its sum. `quantizers`, `factors` and `sums` are
    /// indexed by zigzag position.
    ///
    /// `false` also for a dequantized coefficient outside the 16 bits that libjpeg-turbo's SIMD
    /// 2×2 inverse DCT multiplies in (`pmullw` keeps the low half; its C code keeps all of it):
    /// the two builds then give different pixels, so the image is left to libjpeg-turbo.
    @inline(__always)
    mutating func decodeAC(_ table: JPEGHuffmanTable.Tables, quantizers: UnsafePointer<Int>, factors: UnsafePointer<Int>,
                           sums sumIndices: UnsafePointer<UInt8>, into sums: UnsafeMutablePointer<Int>) -> Bool {
        sums.update(repeating: 0, count: 10)
        var step = 1
        while step < 64 {
            guard let symbol = symbol(table) else { return false }
            let run = symbol &>> 4, size = symbol & 15
            if size == 0 {
                if run != 15 { break }
                step &+= 16
                continue
            }
            guard size <= 10 else { return false }
            step &+= run
            let dequantized = Int(magnitude(size)) &* quantizers[step]
            guard dequantized == Int(Int16(truncatingIfNeeded: dequantized)) else { return false }
            sums[Int(sumIndices[step])] &+= dequantized &* factors[step]
            step &+= 1
        }
        return true
    }
}
