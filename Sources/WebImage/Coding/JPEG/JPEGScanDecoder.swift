/// Decodes the MCUs of a sequential JPEG scan into records (DC values and 2×2 first passes) and
/// turns records into samples: the two halves of ``JPEGEighthScaleDecoder``'s work.
///
/// A value of arrays, so two threads can decode different stretches of one scan at once, each in
/// its own ``withContext(_:)``.
struct JPEGScanDecoder: Sendable {
    let layout: JPEGMCULayout
    /// The entropy-coded bytes, followed by ``JPEGEntropyData/padding`` zero bytes.
    private let data: PixelBuffer
    /// Bits of entropy-coded data.
    let bitCount: Int
    let restartOffsets: [Int]
    private let quantization: [Int32]
    /// Per component and zigzag position (80 of them, as libjpeg's natural order has), for the
    /// 2×2 inverse DCT's first pass: the quantizer of a coefficient there and the row's
    /// fixed-point factor (both 0 where the pass does not look), and which of the pass's ten
    /// sums it goes to.
    private let twoByTwoQuantizers: [Int]
    private let twoByTwoFactors: [Int]
    private let twoByTwoSums: [UInt8]

    init(layout: JPEGMCULayout, entropy: JPEGEntropyData) {
        self.layout = layout
        data = entropy.bytes
        bitCount = entropy.count * 8
        restartOffsets = entropy.restartOffsets
        quantization = layout.components.flatMap(\.quantization)
        // Rows 0, 1, 3, 5, 7 of columns 0, 1, 3, 5, 7 feed the first pass (jpeg_idct_2x2).
        let columnSlots: [Int: Int] = [0: 0, 1: 1, 3: 2, 5: 3, 7: 4]
        let rowFactors: [Int: Int] = [0: 1 << 15, 1: 29692, 3: -10426, 5: 6967, 7: -5906]
        var quantizers: [Int] = [], factors: [Int] = [], sums: [UInt8] = []
        for component in layout.components {
            for zigzag in 0..<JPEGBaselineHeader.naturalOrder.count {
                let position = JPEGBaselineHeader.naturalOrder[zigzag]
                let (row, column) = position.quotientAndRemainder(dividingBy: 8)
                guard position != 0, let slot = columnSlots[column], let factor = rowFactors[row] else {
                    quantizers.append(0); factors.append(0); sums.append(0)
                    continue
                }
                quantizers.append(Int(component.quantization[position]))
                factors.append(factor)
                sums.append(UInt8(row == 0 ? slot : 5 + slot))
            }
        }
        twoByTwoQuantizers = quantizers
        twoByTwoFactors = factors
        twoByTwoSums = sums
    }

    /// Room for `count` MCU records, written once by `decode` (which returns how many it wrote,
    /// or `nil` on failure) and read-only afterwards. Records are not initialized before
    /// ``Context/decodeMCU(_:_:into:)`` writes them, and pages never written cost no memory, so
    /// a generous count is free. The room is a ``PixelBuffer``: megabytes that the next
    /// thumbnail reuses rather than faults in again.
    func decodeRecords(count: Int, _ decode: (UnsafeMutableRawPointer) -> Int?) -> (records: PixelBuffer, count: Int)? {
        var decoded: Int?
        guard let records = try? PixelBuffer(scratchCount: max(1, count * layout.recordStride), initializingWith: { buffer in
            decoded = decode(buffer.baseAddress!)
        }) else { return nil }
        return decoded.map { (records, $0) }
    }

    /// What the inner loop needs of one component, as plain values and pointers (no reference
    /// counting per block), valid within ``withContext(_:)``.
    struct BlockDecoder {
        let dc: JPEGHuffmanTable.Tables
        let ac: JPEGHuffmanTable.Tables
        let quantization: UnsafePointer<Int32>
        let blocksAcross: Int, blocksDown: Int
        let samplesPerBlock: Int
        let firstDC: Int, firstWorkspace: Int
        /// See ``JPEGScanDecoder/twoByTwoQuantizers``, this component's 80 entries; likewise the factors.
        let twoByTwoQuantizers: UnsafePointer<Int>
        let twoByTwoFactors: UnsafePointer<Int>
        let twoByTwoSums: UnsafePointer<UInt8>
    }

