import CPNG
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A PNG decoded while it downloads, with libspng's row API.
///
/// A plain PNG shows its rows as they arrive (rows not yet decoded are transparent); an Adam7
/// PNG shows each completed pass as a whole image, every pixel filled from the nearest one the
/// passes so far hold (8×8 blocks after the first pass, down to single pixels after the
/// seventh). libspng cannot pause for data, so each update decodes the rows again from the
/// start of the data so far; the manager's throttle bounds how often that happens. Partial images
/// are scaled and colour-converted as the one-shot decode does; the final image (`isComplete`)
/// is ``PNGCoder``'s one-shot decode of the whole file (APNG animation included).
///
/// The declared size is checked against the pixel limit before the canvas is allocated, and
/// libspng's chunk limits are those of the one-shot decode.
final class PNGIncrementalDecoder: CancellableIncrementalDecoder {
    let cancellation = DecodeCancellation()

    private let options: DecodeOptions
    private var canvas: PartialCanvas?
    private var rowsShown = 0
    private var passesShown = 0

    init(options: DecodeOptions) {
        self.options = options
    }

    /// Adam7 pass `p`'s first column and column step, and the block a pixel of the passes up to
    /// `p` stands for.
    private static let passColumns: [(start: Int, step: Int)] = [(0, 8), (4, 8), (0, 4), (2, 4), (0, 2), (1, 2), (0, 1)]
    private static let passBlocks: [(width: Int, height: Int)] = [(8, 8), (4, 8), (4, 4), (2, 4), (2, 2), (1, 2), (1, 1)]

    func update(with data: Data, isComplete: Bool) throws -> DecodedImage? {
        try cancellation.check()
        if isComplete { return try PNGCoder().decode(data, options: options) }
        return try data.withUnsafeBytes { bytes -> DecodedImage? in
            guard let base = bytes.baseAddress, bytes.count > 8 else { return nil }
            guard let context = spng_ctx_new(0) else { throw WebImageError.corruptData("cannot create a PNG decoder") }
            defer { spng_ctx_free(context) }
            spng_set_crc_action(context, Int32(SPNG_CRC_ERROR.rawValue), Int32(SPNG_CRC_DISCARD.rawValue))
            spng_set_chunk_limits(context, 16 << 20, 64 << 20)
            try PNGCoder.check(spng_set_png_buffer(context, base, bytes.count))
            var header = spng_ihdr()
            guard try Self.waiting(spng_get_ihdr(context, &header)) else { return nil }
            let width = Int(header.width), height = Int(header.height)
            try options.checkFullSizeCanvas(width: width, height: height)
            let wide = header.bit_depth == 16
            let format = Int32(wide ? SPNG_FMT_RGBA16.rawValue : SPNG_FMT_RGBA8.rawValue)
            guard try Self.waiting(spng_decode_image(context, nil, 0, format,
                                                     Int32(SPNG_DECODE_TRNS.rawValue | SPNG_DECODE_PROGRESSIVE.rawValue))) else {
                return nil
            }
            let canvas = try self.canvas ?? PartialCanvas(width: width, height: height)
            self.canvas = canvas
            let interlaced = header.interlace_method != 0
            let progress = try decodeRows(context, canvas: canvas, wide: wide, interlaced: interlaced)
            var trns = spng_trns()
            let hasAlpha = spng_get_trns(context, &trns) == 0 || header.color_type == 4 || header.color_type == 6
            let bitmap: Bitmap
            if interlaced {
                guard progress.passes > passesShown else { return nil }
                passesShown = progress.passes
                bitmap = try filledFromPasses(canvas, passes: progress.passes)
            } else {
                guard progress.rows > rowsShown else { return nil }
                rowsShown = progress.rows
                bitmap = try canvas.snapshot(rows: progress.rows)
            }
            let complete = interlaced ? progress.passes == 7 : progress.rows == height
            let profile = PNGColorProfile.profile(in: context)
            let scaled = try PNGCoder.scaled(bitmap, options: options)
            let converted = options.keepsColors ? scaled
                : try ColorConversion.convertToSRGB(scaled, iccProfile: profile, parallel: options.parallelDecoding)
            var image = DecodedImage(bitmap: converted, format: .png, scale: options.scale, hasAlpha: hasAlpha || !complete)
            if options.keepsColors { image.iccProfile = ColorConversion.keptProfile(profile) }
            return image
        }
    }

