import CJPEGLib

/// One decode through libjpeg-turbo's full libjpeg API (`jpeglib.h`), for the JPEGs TurboJPEG
/// will not take: TurboJPEG 2.1 refuses to describe sampling factors outside its fixed list
/// (1×3 luma, 4:1:0 and the like), which libjpeg decodes like any other. Ordinary files never
/// come here: TurboJPEG sets up faster.
///
/// Every libjpeg call goes through a C wrapper in the `CJPEGLib` shim that catches libjpeg's
/// fatal errors (see there); warnings, libjpeg's recoverable corruption, are counted and the
/// output kept, as TurboJPEG's callers here keep it.
struct JPEGLibDecompressor: ~Copyable {
    private let decoder: UnsafeMutablePointer<webimage_jpeg_decoder>

    /// Reads the headers of `bytes`, which must stay valid while the decompressor is used.
    /// - Throws: a ``WebImageError`` for a header libjpeg cannot read.
    init(_ bytes: UnsafeRawBufferPointer) throws {
        guard let base = bytes.baseAddress, bytes.count > 0 else { throw WebImageError.emptyData }
        guard let decoder = webimage_jpeg_create() else { throw WebImageError.tooLarge("cannot create a JPEG decoder") }
        guard webimage_jpeg_read_header(decoder, base.assumingMemoryBound(to: UInt8.self), UInt(bytes.count)) == 1 else {
            let error = JPEGCoder.error(message: String(cString: webimage_jpeg_error_text(decoder)))
            webimage_jpeg_destroy(decoder)
            throw error
        }
        self.decoder = decoder
    }

    deinit { webimage_jpeg_destroy(decoder) }

    var width: Int { Int(decoder.pointee.info.image_width) }
    var height: Int { Int(decoder.pointee.info.image_height) }
    var isCMYK: Bool { [JCS_CMYK, JCS_YCCK].contains(decoder.pointee.info.jpeg_color_space) }
    /// libjpeg's warnings so far, e.g. for data that ended early or bytes that are no marker.
    var warningCount: Int { Int(decoder.pointee.errors.num_warnings) }

    /// Decodes the image scaled by `1/denominator` (1, 2, 4 or 8) as RGBA, or as CMYK when
    /// ``isCMYK`` (converted by `convertCMYK` in place), into a bitmap of `size`, which must be
    /// the scaled size.
    consuming func decode(denominator: Int, size: (width: Int, height: Int),
                          convertCMYK: (UnsafeMutableRawBufferPointer) -> Void) throws -> Bitmap {
        try Bitmap(width: size.width, height: size.height) { buffer in
            try decode(into: buffer, denominator: denominator, size: size, convertCMYK: convertCMYK)
        }
    }

    /// ``decode(denominator:size:convertCMYK:)`` into `buffer` (the scaled size's RGBA8 bytes),
    /// calling `rowsDone` with the number of complete rows after each batch libjpeg returns (for
    /// ``RowConversionPipeline``).
    func decode(into buffer: UnsafeMutableRawBufferPointer, denominator: Int, size: (width: Int, height: Int),
                          convertCMYK: (UnsafeMutableRawBufferPointer) -> Void, rowsDone: (Int) -> Void = { _ in }) throws {
        let cmyk = isCMYK
        decoder.pointee.info.scale_num = 1
        decoder.pointee.info.scale_denom = UInt32(denominator)
        decoder.pointee.info.out_color_space = cmyk ? JCS_CMYK : JCS_EXT_RGBA
        try check(webimage_jpeg_calc_output_dimensions(decoder))
        guard Int(decoder.pointee.info.output_width) == size.width, Int(decoder.pointee.info.output_height) == size.height,
              decoder.pointee.info.output_components == 4 else {
            throw WebImageError.corruptData("JPEG: libjpeg scales \(width)×\(height) by 1/\(denominator) to an unexpected size")
        }
        guard buffer.count == size.width * size.height * 4,
              let base = buffer.baseAddress?.assumingMemoryBound(to: UInt8.self) else {
            throw WebImageError.corruptData("JPEG: output buffer size")
        }
        try check(webimage_jpeg_start_decompress(decoder))
        // Rows are handed to libjpeg 16 at a time; it fills as many per call as it has ready.
        let rowBytes = size.width * 4
        try withUnsafeTemporaryAllocation(of: UnsafeMutablePointer<UInt8>?.self, capacity: 16) { rows in
            var row = 0
            while row < size.height {
                let count = min(16, size.height - row)
                for index in 0..<count { rows[index] = base + (row + index) * rowBytes }
                try check(webimage_jpeg_read_scanlines(decoder, rows.baseAddress, UInt32(count)))
                row += count
                rowsDone(row)
            }
        }
        try check(webimage_jpeg_finish_decompress(decoder))
        if cmyk { convertCMYK(buffer) }
    }

    private func check(_ status: Int32) throws {
        guard status == 1 else { throw JPEGCoder.error(message: String(cString: webimage_jpeg_error_text(decoder))) }
    }
}
