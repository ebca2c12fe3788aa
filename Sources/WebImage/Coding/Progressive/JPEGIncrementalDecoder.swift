import CJPEGLib
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A JPEG decoded while it downloads, through libjpeg's suspending data source
/// (`CJPEGLib/incremental.h`): every byte is entropy-decoded once, however often partial images
/// are asked for.
///
/// A sequential (baseline) JPEG shows its rows as they arrive: each row is decoded once, into a
/// canvas whose undecoded rows stay transparent. A progressive JPEG (any multi-scan file) is read
/// in libjpeg's buffered-image mode, and each scan read to its end is shown as a whole image
/// refined over the one before. Partial images are made as the one-shot decode makes its image
/// (DCT scaling and a resample for thumbnails, the embedded ICC profile converted to sRGB), so the
/// last one equals it. CMYK files show no partial images. The final image (`isComplete`) is
/// ``JPEGCoder``'s one-shot decode of the whole file.
///
/// Limits hold as in the one-shot decode and before libjpeg allocates: the pixel limit on the
/// declared size, and no decode buffers until the data received could belong to a complete file
/// of that size (``JPEGDataPlausibility``), so a small header declaring a huge image costs nothing.
final class JPEGIncrementalDecoder: CancellableIncrementalDecoder {
    let cancellation = DecodeCancellation()

    /// What the header said, fixed once it is read.
    private struct Layout {
        var width: Int
        var height: Int
        /// The DCT-scaled size libjpeg writes.
        var output: (width: Int, height: Int)
        var target: (width: Int, height: Int)
        var profile: Data?
        var orientation: ImageOrientation
        var multiScan: Bool
    }

    private enum Phase {
        case header
        case starting(Layout)
        case rows(Layout, PartialCanvas)
        case scans(Layout)
        /// Nothing more to show before the final image.
        case idle
    }

    private let options: DecodeOptions
    private let stream: UnsafeMutablePointer<webimage_jpeg_stream>?
    private var phase = Phase.header
    private var received = 0
    private var rowsDecoded = 0
    private var rowsShown = 0
    private var scansShown = 0
    private var failure: WebImageError?

    init(options: DecodeOptions) {
        self.options = options
        stream = webimage_jpeg_stream_create()
    }

    deinit {
        if let stream { webimage_jpeg_stream_destroy(stream) }
    }

    func update(with data: Data, isComplete: Bool) throws -> DecodedImage? {
        try cancellation.check()
        if isComplete { return try JPEGCoder().decode(data, options: options) }
        if let failure { throw failure }
        do {
            return try advance(data)
        } catch {
            let typed = error as? WebImageError ?? .corruptData("JPEG: \(error)")
            // A decoder stopped half-way (an error, or cancelled inside libjpeg) cannot go on.
            failure = typed
            throw typed
        }
    }

    private func advance(_ data: Data) throws -> DecodedImage? {
        guard let stream else { throw WebImageError.tooLarge("cannot create a JPEG decoder") }
        guard data.count >= received else { throw WebImageError.corruptData("JPEG: the data shrank between updates") }
        let appended = data.withUnsafeBytes { bytes -> Int32 in
            let fresh = UnsafeRawBufferPointer(rebasing: bytes[received...])
            return webimage_jpeg_stream_append(stream, fresh.baseAddress?.assumingMemoryBound(to: UInt8.self), fresh.count, 0)
        }
        guard appended == 1 else { throw WebImageError.tooLarge("JPEG: cannot buffer \(data.count - received) bytes") }
        received = data.count
        if case .header = phase {
            guard let layout = try readHeader(stream, data: data) else { return nil }
            phase = layout.map(Phase.starting) ?? .idle
        }
        if case .starting(let layout) = phase {
            guard let started = try start(stream, layout: layout, data: data) else { return nil }
            phase = started
        }
        switch phase {
        case .rows(let layout, let canvas): return try readRows(stream, layout: layout, canvas: canvas)
        case .scans(let layout): return try readScans(stream, layout: layout)
        case .header, .starting, .idle: return nil
        }
    }

    /// `nil` until the headers are in; then the layout, or `.some(nil)` for a file that shows no
    /// partial images (CMYK).
    private func readHeader(_ stream: UnsafeMutablePointer<webimage_jpeg_stream>, data: Data) throws -> Layout?? {
        switch webimage_jpeg_stream_read_header(stream) {
        case 1: break
        case 2: return nil
        default: throw failureError(stream)
        }
        let info = webimage_jpeg_stream_info(stream)!
        let width = Int(info.pointee.image_width), height = Int(info.pointee.image_height)
        let target = try options.targetSize(width: width, height: height)
        if [JCS_CMYK, JCS_YCCK].contains(info.pointee.jpeg_color_space) { return .some(nil) }
        let denominator = JPEGCoder.dctDenominator(width: width, height: height, atLeast: target)
        info.pointee.scale_num = 1
        info.pointee.scale_denom = UInt32(denominator)
        info.pointee.out_color_space = JCS_EXT_RGBA
        guard webimage_jpeg_stream_calc_output_dimensions(stream) == 1 else { throw failureError(stream) }
        let output = (Int(info.pointee.output_width), Int(info.pointee.output_height))
        guard output == ((width + denominator - 1) / denominator, (height + denominator - 1) / denominator),
              info.pointee.output_components == 4 else {
            throw WebImageError.corruptData("JPEG: libjpeg scales \(width)×\(height) by 1/\(denominator) to an unexpected size")
        }
        let profile = data.withUnsafeBytes { JPEGICCProfile.read($0) }
        return Layout(width: width, height: height, output: output, target: target, profile: profile,
                      orientation: EXIFReader.orientation(inJPEG: data) ?? .up,
                      multiScan: jpeg_has_multiple_scans(info) != 0)
    }

