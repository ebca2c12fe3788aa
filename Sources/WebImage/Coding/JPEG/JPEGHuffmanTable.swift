/// One Huffman table from a JPEG DHT segment, with the lookup tables the 1/8-scale decoder reads.
///
/// Codes of up to ``lookupBits`` bits resolve in one table read; longer ones go through the
/// canonical-code search in ``Tables/decodeLong(_:)``. The decoder's inner loop reads them
/// through a ``Tables`` of plain pointers, with no reference counting.
struct JPEGHuffmanTable: Sendable {
    /// Bits of the next input looked up at once.
    static let lookupBits = 10
    /// Bits of the next input looked up at once for skipping AC coefficients, up to three codes.
    static let skipBits = 11

    /// Pointers to a table's arrays, valid within ``withTables(_:)``.
    struct Tables {
        /// Per `lookupBits`-bit prefix: `symbol << 8 | code length`, or 0 when the code is longer.
        let symbolLookup: UnsafePointer<UInt16>
        /// Per `skipBits`-bit prefix, for skipping up to three AC coefficients at once: bits and
        /// zigzag steps of the first code (bytes 0 and 1), of the first two (bytes 2 and 3), and
        /// of all three (bytes 4 and 5); 0 when the first code is longer than the prefix or its
        /// symbol out of range. An end of block steps 64, so one addition ends the block. Each
        /// further code must lie wholly within the prefix and follow a code that does not end
        /// the block; where it does not, its bytes repeat the ones before.
        let skip: UnsafePointer<UInt64>
        /// Largest code of each length (index 1...16), -1 where the length has no codes.
        let maxCode: UnsafePointer<Int32>
        /// Added to a code of that length to find its symbol's index in `symbols`.
        let symbolOffset: UnsafePointer<Int32>
        let symbols: UnsafePointer<UInt8>
        let symbolCount: Int

        /// Decodes a code longer than ``lookupBits`` from the top bits of `bits`: the symbol and
        /// the code length, or `nil` for a bit pattern that is no code of this table.
        func decodeLong(_ bits: UInt64) -> (symbol: UInt8, length: Int)? {
            let top16 = Int32(truncatingIfNeeded: bits >> 48)
            for length in (JPEGHuffmanTable.lookupBits + 1)...16 {
                let code = top16 >> Int32(16 - length)
                if code <= maxCode[length] {
                    let index = Int(code + symbolOffset[length])
                    guard index >= 0, index < symbolCount else { return nil }
                    return (symbols[index], length)
                }
            }
            return nil
        }
    }

    /// See ``Tables/symbolLookup``.
    let symbolLookup: [UInt16]
    /// See ``Tables/skip``.
    let skip: [UInt64]
    /// Largest code of each length (index 1...16), then the symbol offset of each length.
    let canonical: [Int32]
    /// The symbols, padded to 256.
    let symbols: [UInt8]
    let symbolCount: Int