    /// Calls `body` with a context for decoding on this thread.
    func withContext<Result>(_ body: (Context) -> Result) -> Result {
        let tables = layout.components.flatMap { [$0.dcTable, $0.acTable] }
        return Self.withTables(tables[...], []) { tables in
            data.withUnsafeBytes { data in
                quantization.withUnsafeBufferPointer { quantization in
                    twoByTwoQuantizers.withUnsafeBufferPointer { quantizers in
                        twoByTwoFactors.withUnsafeBufferPointer { factors in
                        twoByTwoSums.withUnsafeBufferPointer { sums in
                            let stride = JPEGBaselineHeader.naturalOrder.count
                            let decoders = layout.components.enumerated().map { index, component in
                                BlockDecoder(dc: tables[2 * index], ac: tables[2 * index + 1],
                                             quantization: quantization.baseAddress! + 64 * index,
                                             blocksAcross: component.blocksAcross, blocksDown: component.blocksDown,
                                             samplesPerBlock: component.samplesPerBlock,
                                             firstDC: component.firstDC, firstWorkspace: component.firstWorkspace,
                                             twoByTwoQuantizers: quantizers.baseAddress! + stride * index,
                                             twoByTwoFactors: factors.baseAddress! + stride * index,
                                             twoByTwoSums: sums.baseAddress! + stride * index)
                            }
                            return decoders.withUnsafeBufferPointer { decoders in
                                withUnsafeTemporaryAllocation(of: Int.self, capacity: 10) { sums in
                                    withUnsafeTemporaryAllocation(of: Int32.self, capacity: 4) { predictions in
                                        body(Context(scan: self, data: data.baseAddress!.assumingMemoryBound(to: UInt8.self),
                                                     decoders: decoders, twoByTwoSums: sums.baseAddress!,
                                                     predictions: predictions.baseAddress!))
                                    }
                                }
                            }
                        }
                        }
                    }
                }
            }
        }
    }

    private static func withTables<Result>(_ tables: ArraySlice<JPEGHuffmanTable>, _ opened: [JPEGHuffmanTable.Tables],
                                           _ body: ([JPEGHuffmanTable.Tables]) -> Result) -> Result {
        guard let first = tables.first else { return body(opened) }
        return first.withTables { withTables(tables.dropFirst(), opened + [$0], body) }
    }

    /// Where a decode stands between two MCUs. A plain value, so a stretch can stop on one thread
    /// and go on on another.
    struct Position: Sendable {
        var bit: Int
        /// DC predictions per component (scan order).
        var predictions: SIMD4<Int32> = .zero
        /// Where the current restart interval (or the data) ends, in bits.
        var intervalEnd: Int
    }

    /// Where the interval that starts at restart `restart` (or the data, for `nil`) ends, in bits.
    func intervalEnd(afterRestart restart: Int?) -> Int {
        let next = restart.map { $0 + 1 } ?? 0
        return next < restartOffsets.count ? restartOffsets[next] * 8 : bitCount
    }

    /// The position before the first MCU.
    var start: Position { Position(bit: 0, intervalEnd: intervalEnd(afterRestart: nil)) }

    /// Decoding on one thread.
    struct Context {
        let scan: JPEGScanDecoder
        let data: UnsafePointer<UInt8>
        let decoders: UnsafeBufferPointer<BlockDecoder>
        /// Scratch for one block's 2×2 first-pass sums (a closure-free loop keeps the bit reader
        /// in registers).
        let twoByTwoSums: UnsafeMutablePointer<Int>
        /// The DC predictions while an MCU decodes, one Int32 per component. Not a SIMD4 value:
        /// updating one lane of a vector indexed by a variable goes through the stack, and reading
        /// the whole vector back right after a one-lane store stalls on store forwarding, once per
        /// block.
        let predictions: UnsafeMutablePointer<Int32>

        /// Decodes the MCU at `position` into `record` and moves `position` past it. `index` is
        /// the MCU's place in the scan when known, for restart markers (a decoder started
        /// mid-scan does not know it, and is only started where there are none).
        /// - Returns: `false` on a bad code or a read past the end of the interval.
        func decodeMCU(_ index: Int?, _ position: inout Position, into record: UnsafeMutableRawPointer) -> Bool {
            let interval = scan.layout.restartInterval
            if let index, interval > 0, index > 0, index % interval == 0 {
                let restart = index / interval - 1
                guard restart < scan.restartOffsets.count else { return false }
                position = Position(bit: scan.restartOffsets[restart] * 8, intervalEnd: scan.intervalEnd(afterRestart: restart))
            }
            var reader = JPEGBitReader(data, bit: position.bit)
            for component in 0..<4 { predictions[component] = position.predictions[component] }
            let end = position.intervalEnd
            let dcs = record.assumingMemoryBound(to: Int16.self)
            let workspaces = (record + scan.layout.workspaceOffset).assumingMemoryBound(to: Int16.self)
            var succeeded = true
            blocks: for component in 0..<decoders.count {
                let decoder = decoders[component]
                for block in 0..<(decoder.blocksAcross * decoder.blocksDown) {
                    guard reader.decodeDC(decoder.dc, into: &predictions[component]) else { succeeded = false; break blocks }
                    dcs[decoder.firstDC + block] = Int16(truncatingIfNeeded: predictions[component])
                    if decoder.samplesPerBlock == 1 {
                        guard reader.skipAC(decoder.ac) else { succeeded = false; break blocks }
                    } else {
                        guard reader.decodeAC(decoder.ac, quantizers: decoder.twoByTwoQuantizers, factors: decoder.twoByTwoFactors,
                                              sums: decoder.twoByTwoSums,
                                              into: twoByTwoSums),
                              JPEGReducedIDCT.twoByTwoFirstPass(sums: twoByTwoSums,
                                                                into: workspaces + decoder.firstWorkspace + 10 * block)
                        else { succeeded = false; break blocks }
                    }
                    guard reader.position(from: data) <= end else { succeeded = false; break blocks }
                }
            }
            position.bit = reader.position(from: data)
            position.predictions = SIMD4(predictions[0], predictions[1], predictions[2], predictions[3])
            return succeeded
        }