    /// The phase decoding runs in once libjpeg has started, or `nil` while it waits for data.
    private func start(_ stream: UnsafeMutablePointer<webimage_jpeg_stream>, layout: Layout, data: Data) throws -> Phase? {
        // Decode buffers are taken only for data some complete file of this size could start with.
        let plausible = data.withUnsafeBytes { (try? JPEGDataPlausibility.check($0, width: layout.width, height: layout.height)) != nil }
        guard plausible else { return nil }
        let canvas = layout.multiScan ? nil : try PartialCanvas(width: layout.output.width, height: layout.output.height)
        switch webimage_jpeg_stream_start(stream, layout.multiScan ? 1 : 0) {
        case 1: break
        case 2: return nil
        default: throw failureError(stream)
        }
        if let canvas { return .rows(layout, canvas) }
        return .scans(layout)
    }

    /// Sequential: decodes the rows that arrived into the canvas; shows them when there are new ones.
    private func readRows(_ stream: UnsafeMutablePointer<webimage_jpeg_stream>, layout: Layout,
                          canvas: PartialCanvas) throws -> DecodedImage? {
        try withUnsafeTemporaryAllocation(of: UnsafeMutablePointer<UInt8>?.self, capacity: Self.band) { rows in
            while rowsDecoded < canvas.height {
                try cancellation.check()
                let count = min(Self.band, canvas.height - rowsDecoded)
                for index in 0..<count { rows[index] = canvas.row(rowsDecoded + index) }
                let read = Int(webimage_jpeg_stream_read_rows(stream, rows.baseAddress, UInt32(count)))
                guard read >= 0 else { throw failureError(stream) }
                rowsDecoded += read
                if read < count { break }
            }
        }
        guard rowsDecoded > rowsShown else { return nil }
        rowsShown = rowsDecoded
        if rowsDecoded == canvas.height { phase = .idle }
        return try finished(canvas.snapshot(rows: rowsDecoded), layout: layout, complete: rowsDecoded == canvas.height)
    }

    /// Progressive: reads what arrived into the coefficient buffer; renders the newest completed
    /// scan when it is newer than the last one shown.
    private func readScans(_ stream: UnsafeMutablePointer<webimage_jpeg_stream>, layout: Layout) throws -> DecodedImage? {
        let status = webimage_jpeg_stream_consume(stream)
        guard status != 0 else { throw failureError(stream) }
        let scan = Int(stream.pointee.scans_completed)
        guard scan > scansShown else { return nil }
        switch webimage_jpeg_stream_start_output(stream, Int32(scan)) {
        case 1: break
        case 2: return nil
        default: throw failureError(stream)
        }
        let output = layout.output
        let bitmap = try Bitmap(width: output.width, height: output.height) { buffer in
            let base = buffer.baseAddress!.assumingMemoryBound(to: UInt8.self)
            try withUnsafeTemporaryAllocation(of: UnsafeMutablePointer<UInt8>?.self, capacity: Self.band) { rows in
                var row = 0
                while row < output.height {
                    try cancellation.check()
                    let count = min(Self.band, output.height - row)
                    for index in 0..<count { rows[index] = base + (row + index) * output.width * 4 }
                    // A completed scan is all in the coefficient buffer: the pass never waits for data.
                    guard webimage_jpeg_stream_read_rows(stream, rows.baseAddress, UInt32(count)) == Int32(count) else {
                        throw failureError(stream)
                    }
                    row += count
                }
            }
        }
        guard webimage_jpeg_stream_finish_output(stream) != 0 else { throw failureError(stream) }
        scansShown = scan
        let complete = status == 3
        if complete { phase = .idle }
        return try finished(bitmap, layout: layout, complete: complete)
    }

    /// What the one-shot decode does after libjpeg: resample to the thumbnail size, convert to sRGB.
    private func finished(_ decoded: Bitmap, layout: Layout, complete: Bool) throws -> DecodedImage {
        try cancellation.check()
        var bitmap = decoded
        if (bitmap.width, bitmap.height) != (layout.target.width, layout.target.height) {
            bitmap = try Resampler.resize(bitmap, width: layout.target.width, height: layout.target.height,
                                          filter: .lanczos3, options: options)
        }
        if !options.keepsColors {
            bitmap = try ColorConversion.convertToSRGB(bitmap, iccProfile: layout.profile, parallel: options.parallelDecoding)
        }
        // Rows still missing are transparent until the last one arrives.
        var image = DecodedImage(bitmap: bitmap, format: .jpeg, orientation: layout.orientation, scale: options.scale,
                                 hasAlpha: !complete && !layout.multiScan)
        if options.keepsColors { image.iccProfile = ColorConversion.keptProfile(layout.profile) }
        return image
    }

    private func failureError(_ stream: UnsafeMutablePointer<webimage_jpeg_stream>) -> WebImageError {
        if cancellation.isCancelled { return .cancelled }
        return JPEGCoder.error(message: String(cString: webimage_jpeg_stream_error_text(stream)))
    }

    /// Rows handed to libjpeg at a time, and how often a decode looks at its cancellation flag.
    private static let band = 16
}

extension JPEGCoder {
    /// A ``JPEGIncrementalDecoder`` for JPEG data.
    public func makeIncrementalDecoder(for format: ImageFormat, options: DecodeOptions) -> (any IncrementalImageDecoder)? {
        format == .jpeg ? JPEGIncrementalDecoder(options: options) : nil
    }
}
