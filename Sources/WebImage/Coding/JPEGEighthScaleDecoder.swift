import Foundation

/// Decodes a sequential Huffman JPEG at 1/8 scale from its DC coefficients: the output libjpeg-turbo
/// gives at scale 1/8, bit for bit, in a fraction of its time.
///
/// At 1/8 scale each 8×8 block becomes one pixel, its DC coefficient, so libjpeg skips the inverse
/// DCT but still runs its whole per-block machinery: zeroing coefficient blocks, a bit buffer
/// refilled byte by byte, a per-coefficient branch. Thumbnails of large photos spend nearly all
/// their time there. This decoder only walks the AC codes: one table read per code gives the bits
/// to skip and the zigzag steps to take. Chroma that libjpeg scales by 1/4 instead (4:2:0 and the
/// like, where it prefers a 2×2 inverse DCT over upsampling) gets the same 2×2 inverse DCT here.
///
/// Large scans are decoded by two threads (see ``JPEGScanSplitter``): Huffman-coded JPEG data
/// resynchronizes by itself, so a second decoder started mid-scan soon agrees with the first.
///
/// It decodes what it can prove it decodes like libjpeg: one interleaved scan of 1 or 3 components,
/// 8-bit samples, integer upsampling ratios, restart markers in sequence. Anything else, including
/// corrupt or truncated data, returns `nil`, and the caller decodes with libjpeg-turbo, which
/// reports errors and recovers the way it always has.
enum JPEGEighthScaleDecoder {
    /// Scans of fewer entropy-coded bytes are decoded by one thread: below this, starting a second
    /// costs more than it saves.
    static let parallelThreshold = 192 * 1024

    /// The 1/8-scale RGBA bitmap of `bytes`, or `nil` when libjpeg-turbo must decode it.
    /// - Parameter twoThreadsFrom: the entropy-coded bytes from which two threads decode the scan
    ///   (tests lower it to check the split on small images).
    static func decode(_ bytes: UnsafeRawBufferPointer, twoThreadsFrom: Int = parallelThreshold) throws -> Bitmap? {
        guard let header = JPEGBaselineHeader(bytes), let layout = JPEGMCULayout(header),
              let entropy = JPEGEntropyData(bytes, from: header.scanDataOffset) else { return nil }
        // libjpeg expects a restart marker at every interval boundary, and no other.
        let expectedRestarts = layout.restartInterval > 0 ? (layout.mcuCount - 1) / layout.restartInterval : 0
        guard entropy.restartOffsets.count == expectedRestarts else { return nil }
        let scan = JPEGScanDecoder(layout: layout, entropy: entropy)
        let twoThreads = entropy.count >= twoThreadsFrom && ProcessInfo.processInfo.activeProcessorCount > 1
        guard let stretches = twoThreads ? JPEGScanSplitter.decodeOnTwoThreads(scan) : JPEGScanSplitter.decodeOnOneThread(scan)
        else { return nil }
        let planes = layout.components.map { SamplePlane(width: $0.planeWidth, height: $0.planeHeight) }
        defer { for plane in planes { plane.samples.deallocate() } }
        planes.map(\.samples).withUnsafeBufferPointer { samples in
            scan.withContext { context in
                for stretch in stretches {
                    stretch.records.withUnsafeBytes { records in
                        context.reconstruct(stretch.mcus, records: records.baseAddress! + stretch.recordOffset,
                                            dcDeltas: stretch.dcDeltas, into: samples)
                    }
                }
            }
        }
        let width = (header.width + 7) / 8, height = (header.height + 7) / 8
        return try Bitmap(width: width, height: height) { buffer in
            convert(planes: planes, layout: layout, transform: header.colorTransform, width: width, height: height,
                    into: buffer.bindMemory(to: UInt8.self).baseAddress!)
        }
    }

    /// One component's samples at its decoded size.
    struct SamplePlane {
        let width: Int
        let samples: UnsafeMutablePointer<UInt8>

        init(width: Int, height: Int) {
            self.width = width
            samples = .allocate(capacity: max(1, width * height))
        }
    }

    /// Upsamples by repetition (libjpeg's choice at this scale) and converts to RGBA.
    private static func convert(planes: [SamplePlane], layout: JPEGMCULayout, transform: JPEGBaselineHeader.ColorTransform,
                                width: Int, height: Int, into out: UnsafeMutablePointer<UInt8>) {
        // Planes by frame order: Y (or R, or gray) first; each with the sample column of every output column.
        let ordered = layout.components.indices.sorted { layout.components[$0].frameIndex < layout.components[$1].frameIndex }
        let columns = UnsafeMutablePointer<Int>.allocate(capacity: 3 * width)
        defer { columns.deallocate() }
        for (slot, index) in ordered.enumerated() {
            for x in 0..<width { columns[slot * width + x] = x / layout.components[index].repeatAcross }
        }
        JPEGReducedIDCT.withColorTables { tables in
            for y in 0..<height {
                let rows = ordered.map { index in
                    UnsafePointer(planes[index].samples + (y / layout.components[index].repeatDown) * planes[index].width)
                }
                var pixel = out + y * width * 4
                switch transform {
                case .gray:
                    let luma = rows[0]
                    for x in 0..<width {
                        let value = luma[columns[x]]
                        pixel[0] = value; pixel[1] = value; pixel[2] = value; pixel[3] = 255
                        pixel += 4
                    }
                case .rgb:
                    let (red, green, blue) = (rows[0], rows[1], rows[2])
                    for x in 0..<width {
                        pixel[0] = red[columns[x]]
                        pixel[1] = green[columns[width + x]]
                        pixel[2] = blue[columns[2 * width + x]]
                        pixel[3] = 255
                        pixel += 4
                    }
                case .yCbCr:
                    let (luma, cb, cr) = (rows[0], rows[1], rows[2])
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
