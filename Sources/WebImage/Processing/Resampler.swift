import CResampling

/// High-quality resizing of straight-alpha RGBA8 bitmaps.
///
/// A separable two-pass convolution whose kernel widens with the shrink factor (so shrinking
/// averages every source pixel instead of skipping), computed on premultiplied values so that
/// transparent pixels do not bleed their colour into opaque neighbours. The two passes' inner
/// loops are C (the `CResampling` target), one source built for the x86-64 baseline and for AVX2
/// and picked at run time; both builds give the same bytes.
public enum Resampler {
    /// Resizes of at least this many multiply-adds (target pixels × taps) run on two threads,
    /// one band of target rows each.
    static let parallelWork = 1_000_000

    /// Returns `bitmap` resized to `width` × `height`.
    /// - Throws: ``WebImageError/tooLarge(_:)`` when the target cannot be allocated,
    ///   ``WebImageError/corruptData(_:)`` for a side that is not positive.
    public static func resize(_ bitmap: Bitmap, width: Int, height: Int,
                              filter: ResamplingFilter = .lanczos3) throws -> Bitmap {
        try resize(bitmap, width: width, height: height, filter: filter, twoThreadsFrom: parallelWork)
    }

    /// ``resize(_:width:height:filter:)`` for a decoder: on two threads only when `options`
    /// allow it (``DecodeOptions/parallelDecoding``).
    static func resize(_ bitmap: Bitmap, width: Int, height: Int, filter: ResamplingFilter = .lanczos3,
                       options: DecodeOptions) throws -> Bitmap {
        try resize(bitmap, width: width, height: height, filter: filter,
                   twoThreadsFrom: options.parallelDecoding ? parallelWork : .max, stop: options.stop)
    }

    /// ``resize(_:width:height:filter:)`` on two threads from `twoThreadsFrom` multiply-adds on
    /// (tests set it to compare both ways).
    /// With `region`, only that rectangle of `bitmap` is read, as if it had been cropped out
    /// first (without the copy). `stop` ends the resize at its next band of rows
    /// (``WebImageError/cancelled``). `kernels` picks the build of the inner passes (tests run both).
    /// Never inlined: inlined into a decoder with its band closure capturing the stop flag, Swift
    /// 6.3's ownership verifier crashed ("Found outside of lifetime use"); one call per resize costs nothing.
    @inline(never)
    static func resize(_ bitmap: Bitmap, region: PixelRegion? = nil, width: Int, height: Int, filter: ResamplingFilter,
                       twoThreadsFrom: Int, stop: StopFlag = StopFlag(), kernels: Kernels = .best) throws -> Bitmap {
        guard width > 0, height > 0 else { throw WebImageError.corruptData("resize to \(width)×\(height)") }
        let region = region ?? PixelRegion(x: 0, y: 0, width: bitmap.width, height: bitmap.height)
        guard region.x >= 0, region.y >= 0, region.width > 0, region.height > 0,
              region.width <= bitmap.width - region.x, region.height <= bitmap.height - region.y else {
            throw WebImageError.corruptData("resize of a region outside the \(bitmap.width)×\(bitmap.height) bitmap")
        }
        if width == region.width, height == region.height {
            return try bitmap.cropped(x: region.x, y: region.y, width: width, height: height)
        }
        // The float buffers below are sized from the caller's numbers: refuse what overflows
        // instead of trapping in `allocate`.
        guard Bitmap.byteCount(width: width, height: height) != nil,
              Bitmap.byteCount(width: width, height: bitmap.height) != nil else {
            throw WebImageError.tooLarge("resize to \(width)×\(height) overflows")
        }
        let horizontal = Contributions.cached(source: region.width, target: width, filter: filter)
        let vertical = Contributions.cached(source: region.height, target: height, filter: filter)
        let work = width * region.height * horizontal.stride + width * height * vertical.stride
        guard work >= twoThreadsFrom, height >= 2, Bitmap.hasSecondCore else {
            return try Bitmap(width: width, height: height) { target in
                resizeRows(bitmap, region, 0..<height, horizontal: horizontal, vertical: vertical,
                           into: target.bindMemory(to: UInt8.self).baseAddress!, stop: stop, kernels: kernels)
                try stop.check()
            }
        }
        // Two bands of target rows, each from the source rows its taps reach (a few rows twice).
        let bands = [0..<(height / 2), (height / 2)..<height]
        let resized = try Bitmap.assembled(width: width, height: height, bandCount: bands.count) { band in
            let rows = bands[band]
            return [UInt8](unsafeUninitializedCapacity: rows.count * width * 4) { buffer, initialized in
                resizeRows(bitmap, region, rows, horizontal: horizontal, vertical: vertical, into: buffer.baseAddress!, stop: stop,
                           kernels: kernels)
                initialized = buffer.count
            }
        }
        try stop.check()
        return resized
    }

