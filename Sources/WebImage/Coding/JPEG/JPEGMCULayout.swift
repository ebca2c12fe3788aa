/// Where the blocks of a sequential JPEG's scan go at 1/8 scale, following libjpeg's choices, and
/// how one MCU's decoded values are laid out in a record.
///
/// `nil` for a sampling layout libjpeg would upsample by a non-integer ratio or scale by more
/// than a 2×2 inverse DCT.
struct JPEGMCULayout {
    struct Component {
        /// Index in the frame header (0 is Y, R or gray).
        var frameIndex: Int
        /// Blocks per MCU, across and down (1 × 1 in a single-component scan).
        var blocksAcross: Int, blocksDown: Int
        /// 1 (DC only) or 2 (2×2 inverse DCT): the samples one block gives across and down.
        var samplesPerBlock: Int
        /// How many output pixels repeat each sample, across and down.
        var repeatAcross: Int, repeatDown: Int
        var planeWidth: Int, planeHeight: Int
        var quantization: [Int32]
        var dcTable: JPEGHuffmanTable, acTable: JPEGHuffmanTable
        /// Index of this component's first DC value in a record's DC values.
        var firstDC: Int
        /// Index of this component's first 2×2 first-pass workspace (10 values a block) in a
        /// record's workspace values.
        var firstWorkspace: Int
    }

    var components: [Component]
    var mcusAcross: Int, mcusDown: Int
    var mcuCount: Int { mcusAcross * mcusDown }
    /// Rows of the 1/8-scale output one row of MCUs covers.
    var outputRowsPerMCURow: Int
    var restartInterval: Int
    /// Bytes of one MCU's record: an Int16 DC value per block, then (at `workspaceOffset`) ten
    /// Int16 first-pass values per block of a 2×2-scaled component.
    var recordStride: Int
    var workspaceOffset: Int

    init?(_ header: JPEGBaselineHeader) {
        let maxH = header.components.map(\.horizontalSampling).max() ?? 1
        let maxV = header.components.map(\.verticalSampling).max() ?? 1
        let single = header.components.count == 1
        mcusAcross = single ? (header.width + 7) / 8 : (header.width + 8 * maxH - 1) / (8 * maxH)
        mcusDown = single ? (header.height + 7) / 8 : (header.height + 8 * maxV - 1) / (8 * maxV)
        restartInterval = header.restartInterval
        outputRowsPerMCURow = single ? 1 : maxV
        var components: [Component] = []
        var dcCount = 0, workspaceCount = 0
        for source in header.components {
            let h = source.horizontalSampling, v = source.verticalSampling
            // libjpeg (jdmaster.c) scales a subsampled component up by the DCT rather than by
            // upsampling wherever the sampling ratios allow it.
            var scaled = 1
            while scaled < 8, maxH % (h * scaled * 2) == 0, maxV % (v * scaled * 2) == 0 { scaled *= 2 }
            guard scaled <= 2, maxH % (h * scaled) == 0, maxV % (v * scaled) == 0 else { return nil }
            let across = single ? 1 : h, down = single ? 1 : v
            components.append(Component(
                frameIndex: source.frameIndex, blocksAcross: across, blocksDown: down, samplesPerBlock: scaled,
                repeatAcross: maxH / (h * scaled), repeatDown: maxV / (v * scaled),
                planeWidth: mcusAcross * across * scaled, planeHeight: mcusDown * down * scaled,
                quantization: source.quantization, dcTable: source.dcTable, acTable: source.acTable,
                firstDC: dcCount, firstWorkspace: workspaceCount))
            dcCount += across * down
            if scaled == 2 { workspaceCount += 10 * across * down }
        }
        self.components = components
        workspaceOffset = dcCount * 2
        recordStride = workspaceOffset + workspaceCount * 2
    }
}
