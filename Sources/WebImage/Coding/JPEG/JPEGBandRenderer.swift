/// Turns the decoded records of a band of MCU rows into RGBA rows for ``JPEGEighthScaleDecoder``:
/// each component's samples first, then upsampling by repetition (libjpeg's choice at this
/// scale) and colour conversion. Bands are independent, so two threads render two at once.
enum JPEGBandRenderer {
    /// The RGBA rows (tightly packed, `width` pixels each) that the MCU rows `mcuRows` cover, or
    /// `nil` where libjpeg-turbo's builds would not all give these pixels (a corrupt file's
    /// out-of-range chroma; see ``JPEGReducedIDCT/twoByTwoSecondPass(_:dequantizedDC:into:rowStride:)``).
    static func render(scan: JPEGScanDecoder, stretches: [JPEGDecodedStretch], mcuRows: Range<Int>,
                       width: Int, height: Int, transform: JPEGBaselineHeader.ColorTransform) -> [UInt8]? {
        let layout = scan.layout
        let outputRows = (mcuRows.lowerBound * layout.outputRowsPerMCURow)..<min(height, mcuRows.upperBound * layout.outputRowsPerMCURow)
        guard !outputRows.isEmpty else { return [] }
        if transform == .yCbCr, let shape = FourTwoZero(layout) {
            return renderFourTwoZero(scan: scan, shape: shape, stretches: stretches, mcuRows: mcuRows,
                                     outputRows: outputRows, width: width)
        }
        // Each component's samples for these MCU rows.
        let planes = layout.components.map { component in
            UnsafeMutablePointer<UInt8>.allocate(capacity: max(1, component.planeWidth * mcuRows.count
                                                               * component.blocksDown * component.samplesPerBlock))
        }
        defer { planes.forEach { $0.deallocate() } }
        var agrees = true
        planes.withUnsafeBufferPointer { planes in
            scan.withContext { context in
                forEachRun(of: stretches, in: mcuRows, layout: layout) { mcus, records, dcDeltas in
                    agrees = context.reconstruct(mcus, records: records, dcDeltas: dcDeltas, into: planes,
                                                 firstMCURow: mcuRows.lowerBound) && agrees
                }
            }
        }
        guard agrees else { return nil }
        return [UInt8](unsafeUninitializedCapacity: outputRows.count * width * 4) { buffer, initialized in
            convert(planes: planes, layout: layout, firstMCURow: mcuRows.lowerBound, rows: outputRows,
                    width: width, transform: transform, into: buffer.baseAddress!)
            initialized = buffer.count
        }
    }

    /// Where the values of a YCbCr 4:2:0 MCU are in its record: four luma DC values (one output
    /// pixel each) and one Cb and one Cr block (a 2×2 inverse DCT each, one sample per pixel).
    /// Most photos are laid out like this, so it has a path of its own: no sample planes and no
    /// upsampling, each MCU straight to its 2×2 RGBA pixels.
    struct FourTwoZero {
        var luma: Int, cb: Int, cr: Int

        init?(_ layout: JPEGMCULayout) {
            let components = layout.components
            guard components.count == 3, layout.outputRowsPerMCURow == 2,
                  let luma = components.firstIndex(where: { $0.frameIndex == 0 }),
                  let cb = components.firstIndex(where: { $0.frameIndex == 1 }),
                  let cr = components.firstIndex(where: { $0.frameIndex == 2 }) else { return nil }
            let y = components[luma], b = components[cb], r = components[cr]
            guard y.blocksAcross == 2, y.blocksDown == 2, y.samplesPerBlock == 1,
                  [b, r].allSatisfy({ $0.blocksAcross == 1 && $0.blocksDown == 1 && $0.samplesPerBlock == 2
                                      && $0.repeatAcross == 1 && $0.repeatDown == 1 }) else { return nil }
            (self.luma, self.cb, self.cr) = (luma, cb, cr)
        }
    }

    /// Calls `body` with each run of the band's MCUs (rows `mcuRows`) that one stretch decoded:
    /// the MCUs, a pointer to the first one's record, and the stretch's DC corrections.
    private static func forEachRun(of stretches: [JPEGDecodedStretch], in mcuRows: Range<Int>, layout: JPEGMCULayout,
                                   _ body: (Range<Int>, UnsafeRawPointer, SIMD4<Int16>) -> Void) {
        let bandMCUs = (mcuRows.lowerBound * layout.mcusAcross)..<(mcuRows.upperBound * layout.mcusAcross)
        for stretch in stretches {
            let mcus = stretch.mcus.clamped(to: bandMCUs)
            guard !mcus.isEmpty else { continue }
            stretch.records.withUnsafeBytes { records in
                body(mcus, records.baseAddress! + stretch.recordOffset
                        + (mcus.lowerBound - stretch.mcus.lowerBound) * layout.recordStride, stretch.dcDeltas)
            }
        }
    }