    /// How many rows a resize works through between looks at its stop flag: an atomic load per
    /// band costs nothing beside the rows' arithmetic, and a 12 MP source's band takes well under a millisecond.
    static let rowsBetweenStopChecks = 16

    /// A build of the inner passes (`resampling.h` in the CResampling target): the same C source
    /// compiled for the x86-64 baseline and for AVX2, giving the same bytes. `bench-render`, 1 MP
    /// JPEG to a 300×300 cover on one thread, best of three alternating rounds (2026-12-05): the
    /// Swift passes they replaced 361 images/s, baseline 414 (1.15x), AVX2 456 (1.26x).
    struct Kernels: Sendable {
        let variant: webimage_resampling_variant

        /// The baseline build, which every CPU runs.
        static let baseline = Kernels(variant: WEBIMAGE_RESAMPLING_BASELINE)
        /// The AVX2 build, or `nil` where the CPU (or the OS) cannot run it.
        static let avx2: Kernels? = best.variant == WEBIMAGE_RESAMPLING_AVX2 ? Kernels(variant: WEBIMAGE_RESAMPLING_AVX2) : nil
        /// The fastest build this CPU runs.
        static let best = Kernels(variant: webimage_resampling_best_variant())
    }

    /// Target rows `rows` of the resize of `region`, written tightly packed to `output`.
    /// A `stop` set on the way leaves the rest of `output` as it was (the caller throws).
    private static func resizeRows(_ bitmap: Bitmap, _ region: PixelRegion, _ rows: Range<Int>, horizontal: Contributions,
                                   vertical: Contributions, into output: UnsafeMutablePointer<UInt8>, stop: StopFlag,
                                   kernels: Kernels) {
        let width = horizontal.target, sourceWidth = region.width
        // The source rows the vertical taps of these target rows reach.
        let firstSource = rows.map { vertical.starts[$0] }.min() ?? 0
        let endSource = rows.map { vertical.starts[$0] + vertical.counts[$0] }.max() ?? 0
        guard endSource > firstSource else { return }
        // Pass 1: those source rows, shrunk horizontally, into premultiplied floats (four per pixel).
        let intermediate = UnsafeMutablePointer<Float>.allocate(capacity: 4 * width * (endSource - firstSource))
        defer { intermediate.deallocate() }
        let row = UnsafeMutablePointer<Float>.allocate(capacity: 4 * sourceWidth)
        defer { row.deallocate() }
        // A band whose rows are all opaque skips the unpremultiply: its sums are straight colours.
        var opaque = true
        bitmap.withUnsafeBytes { source in
            let pixels = source.bindMemory(to: UInt8.self).baseAddress! + region.y * bitmap.bytesPerRow + region.x * 4
            horizontal.starts.withUnsafeBufferPointer { starts in
                horizontal.counts.withUnsafeBufferPointer { counts in
                    horizontal.weights.withUnsafeBufferPointer { weights in
                        for y in firstSource..<endSource {
                            if (y - firstSource) % rowsBetweenStopChecks == 0, stop.isSet { return }
                            let rowOpaque = webimage_resample_row(
                                pixels + y * bitmap.bytesPerRow, sourceWidth, starts.baseAddress!, counts.baseAddress!,
                                weights.baseAddress!, horizontal.stride, width, row,
                                intermediate + (y - firstSource) * width * 4, kernels.variant)
                            opaque = opaque && rowOpaque != 0
                        }
                    }
                }
            }
        }
        // Pass 2: columns, then back to straight-alpha bytes.
        if stop.isSet { return }
        vertical.weights.withUnsafeBufferPointer { verticalWeights in
            for y in rows {
                if (y - rows.lowerBound) % rowsBetweenStopChecks == 0, stop.isSet { return }
                webimage_resample_column(intermediate + (vertical.starts[y] - firstSource) * width * 4, width, vertical.counts[y],
                                         verticalWeights.baseAddress! + y * vertical.stride,
                                         output + (y - rows.lowerBound) * width * 4, opaque ? 1 : 0, kernels.variant)
            }
        }
    }