    /// Decodes every row the data holds into the canvas: how many rows (plain) or whole passes
    /// (Adam7) that makes.
    private func decodeRows(_ context: OpaquePointer, canvas: PartialCanvas, wide: Bool,
                            interlaced: Bool) throws -> (rows: Int, passes: Int) {
        let rowBytes = canvas.width * (wide ? 8 : 4)
        let scratch = UnsafeMutableRawBufferPointer.allocate(byteCount: wide ? rowBytes : 0, alignment: 16)
        defer { scratch.deallocate() }
        var rows = 0, passes = 0
        while true {
            if rows % 16 == 0 { try cancellation.check() }
            var info = spng_row_info()
            let status = spng_get_row_info(context, &info)
            if status == Int32(SPNG_EOI.rawValue) { return (rows, 7) }
            guard try Self.waiting(status) else { return (rows, passes) }
            let pass = Int(info.pass), row = Int(info.row_num)
            guard row < canvas.height, pass >= 0, pass < 7 else { throw WebImageError.corruptData("PNG: row \(row) of pass \(pass)") }
            // The first row of a later pass means every pass before it is whole.
            passes = max(passes, pass)
            let target = canvas.row(row)
            let decoded = wide ? spng_decode_row(context, scratch.baseAddress, rowBytes)
                : spng_decode_row(context, target, rowBytes)
            if decoded != 0, decoded != Int32(SPNG_EOI.rawValue) {
                guard try Self.waiting(decoded) else { return (rows, passes) }
            }
            if wide {
                // High byte of each 16-bit sample (the one-shot decode's rule), at the pass's columns.
                let samples = scratch.bindMemory(to: UInt16.self)
                let (start, step) = interlaced ? Self.passColumns[pass] : (0, 1)
                var x = start
                while x < canvas.width {
                    for channel in 0..<4 { target[x * 4 + channel] = UInt8(samples[x * 4 + channel] >> 8) }
                    x += step
                }
            }
            rows += 1
            if decoded == Int32(SPNG_EOI.rawValue) { return (rows, 7) }
        }
    }

    /// The canvas with every pixel taken from the top-left pixel of its block under `passes`
    /// complete Adam7 passes.
    private func filledFromPasses(_ canvas: PartialCanvas, passes: Int) throws -> Bitmap {
        let block = Self.passBlocks[max(0, min(passes, 7) - 1)]
        return try Bitmap(width: canvas.width, height: canvas.height) { target in
            let to = target.bindMemory(to: UInt32.self)
            for y in 0..<canvas.height {
                if y % 16 == 0 { try cancellation.check() }
                let source = UnsafeRawPointer(canvas.row(y - y % block.height)).assumingMemoryBound(to: UInt32.self)
                let rowStart = y * canvas.width
                for x in 0..<canvas.width { to[rowStart + x] = source[x - x % block.width] }
            }
        }
    }

    /// `true` for success, `false` when libspng ran out of data (wait for more), throws otherwise.
    private static func waiting(_ status: Int32) throws -> Bool {
        if status == 0 { return true }
        if status == Int32(SPNG_IO_EOF.rawValue) || status == Int32(SPNG_EOF.rawValue) { return false }
        try PNGCoder.check(status)
        return true
    }
}

extension PNGCoder {
    /// A ``PNGIncrementalDecoder`` for PNG data.
    public func makeIncrementalDecoder(for format: ImageFormat, options: DecodeOptions) -> (any IncrementalImageDecoder)? {
        format == .png ? PNGIncrementalDecoder(options: options) : nil
    }
}