    private static func renderFourTwoZero(scan: JPEGScanDecoder, shape: FourTwoZero, stretches: [JPEGDecodedStretch],
                                          mcuRows: Range<Int>, outputRows: Range<Int>, width: Int) -> [UInt8]? {
        let layout = scan.layout
        let (y, cb, cr) = (layout.components[shape.luma], layout.components[shape.cb], layout.components[shape.cr])
        let stride = layout.recordStride
        let rowBytes = width * 4
        var agrees = true
        let rows = [UInt8](unsafeUninitializedCapacity: outputRows.count * rowBytes) { buffer, initialized in
            let out = buffer.baseAddress!
            let quantizers = (Int(y.quantization[0]), Int(cb.quantization[0]), Int(cr.quantization[0]))
            JPEGReducedIDCT.withColorTables { tables in
                withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 8) { chroma in
                    let blue = chroma.baseAddress!, red = blue + 4
                    forEachRun(of: stretches, in: mcuRows, layout: layout) { mcus, records, deltas in
                        let (yDelta, cbDelta, crDelta) = (deltas[shape.luma], deltas[shape.cb], deltas[shape.cr])
                        var record = records
                        var (mcuRow, mcuColumn) = mcus.lowerBound.quotientAndRemainder(dividingBy: layout.mcusAcross)
                        for _ in mcus {
                            let dcs = record.assumingMemoryBound(to: Int16.self)
                            let workspaces = (record + layout.workspaceOffset).assumingMemoryBound(to: Int16.self)
                            let blueAgrees = JPEGReducedIDCT.twoByTwoSecondPass(
                                workspaces + cb.firstWorkspace, dequantizedDC: Int(dcs[cb.firstDC] &+ cbDelta) * quantizers.1,
                                into: blue, rowStride: 2)
                            let redAgrees = JPEGReducedIDCT.twoByTwoSecondPass(
                                workspaces + cr.firstWorkspace, dequantizedDC: Int(dcs[cr.firstDC] &+ crDelta) * quantizers.2,
                                into: red, rowStride: 2)
                            agrees = agrees && blueAgrees && redAgrees
                            let top = mcuRow * 2, left = mcuColumn * 2
                            for dy in 0..<2 where top + dy < outputRows.upperBound {
                                let row = out + (top + dy - outputRows.lowerBound) * rowBytes
                                for dx in 0..<2 where left + dx < width {
                                    let sample = dy * 2 + dx
                                    let luma = JPEGReducedIDCT.oneByOne(
                                        dequantizedDC: Int(dcs[y.firstDC + sample] &+ yDelta) * quantizers.0)
                                    tables.rgba(luma: Int(luma), cb: Int(blue[sample]), cr: Int(red[sample]),
                                                into: row + (left + dx) * 4)
                                }
                            }
                            record += stride
                            mcuColumn += 1
                            if mcuColumn == layout.mcusAcross { mcuColumn = 0; mcuRow += 1 }
                        }
                    }
                }
            }
            initialized = buffer.count
        }
        return agrees ? rows : nil
    }

    /// Upsamples by repetition and converts output rows `rows` to RGBA.
    private static func convert(planes: [UnsafeMutablePointer<UInt8>], layout: JPEGMCULayout, firstMCURow: Int,
                                rows: Range<Int>, width: Int, transform: JPEGBaselineHeader.ColorTransform,
                                into out: UnsafeMutablePointer<UInt8>) {
        // Planes by frame order: Y (or R, or gray) first; each with the sample column of every output column.
        let ordered = layout.components.indices.sorted { layout.components[$0].frameIndex < layout.components[$1].frameIndex }
        let columns = UnsafeMutablePointer<Int>.allocate(capacity: 3 * width)
        defer { columns.deallocate() }
        for (slot, index) in ordered.enumerated() {
            for x in 0..<width { columns[slot * width + x] = x / layout.components[index].repeatAcross }
        }
        JPEGReducedIDCT.withColorTables { tables in
            var pixel = out
            for y in rows {
                let sourceRows = ordered.map { index in
                    let component = layout.components[index]
                    let firstPlaneRow = firstMCURow * component.blocksDown * component.samplesPerBlock
                    return UnsafePointer(planes[index] + (y / component.repeatDown - firstPlaneRow) * component.planeWidth)
                }
                switch transform {
                case .gray:
                    let luma = sourceRows[0]
                    for x in 0..<width {
                        let value = luma[columns[x]]
                        pixel[0] = value; pixel[1] = value; pixel[2] = value; pixel[3] = 255
                        pixel += 4
                    }
                case .rgb:
                    let (red, green, blue) = (sourceRows[0], sourceRows[1], sourceRows[2])
                    for x in 0..<width {
                        pixel[0] = red[columns[x]]
                        pixel[1] = green[columns[width + x]]
                        pixel[2] = blue[columns[2 * width + x]]
                        pixel[3] = 255
                        pixel += 4
                    }
                case .yCbCr:
                    let (luma, cb, cr) = (sourceRows[0], sourceRows[1], sourceRows[2])
                    for x in 0..<width {
                        tables.rgba(luma: Int(luma[columns[x]]), cb: Int(cb[columns[width + x]]),
                                    cr: Int(cr[columns[2 * width + x]]), into: pixel)
                        pixel += 4
                    }
                }
            }
        }
    }
}