    /// The size that fits `width` × `height` inside a square of `maxPixelSize`, keeping the aspect ratio.
    public static func fittingSize(width: Int, height: Int, maxPixelSize: Int) -> (width: Int, height: Int) {
        guard maxPixelSize > 0, max(width, height) > maxPixelSize else { return (width, height) }
        let scale = Double(maxPixelSize) / Double(max(width, height))
        return (max(1, Int((Double(width) * scale).rounded())), max(1, Int((Double(height) * scale).rounded())))
    }
}

/// A rectangle of a bitmap's pixels, in pixels from its top-left corner.
struct PixelRegion: Sendable, Hashable {
    let x: Int
    let y: Int
    let width: Int
    let height: Int
}

/// For each target index: the first source index, how many follow, and their normalized weights.
struct Contributions: Sendable {
    let target: Int
    let starts: [Int]
    let counts: [Int]
    /// `stride` weights per target index.
    let weights: [Float]
    let stride: Int

    /// The contributions for a resize of `source` to `target`, made once per geometry: a
    /// service renders the same few sizes again and again, and the weights' sines cost 3% of a
    /// 1 MP render (bench-render, 2026-12-05). Only small tables are kept (thumbnail sizes: at
    /// most 8,192 weights), 32 of them, so that a client cycling through large geometries holds
    /// at most about 3 MB here; past 32 the table starts again.
    static func cached(source: Int, target: Int, filter: ResamplingFilter) -> Contributions {
        let key = Geometry(source: source, target: target, filter: filter)
        if let known = made.withLock({ $0[key] }) { return known }
        let contributions = Contributions(source: source, target: target, filter: filter)
        guard contributions.weights.count <= 8_192 else { return contributions }
        made.withLock { table in
            if table.count >= 32 { table.removeAll(keepingCapacity: true) }
            table[key] = contributions
        }
        return contributions
    }

    private struct Geometry: Hashable {
        let source: Int
        let target: Int
        let filter: ResamplingFilter
    }

    private static let made = Locked([Geometry: Contributions]())

    /// How many tables ``cached(source:target:filter:)`` holds (for tests).
    static var cachedCount: Int { made.withLock { $0.count } }

    /// Whether the table for this geometry is held (for tests).
    static func isCached(source: Int, target: Int, filter: ResamplingFilter) -> Bool {
        made.withLock { $0[Geometry(source: source, target: target, filter: filter)] != nil }
    }

    init(source: Int, target: Int, filter: ResamplingFilter) {
        self.target = target
        let scale = Double(source) / Double(target)
        let widen = max(scale, 1)
        let support = filter.support * widen
        stride = Int((support * 2).rounded(.up)) + 2
        var weights = [Float](repeating: 0, count: stride * target)
        var starts = [Int](repeating: 0, count: target)
        var counts = [Int](repeating: 0, count: target)
        for index in 0..<target {
            let center = (Double(index) + 0.5) * scale
            var first = max(0, Int((center - support).rounded(.down)))
            let last = min(source, Int((center + support).rounded(.up)))
            if last - first > stride { first = last - stride }
            var sum = 0.0
            var values: [Double] = []
            values.reserveCapacity(last - first)
            for sourceIndex in first..<last {
                let weight = filter.weight((Double(sourceIndex) + 0.5 - center) / widen)
                values.append(weight)
                sum += weight
            }
            // Trim zero weights at both ends so the inner loops skip them.
            var lower = 0, upper = values.count
            while lower < upper, values[lower] == 0 { lower += 1 }
            while upper > lower, values[upper - 1] == 0 { upper -= 1 }
            if lower == upper {
                // A kernel narrower than a pixel can miss every centre: take the nearest pixel.
                starts[index] = min(source - 1, max(0, Int(center)))
                counts[index] = 1
                weights[index * stride] = 1
                continue
            }
            starts[index] = first + lower
            counts[index] = upper - lower
            for tap in lower..<upper {
                weights[index * stride + tap - lower] = Float(values[tap] / sum)
            }
        }
        self.starts = starts
        self.counts = counts
        self.weights = weights
    }
}
