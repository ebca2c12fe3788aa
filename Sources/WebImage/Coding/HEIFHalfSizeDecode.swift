import CHEIF

/// A HEIF image decoded for a thumbnail at most half its size: libheif hands out its YCbCr 4:2:0
/// planes, and each 2×2 block of luma with its chroma (the one 4:2:0 sample it shares, or the
/// average of four 4:4:4 ones) becomes one RGBA pixel.
///
/// libheif's own conversion would make a full-size RGBA image first (48 MB for 12 MP, most of
/// the time a thumbnail spends outside the HEVC decoder, with the page faults of memory that
/// size) only for the resampler to average it down again. Averaging the four luma samples
/// before the YCbCr-to-RGB matrix gives what averaging their RGB would, since the matrix is
/// affine and libheif upsamples 4:2:0 chroma by repetition (only the clamp of out-of-range
/// values differs). The half-size image is then resampled to the target as before.
///
/// Only 8-bit 4:2:0 and 4:4:4 images without alpha, in a matrix this knows (BT.709, BT.601,
/// BT.2020 NCL, or none declared: libheif's BT.601 full range), come this way; others decode as
/// before.
enum HEIFHalfSizeDecode {
    /// Whether `handle` may be decoded this way (checked before decoding anything; the planes'
    /// layout is known only after, see ``bitmap(of:nclx:)``).
    static func applies(to handle: OpaquePointer) -> Bool {
        heif_image_handle_has_alpha_channel(handle) == 0 && heif_image_handle_get_luma_bits_per_pixel(handle) == 8
            && heif_image_handle_get_chroma_bits_per_pixel(handle) == 8
    }

    /// The YCbCr-to-RGB constants of an nclx matrix: luma's weights of red and blue.
    static func weights(matrix: heif_matrix_coefficients) -> (kr: Float, kb: Float)? {
        switch matrix {
        case heif_matrix_coefficients_ITU_R_BT_709_5: (0.2126, 0.0722)
        case heif_matrix_coefficients_ITU_R_BT_470_6_System_B_G, heif_matrix_coefficients_ITU_R_BT_601_6: (0.299, 0.114)
        case heif_matrix_coefficients_ITU_R_BT_2020_2_non_constant_luminance: (0.2627, 0.0593)
        default: nil
        }
    }

    /// The half-size RGBA bitmap of a decoded YCbCr 4:2:0 or 4:4:4 `image` (`ceil(width/2)` ×
    /// `ceil(height/2)`), or `nil` when the image is not one this converts.
    /// - Throws: ``WebImageError/tooLarge(_:)`` when the bitmap's memory cannot be had.
    static func bitmap(of image: OpaquePointer, nclx: heif_color_profile_nclx?) throws -> Bitmap? {
        let chroma = heif_image_get_chroma_format(image)
        guard heif_image_get_colorspace(image) == heif_colorspace_YCbCr, chroma == heif_chroma_420 || chroma == heif_chroma_444
        else { return nil }
        let subsampled = chroma == heif_chroma_420
        let (kr, kb): (Float, Float)
        let fullRange: Bool
        if let nclx {
            guard let known = weights(matrix: nclx.matrix_coefficients) else { return nil }
            (kr, kb) = known
            fullRange = nclx.full_range_flag != 0
        } else {
            (kr, kb, fullRange) = (0.299, 0.114, true)
        }
        let width = Int(heif_image_get_width(image, heif_channel_Y)), height = Int(heif_image_get_height(image, heif_channel_Y))
        let (halfWidth, halfHeight) = ((width + 1) / 2, (height + 1) / 2)
        let chromaSize = subsampled ? (halfWidth, halfHeight) : (width, height)
        var strides: (Int32, Int32, Int32) = (0, 0, 0)
        guard width > 0, height > 0,
              [heif_channel_Y, heif_channel_Cb, heif_channel_Cr].allSatisfy({ heif_image_get_bits_per_pixel_range(image, $0) == 8 }),
              [heif_channel_Cb, heif_channel_Cr].allSatisfy({
                  Int(heif_image_get_width(image, $0)) == chromaSize.0 && Int(heif_image_get_height(image, $0)) == chromaSize.1 }),
              let luma = heif_image_get_plane_readonly(image, heif_channel_Y, &strides.0),
              let blue = heif_image_get_plane_readonly(image, heif_channel_Cb, &strides.1),
              let red = heif_image_get_plane_readonly(image, heif_channel_Cr, &strides.2),
              Int(strides.0) >= width, Int(strides.1) >= chromaSize.0, Int(strides.2) >= chromaSize.0 else { return nil }
        let kg = 1 - kr - kb
        // Per unit of (chroma - 128) after the range expansion; luma scaled by a quarter for the
        // sum of four samples.
        let lumaScale: Float = fullRange ? 0.25 : 0.25 * 255 / 219, lumaOffset: Float = fullRange ? 0 : -16 * 255 / 219
        let chromaScale: Float = fullRange ? 1 : 255 / 224
        let (redFromCr, blueFromCb) = (2 * (1 - kr) * chromaScale, 2 * (1 - kb) * chromaScale)
        let (greenFromCb, greenFromCr) = (-2 * kb * (1 - kb) / kg * chromaScale, -2 * kr * (1 - kr) / kg * chromaScale)
        let (lumaStride, blueStride, redStride) = (Int(strides.0), Int(strides.1), Int(strides.2))
        return try Bitmap(width: halfWidth, height: halfHeight) { buffer in
            guard let out = buffer.bindMemory(to: UInt8.self).baseAddress else { return }
            for y in 0..<halfHeight {
                // Odd sizes: the last row (column) of blocks repeats its one row (column) of samples.
                let (top, next) = (2 * y, min(height - 1, 2 * y + 1))
                let row = out + y * halfWidth * 4
                for x in 0..<halfWidth {
                    let (left, right) = (2 * x, min(width - 1, 2 * x + 1))
                    @inline(__always) func sum(_ plane: UnsafePointer<UInt8>, _ stride: Int) -> Int {
                        Int(plane[top * stride + left]) + Int(plane[top * stride + right])
                            + Int(plane[next * stride + left]) + Int(plane[next * stride + right])
                    }
                    let l = Float(sum(luma, lumaStride)) * lumaScale + lumaOffset
                    let (u, v) = subsampled
                        ? (Float(Int(blue[y * blueStride + x]) - 128), Float(Int(red[y * redStride + x]) - 128))
                        : (Float(sum(blue, blueStride) - 512) * 0.25, Float(sum(red, redStride) - 512) * 0.25)
                    let pixel = row + x * 4
                    pixel[0] = Self.byte(l + redFromCr * v)
                    pixel[1] = Self.byte(l + greenFromCb * u + greenFromCr * v)
                    pixel[2] = Self.byte(l + blueFromCb * u)
                    pixel[3] = 255
                }
            }
        }
    }

    @inline(__always)
    private static func byte(_ value: Float) -> UInt8 {
        UInt8(min(255, max(0, value + 0.5)))
    }
}