    init?(counts: some Collection<UInt8>, symbols: [UInt8], isDC: Bool) {
        guard counts.count == 16, symbols.count == counts.reduce(0, { $0 + Int($1) }), symbols.count <= 256 else { return nil }
        if isDC, symbols.contains(where: { $0 > 15 }) { return nil }
        var maxCode = [Int32](repeating: -1, count: 17)
        var symbolOffset = [Int32](repeating: 0, count: 17)
        // The code at the top of every `skipBits`-bit prefix, `symbol << 8 | length` (0 when the
        // code is longer): one walk of the canonical codes serves both lookup tables.
        var topCode = [UInt16](repeating: 0, count: 1 << Self.skipBits)
        var code: Int32 = 0
        var index = 0
        for (lengthIndex, count) in counts.enumerated() {
            let length = lengthIndex + 1
            // The codes of this length must fit below the all-ones code: checked before any is
            // placed, so a corrupt table never fills prefixes past the end of the lookup table.
            guard code + Int32(count) < Int32(1) << length else { return nil }
            if count > 0 {
                symbolOffset[length] = Int32(index) - code
                for _ in 0..<count {
                    if length <= Self.skipBits {
                        let first = Int(code) << (Self.skipBits - length)
                        for prefix in first..<(first + (1 << (Self.skipBits - length))) {
                            topCode[prefix] = UInt16(symbols[index]) << 8 | UInt16(length)
                        }
                    }
                    code += 1
                    index += 1
                }
                maxCode[length] = code - 1
            }
            code <<= 1
        }
        // A `lookupBits` prefix has the same top code as its first `skipBits` extension, unless
        // that code is longer than the prefix.
        let extraBits = Self.skipBits - Self.lookupBits
        symbolLookup = (0..<(1 << Self.lookupBits)).map { prefix in
            let entry = topCode[prefix << extraBits]
            return Int(entry & 0xFF) <= Self.lookupBits ? entry : 0
        }
        // The decoder only ever skips through AC tables.
        skip = isDC ? [0] : Self.skipTable(topCode: topCode)
        canonical = maxCode + symbolOffset
        self.symbols = symbols + [UInt8](repeating: 0, count: 256 - symbols.count)
        symbolCount = symbols.count
    }

    /// Calls `body` with pointers to the tables.
    func withTables<Result>(_ body: (Tables) -> Result) -> Result {
        symbolLookup.withUnsafeBufferPointer { lookups in
            canonical.withUnsafeBufferPointer { canonical in
                symbols.withUnsafeBufferPointer { symbols in
                    skip.withUnsafeBufferPointer { skip in
                        body(Tables(symbolLookup: lookups.baseAddress!,
                                    skip: skip.baseAddress!,
                                    maxCode: canonical.baseAddress!, symbolOffset: canonical.baseAddress! + 17,
                                    symbols: symbols.baseAddress!, symbolCount: symbolCount))
                    }
                }
            }
        }
    }

    /// The skip table (see ``Tables/skip``) from the code at the top of every prefix.
    private static func skipTable(topCode: [UInt16]) -> [UInt64] {
        func bitsAndSteps(_ entry: UInt16) -> (bits: Int, steps: Int)? {
            guard entry != 0 else { return nil }
            let skip = skipEntry(symbol: UInt8(entry >> 8), codeLength: Int(entry & 0xFF))
            return skip == 0 ? nil : (Int(skip & 0xFF), Int(skip >> 8))
        }
        let mask = (1 << skipBits) - 1
        var table = [UInt64](repeating: 0, count: 1 << skipBits)
        for prefix in 0..<(1 << skipBits) {
            guard var taken = bitsAndSteps(topCode[prefix]) else { continue }
            var entry = UInt64(taken.bits) | UInt64(taken.steps) << 8
            for code in 1..<3 {
                // The next code must lie wholly within the prefix's remaining bits (its magnitude
                // bits may run past them: they are only skipped).
                let rest = skipBits - taken.bits
                if taken.steps < 64, rest > 0 {
                    let next = topCode[(prefix << taken.bits) & mask]
                    if next != 0, Int(next & 0xFF) <= rest, let more = bitsAndSteps(next) {
                        taken = (taken.bits + more.bits, taken.steps + more.steps)
                    }
                }
                entry |= (UInt64(taken.bits) | UInt64(taken.steps) << 8) << (16 * code)
            }
            table[prefix] = entry
        }
        return table
    }

    /// The skip entry of an AC symbol (run << 4 | magnitude bits), 0 when libjpeg would read more
    /// magnitude bits than an 8-bit baseline JPEG can hold (the decode then gives up).
    private static func skipEntry(symbol: UInt8, codeLength: Int) -> UInt16 {
        let run = UInt16(symbol >> 4), size = UInt16(symbol & 15)
        guard size <= 10 else { return 0 }
        // As in libjpeg: a zero size is a run of 16 zeros (ZRL) when the run is 15, else the end of the block.
        let steps: UInt16 = size != 0 ? run + 1 : (run == 15 ? 16 : 64)
        return steps << 8 | (UInt16(codeLength) + size)
    }
}
