/// Decodes a sequential Huffman JPEG at 1/8 scale from its DC coefficients: the output libjpeg-turbo
/// gives at scale 1/8, bit for bit, in a fraction of its time.
///
/// At 1/8 scale each 8×8 block becomes one pixel, its DC coefficient, so libjpeg skips the inverse
/// DCT but still runs its whole per-block machinery: zeroing coefficient blocks, a bit buffer
/// refilled byte by byte, a per-coefficient branch. Thumbnails of large photos spend nearly all
/// their time there. This decoder only walks the AC codes: one table read per one to three codes
/// gives the bits to skip and the zigzag steps to take. Chroma that libjpeg scales by 1/4 instead (4:2:0 and the
/// like, where it prefers a 2×2 inverse DCT over upsampling) gets the same 2×2 inverse DCT here.
///
/// Large scans are decoded by two threads (see ``JPEGScanSplitter``): Huffman-coded JPEG data
/// resynchronizes by itself, so a second decoder started mid-scan soon agrees with the first.
/// The two threads then render one band of rows each (``JPEGBandRenderer``).
///
/// It decodes what it can prove it decodes like libjpeg: one interleaved scan of 1 or 3 components,
/// 8-bit samples, integer upsampling ratios, restart markers in sequence. Anything else, including
/// corrupt or truncated data, returns `nil`, and the caller decodes with libjpeg-turbo, which
/// reports errors and recovers the way it always has.
enum JPEGEighthScaleDecoder {
    /// Scans of fewer entropy-coded bytes are decoded by one thread: below this, starting a second
    /// costs more than it saves.
    static let parallelThreshold = 192 * 1024

    /// The 1/8-scale RGBA bitmap of `bytes`, or `nil` when libjpeg-turbo must decode it; on two
    /// threads only when `options` allow it (``DecodeOptions/parallelDecoding``).
    static func decode(_ bytes: UnsafeRawBufferPointer, options: DecodeOptions) throws -> Bitmap? {
        try decode(bytes, twoThreadsFrom: options.parallelDecoding ? parallelThreshold : .max)
    }

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
        let twoThreads = entropy.count >= twoThreadsFrom && Bitmap.hasSecondCore
        guard let stretches = twoThreads ? JPEGScanSplitter.decodeOnTwoThreads(scan) : JPEGScanSplitter.decodeOnOneThread(scan)
        else { return nil }
        // Samples and colours in two bands of MCU rows when two threads decoded.
        let width = (header.width + 7) / 8, height = (header.height + 7) / 8
        let bands = twoThreads && layout.mcusDown >= 2
            ? [0..<(layout.mcusDown / 2), (layout.mcusDown / 2)..<layout.mcusDown] : [0..<layout.mcusDown]
        // A band libjpeg-turbo's builds would not all decode alike sends the image to it.
        let disagrees = Locked(false)
        let bitmap = try Bitmap.assembled(width: width, height: height, bandCount: bands.count) { band in
            guard let rows = JPEGBandRenderer.render(scan: scan, stretches: stretches, mcuRows: bands[band],
                                                     width: width, height: height, transform: header.colorTransform) else {
                disagrees.withLock { $0 = true }
                return []
            }
            return rows
        }
        return disagrees.withLock { $0 } ? nil : bitmap
    }
}
