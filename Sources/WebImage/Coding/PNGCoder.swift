import CPNG
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// PNG decoding and encoding with libspng, and APNG animation on top of it.
///
/// Every PNG colour type and bit depth decodes to straight-alpha RGBA8 (tRNS applied, 16-bit
/// samples reduced to their high byte, no gamma correction). Declared sizes are checked against the
/// pixel limit before any pixel memory exists, and libspng's own chunk limits keep hostile
/// metadata bounded.
package struct PNGCoder: ImageCoder {
    /// Creates the coder.
    package init() {}

    static let signature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]

    package func canDecode(_ data: Data) -> Bool {
        data.count >= 8 && data.starts(with: Self.signature)
    }

    package func decode(_ data: Data, options: DecodeOptions) throws -> DecodedImage {
        guard !data.isEmpty else { throw WebImageError.emptyData }
        if FormatDetection(data).isAnimated, !options.firstFrameOnly,
           let animation = try APNGDecoder.decode(data, options: options) {
            // The colour chunks precede the image data and apply to every frame.
            return try ColorConversion.applying(PNGColorProfile.profile(of: data), to: animation, options: options)
        }
        let still: Still
        do {
            still = try Self.decodeStill(data, options: options)
        } catch WebImageError.corruptData(let reason) {
            // libspng insists that tRNS follows PLTE; libpng and Pillow accept the reverse order.
            guard let repaired = Self.movingTransparencyAfterPalette(data) else { throw WebImageError.corruptData(reason) }
            still = try Self.decodeStill(repaired, options: options)
        }
        let scaled = try Self.scaled(still.bitmap, options: options)
        let bitmap = options.keepsColors ? scaled
            : try ColorConversion.convertToSRGB(scaled, iccProfile: still.profile, parallel: options.parallelDecoding)
        var image = DecodedImage(bitmap: bitmap, format: .png, orientation: still.orientation,
                                 scale: options.scale, hasAlpha: still.hasAlpha)
        if options.keepsColors { image.iccProfile = ColorConversion.keptProfile(still.profile) }
        return image
    }

    package func canEncode(_ format: ImageFormat) -> Bool { format == .png }

    /// Encodes the first frame as an 8-bit RGBA PNG (RGB when the image has no alpha), Adam7
    /// interlaced with ``EncodeOptions/progressive``.
    package func encode(_ image: DecodedImage, format: ImageFormat, options: EncodeOptions) throws -> Data {
        guard format == .png else { throw WebImageError.unsupportedFormat("PNGCoder encodes PNG only") }
        return try Self.encodeBitmap(image.bitmap, keepAlpha: image.hasAlpha || image.bitmap.containsTransparency,
                                     iccProfile: image.iccProfile, interlaced: options.progressive)
    }

    // MARK: - Still images

    struct Still {
        var bitmap: Bitmap
        var hasAlpha: Bool
        var orientation: ImageOrientation
        /// The colour profile the PNG declares (see ``PNGColorProfile``), `nil` for sRGB.
        var profile: Data? = nil
    }

    /// Decodes one (non-animated) PNG stream with libspng.
    static func decodeStill(_ data: Data, options: DecodeOptions, checkLimit: Bool = true) throws -> Still {
        try data.withUnsafeBytes { bytes -> Still in
            guard let base = bytes.baseAddress else { throw WebImageError.emptyData }
            guard let context = spng_ctx_new(0) else { throw WebImageError.corruptData("cannot create a PNG decoder") }
            defer { spng_ctx_free(context) }
            // Ancillary chunks with bad CRCs are skipped (as libpng does); critical ones fail.
            spng_set_crc_action(context, Int32(SPNG_CRC_ERROR.rawValue), Int32(SPNG_CRC_DISCARD.rawValue))
            spng_set_chunk_limits(context, 16 << 20, 64 << 20)
            try check(spng_set_png_buffer(context, base, bytes.count))
            var header = spng_ihdr()
            try check(spng_get_ihdr(context, &header))
            let width = Int(header.width), height = Int(header.height)
            if checkLimit {
                try options.checkFullSizeCanvas(width: width, height: height)
            }
            var trns = spng_trns()
            let hasTRNS = spng_get_trns(context, &trns) == 0
            let colorType = Int(header.color_type)
            let hasAlpha = hasTRNS || colorType == 4 || colorType == 6
            let bitmap: Bitmap
            if header.bit_depth == 16 {
                bitmap = try decodeSixteenBit(context, width: width, height: height)
            } else {
                var size = 0
                try check(spng_decoded_image_size(context, Int32(SPNG_FMT_RGBA8.rawValue), &size))
                guard size == width * height * 4 else { throw WebImageError.corruptData("PNG size mismatch") }
                bitmap = try Bitmap(width: width, height: height) { buffer in
                    if header.interlace_method == 0, options.stop.cancellation != nil {
                        try decodeRows(context, into: buffer, rowBytes: width * 4, stop: options.stop)
                    } else {
                        try check(spng_decode_image(context, buffer.baseAddress, size, Int32(SPNG_FMT_RGBA8.rawValue),
                                                    Int32(SPNG_DECODE_TRNS.rawValue)))
                    }
                }
            }
            var exif = spng_exif()
            var orientation = ImageOrientation.up
            if spng_get_exif(context, &exif) == 0, let pointer = exif.data, exif.length > 0 {
                orientation = EXIFReader.orientation(inTIFF: Data(bytes: pointer, count: exif.length)) ?? .up
            }
            return Still(bitmap: bitmap, hasAlpha: hasAlpha, orientation: orientation,
                         profile: PNGColorProfile.profile(in: context))
        }
    }

    /// A non-interlaced image row by row (libspng's progressive API, the loop `spng_decode_image`
    /// runs inside itself), looking at `stop` between bands of rows: a decode stopped from outside
    /// ends there. An interlaced image's rows arrive pass by pass and are decoded whole.
    private static func decodeRows(_ context: OpaquePointer, into buffer: UnsafeMutableRawBufferPointer, rowBytes: Int,
                                   stop: StopFlag) throws {
        try check(spng_decode_image(context, nil, 0, Int32(SPNG_FMT_RGBA8.rawValue),
                                    Int32(SPNG_DECODE_TRNS.rawValue | SPNG_DECODE_PROGRESSIVE.rawValue)))
        var decoded = 0
        while true {
            if decoded % rowsBetweenStopChecks == 0 { try stop.check() }
            var info = spng_row_info()
            let status = spng_get_row_info(context, &info)
            if status == Int32(SPNG_EOI.rawValue) { return }
            try check(status)
            let row = Int(info.row_num)
            guard row >= 0, (row + 1) * rowBytes <= buffer.count else { throw WebImageError.corruptData("PNG row \(row) outside the image") }
            let result = spng_decode_row(context, buffer.baseAddress! + row * rowBytes, rowBytes)
            if result == Int32(SPNG_EOI.rawValue) { return }
            try check(result)
            decoded += 1
        }
    }

    /// How many rows a decode works through between looks at its stop flag.
    static let rowsBetweenStopChecks = 64

    /// 16-bit samples: decode to RGBA16 and keep each sample's high byte, the oracle's rule.
    private static func decodeSixteenBit(_ context: OpaquePointer, width: Int, height: Int) throws -> Bitmap {
        var size = 0
        try check(spng_decoded_image_size(context, Int32(SPNG_FMT_RGBA16.rawValue), &size))
        guard size == width * height * 8 else { throw WebImageError.corruptData("PNG size mismatch") }
        let wide = UnsafeMutableRawPointer.allocate(byteCount: size, alignment: 16)
        defer { wide.deallocate() }
        try check(spng_decode_image(context, wide, size, Int32(SPNG_FMT_RGBA16.rawValue), Int32(SPNG_DECODE_TRNS.rawValue)))
        let samples = wide.bindMemory(to: UInt16.self, capacity: size / 2)
        return try Bitmap(width: width, height: height) { buffer in
            for index in 0..<(size / 2) { buffer[index] = UInt8(samples[index] >> 8) }
        }
    }

    static func scaled(_ bitmap: Bitmap, options: DecodeOptions) throws -> Bitmap {
        let target = try options.targetSize(width: bitmap.width, height: bitmap.height)
        guard (target.width, target.height) != (bitmap.width, bitmap.height) else { return bitmap }
        return try Resampler.resize(bitmap, width: target.width, height: target.height, options: options)
    }

    static func check(_ status: Int32) throws {
        guard status != 0 else { return }
        let message = String(cString: spng_strerror(status))
        switch status {
        case Int32(SPNG_IO_EOF.rawValue), Int32(SPNG_EOF.rawValue):
            throw WebImageError.truncatedData("PNG: \(message)")
        case Int32(SPNG_EWIDTH.rawValue), Int32(SPNG_EHEIGHT.rawValue), Int32(SPNG_EUSER_WIDTH.rawValue),
             Int32(SPNG_EUSER_HEIGHT.rawValue), Int32(SPNG_EOVERFLOW.rawValue), Int32(SPNG_ECHUNK_LIMITS.rawValue),
             Int32(SPNG_EMEM.rawValue):
            throw WebImageError.tooLarge("PNG: \(message)")
        default:
            throw WebImageError.corruptData("PNG: \(message)")
        }
    }

    /// The same PNG with a `tRNS` chunk that precedes `PLTE` moved right after it, or `nil` when
    /// the chunks are not in that order.
    static func movingTransparencyAfterPalette(_ data: Data) -> Data? {
        var chunks: [(type: String, range: Range<Int>)] = []
        var offset = data.startIndex + 8
        while offset + 12 <= data.endIndex, let length = data.bigEndianUInt32(at: offset).map(Int.init) {
            let end = offset + 12 + length
            guard end <= data.endIndex else { return nil }
            chunks.append((String(decoding: data[(offset + 4)..<(offset + 8)], as: UTF8.self), offset..<end))
            offset = end
        }
        guard let transparency = chunks.firstIndex(where: { $0.type == "tRNS" }),
              let palette = chunks.firstIndex(where: { $0.type == "PLTE" }), transparency < palette else { return nil }
        let moved = chunks.remove(at: transparency)
        chunks.insert(moved, at: palette)
        var repaired = Data(signature)
        for chunk in chunks { repaired.append(data[chunk.range]) }
        repaired.append(data[offset...])
        return repaired
    }

    // MARK: - Encoding

    static func encodeBitmap(_ bitmap: Bitmap, keepAlpha: Bool, iccProfile: Data? = nil, interlaced: Bool = false) throws -> Data {
        guard let context = spng_ctx_new(Int32(SPNG_CTX_ENCODER.rawValue)) else {
            throw WebImageError.encodingFailed("cannot create a PNG encoder")
        }
        defer { spng_ctx_free(context) }
        spng_set_option(context, SPNG_ENCODE_TO_BUFFER, 1)
        var header = spng_ihdr(width: UInt32(bitmap.width), height: UInt32(bitmap.height), bit_depth: 8,
                               color_type: UInt8(keepAlpha ? 6 : 2), compression_method: 0, filter_method: 0,
                               interlace_method: interlaced ? 1 : 0)
        guard spng_set_ihdr(context, &header) == 0 else { throw WebImageError.encodingFailed("PNG header") }
        // libspng keeps a pointer to the profile until the image is encoded, so the copy lives as
        // long as this function.
        let profileCopy = UnsafeMutableRawBufferPointer.allocate(byteCount: max(1, iccProfile?.count ?? 0), alignment: 1)
        defer { profileCopy.deallocate() }
        if let iccProfile, !iccProfile.isEmpty {
            _ = iccProfile.copyBytes(to: profileCopy.bindMemory(to: UInt8.self))
            var iccp = spng_iccp()
            withUnsafeMutableBytes(of: &iccp.profile_name) { name in
                for (index, byte) in "ICC profile".utf8.enumerated() { name[index] = byte }
            }
            iccp.profile_len = iccProfile.count
            iccp.profile = profileCopy.baseAddress?.assumingMemoryBound(to: CChar.self)
            let status = spng_set_iccp(context, &iccp)
            guard status == 0 else { throw WebImageError.encodingFailed("PNG iCCP: \(String(cString: spng_strerror(status)))") }
        }
        var status: Int32
        if keepAlpha {
            status = bitmap.withUnsafeBytes { bytes in
                spng_encode_image(context, bytes.baseAddress, bytes.count, Int32(SPNG_FMT_PNG.rawValue),
                                  Int32(SPNG_ENCODE_FINALIZE.rawValue))
            }
        } else {
            let rgb = bitmap.withUnsafeBytes { bytes in
                var rgb = [UInt8](repeating: 0, count: bitmap.width * bitmap.height * 3)
                for pixel in 0..<(bitmap.width * bitmap.height) {
                    rgb[pixel * 3] = bytes[pixel * 4]
                    rgb[pixel * 3 + 1] = bytes[pixel * 4 + 1]
                    rgb[pixel * 3 + 2] = bytes[pixel * 4 + 2]
                }
                return rgb
            }
            status = rgb.withUnsafeBytes { bytes in
                spng_encode_image(context, bytes.baseAddress, bytes.count, Int32(SPNG_FMT_PNG.rawValue),
                                  Int32(SPNG_ENCODE_FINALIZE.rawValue))
            }
        }
        guard status == 0 else { throw WebImageError.encodingFailed("PNG: \(String(cString: spng_strerror(status)))") }
        var length = 0
        var error: Int32 = 0
        guard let buffer = spng_get_png_buffer(context, &length, &error), error == 0 else {
            throw WebImageError.encodingFailed("PNG: no output")
        }
        defer { free(buffer) }
        return Data(bytes: buffer, count: length)
    }
}
