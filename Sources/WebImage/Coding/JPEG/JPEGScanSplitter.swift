import Dispatch

/// Decodes a sequential JPEG scan for ``JPEGEighthScaleDecoder``, on one thread or on two.
///
/// With restart markers the halves are independent: the second thread starts at the marker
/// nearest the middle. Without them the second thread starts at the middle byte with a guess of
/// the decoder's state (the start of an MCU). A wrong guess decodes garbage for a while, but
/// Huffman codes resynchronize by themselves: soon it starts an MCU exactly where the true
/// decode starts one, and from there both decode the same bits the same way. The first thread
/// decodes to the middle, then on until it reaches an MCU start the second thread also recorded;
/// the second thread's records from there on are the true ones, their DC values off by what the
/// DC predictions were at that point (the second thread began them at 0). If the two never meet,
/// the first thread decodes everything itself: never wrong, at worst no faster.
enum JPEGScanSplitter {
    /// The whole scan on this thread.
    static func decodeOnOneThread(_ scan: JPEGScanDecoder) -> [JPEGDecodedStretch]? {
        let mcus = 0..<scan.layout.mcuCount
        var position = scan.start
        let decoded = scan.decodeRecords(count: mcus.count) { records in
            scan.withContext { $0.decodeMCUs(mcus, &position, into: records) } ? mcus.count : nil
        }
        return decoded.map { [JPEGDecodedStretch(mcus: mcus, records: $0.records)] }
    }

    /// The scan on two threads.
    static func decodeOnTwoThreads(_ scan: JPEGScanDecoder) -> [JPEGDecodedStretch]? {
        scan.layout.restartInterval > 0 && !scan.restartOffsets.isEmpty
            ? splitAtRestart(scan) : splitAndResynchronize(scan)
    }

    private static func splitAtRestart(_ scan: JPEGScanDecoder) -> [JPEGDecodedStretch]? {
        let mcuCount = scan.layout.mcuCount, stride = scan.layout.recordStride
        // Restart k (1-based) begins MCU k × interval.
        let split = (scan.restartOffsets.count + 1) / 2 * scan.layout.restartInterval
        let halves = Locked<[Int: JPEGDecodedStretch]>([:])
        DispatchQueue.concurrentPerform(iterations: 2) { half in
            let mcus = half == 0 ? 0..<split : split..<mcuCount
            // The restart at `split` moves the second half's position to its marker.
            var position = scan.start
            let decoded = scan.decodeRecords(count: mcus.count) { records in
                scan.withContext { $0.decodeMCUs(mcus, &position, into: records - mcus.lowerBound * stride) } ? mcus.count : nil
            }
            if let decoded { halves.withLock { $0[half] = JPEGDecodedStretch(mcus: mcus, records: decoded.records) } }
        }
        let decoded = halves.withLock { $0 }
        guard let first = decoded[0], let second = decoded[1] else { return nil }
        return [first, second]
    }

    /// What the second thread of ``splitAndResynchronize(_:)`` decoded from the middle on.
    private struct SideStretch: Sendable {
        var records: PixelBuffer
        /// Where each decoded MCU started, in bits, and where the last one ended.
        var starts: [Int]
        var count: Int { starts.count - 1 }
    }

    /// Where the first thread of ``splitAndResynchronize(_:)`` stopped, at the middle.
    private struct MainStretch: Sendable {
        var records: PixelBuffer
        var position: JPEGScanDecoder.Position
        var count: Int
    }

    private static func splitAndResynchronize(_ scan: JPEGScanDecoder) -> [JPEGDecodedStretch]? {
        let mcuCount = scan.layout.mcuCount, stride = scan.layout.recordStride
        let splitBit = scan.bitCount / 16 * 8
        let mainResult = Locked<MainStretch?>(nil), sideResult = Locked<SideStretch?>(nil)
        DispatchQueue.concurrentPerform(iterations: 2) { thread in
            if thread == 0 {
                var position = scan.start
                let decoded = scan.decodeRecords(count: mcuCount) { records in
                    scan.withContext { context in
                        var index = 0
                        while index < mcuCount, position.bit < splitBit {
                            guard context.decodeMCU(index, &position, into: records + index * stride) else { return nil }
                            index += 1
                        }
                        return index
                    }
                }
                if let decoded {
                    mainResult.withLock { $0 = MainStretch(records: decoded.records, position: position, count: decoded.count) }
                }
            } else {
                // Stops at the end of the data, or at a bad code (the guess went wrong and has not
                // resynchronized yet, or the data is corrupt: the first thread finds out which).
                var position = JPEGScanDecoder.Position(bit: splitBit, intervalEnd: scan.bitCount)
                var starts = [position.bit]
                starts.reserveCapacity(mcuCount / 2 + 2)
                let decoded = scan.decodeRecords(count: mcuCount) { records in
                    scan.withContext { context in
                        while starts.count <= mcuCount,
                              context.decodeMCU(nil, &position, into: records + (starts.count - 1) * stride) {
                            starts.append(position.bit)
                        }
                    }
                    return starts.count - 1
                }
                if let decoded { sideResult.withLock { $0 = SideStretch(records: decoded.records, starts: starts) } }
            }
        }
        guard let main = mainResult.withLock({ $0 }), let side = sideResult.withLock({ $0 }) else { return nil }
        // The first thread goes on from the middle until it starts an MCU where the second started one.
        var position = main.position, index = main.count, sideIndex = 0, synchronized = false
        let rest = scan.decodeRecords(count: mcuCount - main.count) { records in
            scan.withContext { context in
                while index < mcuCount {
                    while sideIndex < side.count, side.starts[sideIndex] < position.bit { sideIndex += 1 }
                    if sideIndex < side.count, side.starts[sideIndex] == position.bit, side.count - sideIndex >= mcuCount - index {
                        synchronized = true
                        break
                    }
                    guard context.decodeMCU(index, &position, into: records + (index - main.count) * stride) else { return nil }
                    index += 1
                }
                return index - main.count
            }
        }
        guard let rest else { return nil }
        var stretches = [JPEGDecodedStretch(mcus: 0..<main.count, records: main.records),
                         JPEGDecodedStretch(mcus: main.count..<index, records: rest.records)]
        guard synchronized else { return stretches }
        var deltas = SIMD4<Int16>.zero
        side.records.withUnsafeBytes { records in
            for component in scan.layout.components.indices {
                deltas[component] = Int16(truncatingIfNeeded: position.predictions[component])
                    &- scan.prediction(of: component, before: sideIndex, in: records.baseAddress!)
            }
        }
        stretches.append(JPEGDecodedStretch(mcus: index..<mcuCount, records: side.records,
                                            recordOffset: sideIndex * stride, dcDeltas: deltas))
        return stretches
    }
}