        /// Decodes the MCUs `indices` (with their records at `records` from `indices.lowerBound`
        /// on) from `position` on.
        func decodeMCUs(_ indices: Range<Int>, _ position: inout Position, into records: UnsafeMutableRawPointer) -> Bool {
            for index in indices {
                guard decodeMCU(index, &position, into: records + index * scan.layout.recordStride) else { return false }
            }
            return true
        }

        /// Writes the samples of the stretch of MCUs `mcus`, whose records start at `records`,
        /// into the components' planes, adding `dcDeltas` to every DC value. The planes hold
        /// the rows of MCU rows `firstMCURow` on.
        /// - Returns: `false` where libjpeg-turbo's builds would not all give these samples (see
        ///   ``JPEGReducedIDCT/twoByTwoSecondPass(_:dequantizedDC:into:rowStride:)``).
        func reconstruct(_ mcus: Range<Int>, records: UnsafeRawPointer, dcDeltas: SIMD4<Int16>,
                         into planes: UnsafeBufferPointer<UnsafeMutablePointer<UInt8>>, firstMCURow: Int) -> Bool {
            var agrees = true
            let layout = scan.layout
            let stride = layout.recordStride, workspaceOffset = layout.workspaceOffset, mcusAcross = layout.mcusAcross
            let planeWidths = SIMD4<Int>(layout.components.map(\.planeWidth) + [Int](repeating: 0, count: 4 - layout.components.count))
            var record = records
            var (mcuRow, mcuColumn) = mcus.lowerBound.quotientAndRemainder(dividingBy: mcusAcross)
            for _ in mcus {
                let dcs = record.assumingMemoryBound(to: Int16.self)
                let workspaces = (record + workspaceOffset).assumingMemoryBound(to: Int16.self)
                for component in 0..<decoders.count {
                    let decoder = decoders[component], width = planeWidths[component], delta = dcDeltas[component]
                    let quantizedDC = Int(decoder.quantization[0]), samples = decoder.samplesPerBlock
                    let origin = planes[component]
                        + ((mcuRow - firstMCURow) * decoder.blocksDown * width + mcuColumn * decoder.blocksAcross) * samples
                    for blockRow in 0..<decoder.blocksDown {
                        for blockColumn in 0..<decoder.blocksAcross {
                            let block = blockRow * decoder.blocksAcross + blockColumn
                            let dequantized = Int(dcs[decoder.firstDC + block] &+ delta) * quantizedDC
                            let target = origin + (blockRow * width + blockColumn) * samples
                            if samples == 1 {
                                target.pointee = JPEGReducedIDCT.oneByOne(dequantizedDC: dequantized)
                            } else {
                                agrees = JPEGReducedIDCT.twoByTwoSecondPass(workspaces + decoder.firstWorkspace + 10 * block,
                                                                            dequantizedDC: dequantized, into: target,
                                                                            rowStride: width) && agrees
                            }
                        }
                    }
                }
                record += stride
                mcuColumn += 1
                if mcuColumn == mcusAcross { mcuColumn = 0; mcuRow += 1 }
            }
            return agrees
        }
    }

    /// The DC prediction of `component` after record `index - 1` of `records` (0 before the
    /// first), as the short libjpeg stores.
    func prediction(of component: Int, before index: Int, in records: UnsafeRawPointer) -> Int16 {
        guard index > 0 else { return 0 }
        let shape = layout.components[component]
        let dcs = (records + (index - 1) * layout.recordStride).assumingMemoryBound(to: Int16.self)
        return dcs[shape.firstDC + shape.blocksAcross * shape.blocksDown - 1]
    }
}

/// A run of consecutive MCUs decoded by one thread: their records, and what to add to every DC
/// value of each component when that thread started mid-scan with its predictions at 0.
struct JPEGDecodedStretch: Sendable {
    var mcus: Range<Int>
    var records: PixelBuffer
    /// Byte offset of the first MCU's record in `records`.
    var recordOffset: Int = 0
    var dcDeltas: SIMD4<Int16> = .zero
}
