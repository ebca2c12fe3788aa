/// Turns the decoded records of a band of MCU rows into RGBA rows for ``JPEGEighthScaleDecoder``:
/// each component's samples first, then upsampling by repetition (libjpeg's choice at this
/// scale) and colour conversion. Bands are independent, so two threads render two at once.
enum JPEGBandRenderer {
    /// The RGBA rows (tightly packed, `width` pixels each) that the MCU rows `mcuRows` cover.
    static func render(scan: JPEGScanDecoder, stretches: [JPEGDecodedStretch], mcuRows: Range<Int>,
                       width: Int, height: Int, transform: JPEGBaselineHeader.ColorTransform) -> [UInt8] {
        let layout = scan.layout
        let outputRows = (mcuRows.lowerBound * layout.outputRowsPerMCURow)..<min(height, mcuRows.upperBound * layout.outputRowsPerMCURow)
        guard !outputRows.isEmpty else { return [] }
        // Each component's samples for these MCU rows.
        let planes = layout.components.map { component in
            UnsafeMutablePointer<UInt8>.allocate(capacity: max(1, component.planeWidth * mcuRows.count
                                                               * component.blocksDown * component.samplesPerBlock))
        }
        defer { planes.forEach { $0.deallocate() } }
        let bandMCUs = (mcuRows.lowerBound * layout.mcusAcross)..<(mcuRows.upperBound * layout.mcusAcross)
        planes.withUnsafeBufferPointer { planes in
            scan.withContext { context in
                for stretch in stretches {
                    let mcus = stretch.mcus.clamped(to: bandMCUs)
                    guard !mcus.isEmpty else { continue }
                    stretch.records.withUnsafeBytes { records in
                        let first = records.baseAddress! + stretch.recordOffset
                            + (mcus.lowerBound - stretch.mcus.lowerBound) * layout.recordStride
                        context.reconstruct(mcus, records: first, dcDeltas: stretch.dcDeltas, into: planes,
                                            firstMCURow: mcuRows.lowerBound)
                    }
                }
            }
        }
        return [UInt8](unsafeUninitializedCapacity: outputRows.count * width * 4) { buffer, initialized in
            convert(planes: planes, layout: layout, firstMCURow: mcuRows.lowerBound, rows: outputRows,
                    width: width, transform: transform, into: buffer.baseAddress!)
            initialized = buffer.count
        }
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
