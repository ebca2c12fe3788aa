import CJPEG
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// JPEG decoding and encoding with libjpeg-turbo's TurboJPEG API.
///
/// Decodes baseline, progressive, grayscale and CMYK/YCCK JPEGs straight into the returned
/// bitmap's memory. What libjpeg decodes with warnings (stray bytes, data that ends in the middle
/// of a scan, filled in grey) decodes here too, as in Pillow and browsers; only fatal errors fail.
/// Files TurboJPEG cannot classify (unusual sampling factors) go through libjpeg's own API
/// (``JPEGLibDecompressor``), and a file far too small for its declared size is refused before
/// any pixel memory is taken (``JPEGDataPlausibility``). Thumbnails use the DCT's own scaling (1/2, 1/4, 1/8) so the full-size bitmap
/// is never allocated, then a high-quality resample to the exact size; at 1/8 scale, sequential
/// JPEGs are read from their DC coefficients by ``JPEGEighthScaleDecoder`` (same pixels as
/// libjpeg-turbo's, 1.39x `tjDecompress2`'s speed on a 1 MP photo and 1.88x on a 12 MP one,
/// one thread, best of alternating rounds, 2026-12-05: Benchmarks/scripts/compare-eighth-scale.sh). The EXIF
/// orientation is reported, not applied.
package struct JPEGCoder: ImageCoder {
    /// Whether 1/8-scale decodes go through ``JPEGEighthScaleDecoder`` when it can take the file
    /// (tests turn it off to compare it with libjpeg-turbo).
    package var decodesEighthScaleFromDC = true

    /// Creates the coder.
    package init() {}

    package func canDecode(_ data: Data) -> Bool {
        data.count >= 3 && data.starts(with: [0xFF, 0xD8, 0xFF])
    }

    package func decode(_ data: Data, options: DecodeOptions) throws -> DecodedImage {
        guard !data.isEmpty else { throw WebImageError.emptyData }
        let profile = JPEGICCProfile.read(data)
        var isCMYKImage = false
        let bitmap = try data.withUnsafeBytes { bytes -> Bitmap in
            guard let base = bytes.bindMemory(to: UInt8.self).baseAddress else { throw WebImageError.emptyData }
            guard let handle = tjInitDecompress() else { throw WebImageError.corruptData("cannot create a JPEG decoder") }
            defer { tjDestroy(handle) }
            var width: Int32 = 0, height: Int32 = 0, subsampling: Int32 = 0, colorspace: Int32 = 0
            if tjDecompressHeader3(handle, base, UInt(bytes.count), &width, &height, &subsampling, &colorspace) != 0 {
                // TurboJPEG 2.1 refuses to describe sampling factors outside its list (e.g. 1×3
                // luma); libjpeg's own API decodes every sampling libjpeg supports.
                if String(cString: tjGetErrorStr2(handle)).contains("subsampling") {
                    return try decodeThroughLibjpeg(bytes, options: options, profile: profile, isCMYK: &isCMYKImage)
                }
                // A warning (e.g. stray bytes before a marker) still read the whole header.
                guard tjGetErrorCode(handle) == TJERR_WARNING.rawValue, width > 0, height > 0 else {
                    throw Self.error(message: String(cString: tjGetErrorStr2(handle)))
                }
            }
            let target = try options.targetSize(width: Int(width), height: Int(height))
            try JPEGDataPlausibility.check(bytes, width: Int(width), height: Int(height))
            let scaled = Self.dctScaledSize(width: Int(width), height: Int(height), atLeast: target)
            let isCMYK = colorspace == Int32(TJCS_CMYK.rawValue) || colorspace == Int32(TJCS_YCCK.rawValue)
            isCMYKImage = isCMYK
            let pixelFormat = isCMYK ? TJPF_CMYK : TJPF_RGBA
            // Every 1/8-scale decode the DC decoder takes goes to it: no size crossover was found
            // (1.39x `tjDecompress2` at 1 MP, 1.88x at 12 MP, one thread; compare-eighth-scale.sh).
            // TurboJPEG decodes at 1/8 only when 1/4 gives a larger size: it takes the largest
            // scale that fits the size asked for, so a picture of at most 4 pixels a side decodes
            // at 1/4 or 1/2, and the DC decoder stands aside to keep its pixels.
            let eighth = ((Int(width) + 7) / 8, (Int(height) + 7) / 8), quarter = ((Int(width) + 3) / 4, (Int(height) + 3) / 4)
            let isEighthScale = (scaled.width, scaled.height) == eighth && (quarter.0 > eighth.0 || quarter.1 > eighth.1)
            let fastDecoded = isEighthScale && !isCMYK && decodesEighthScaleFromDC
                ? try JPEGEighthScaleDecoder.decode(bytes, options: options) : nil
            if fastDecoded == nil, !isCMYK, !options.keepsColors, (scaled.width, scaled.height) == (target.width, target.height),
               let transform = ColorConversion.rgbaTransform(for: profile) {
                return try Self.decodeConverting(bytes, transform: transform, size: scaled,
                                                 denominator: Self.dctDenominator(width: Int(width), height: Int(height), atLeast: target),
                                                 options: options)
            }
            let decoded = try fastDecoded ?? Bitmap(width: scaled.width, height: scaled.height) { buffer in
                let output = buffer.bindMemory(to: UInt8.self).baseAddress!
                let status = tjDecompress2(handle, base, UInt(bytes.count), output, Int32(scaled.width), 0,
                                           Int32(scaled.height), pixelFormat.rawValue, 0)
                // Warnings are corruption libjpeg recovered from (stray bytes, data that ends early
                // and is filled in grey): the image libjpeg, Pillow and browsers show. Only fatal
                // errors fail.
                if status != 0, tjGetErrorCode(handle) != TJERR_WARNING.rawValue {
                    throw Self.error(message: String(cString: tjGetErrorStr2(handle)))
                }
                if isCMYK {
                    Self.convertCMYK(buffer, inverted: Self.hasAdobeMarker(bytes), profile: profile, options: options)
                }
            }
            let resized = try Self.resized(decoded, to: target, options: options)
            return isCMYK || options.keepsColors ? resized
                : try ColorConversion.convertToSRGB(resized, iccProfile: profile, parallel: options.parallelDecoding)
        }
        var image = DecodedImage(bitmap: bitmap, format: .jpeg,
                                 orientation: EXIFReader.orientation(inJPEG: data) ?? .up,
                                 scale: options.scale, hasAlpha: false)
        if options.keepsColors, !isCMYKImage { image.iccProfile = ColorConversion.keptProfile(profile) }
        return image
    }

    /// Decodes with libjpeg's full API (see ``JPEGLibDecompressor``) under the same rules as the
    /// TurboJPEG path: the same size checks first, the same DCT scaling, warnings kept.
    private func decodeThroughLibjpeg(_ bytes: UnsafeRawBufferPointer, options: DecodeOptions, profile: Data?,
                                      isCMYK: inout Bool) throws -> Bitmap {
        let decompressor = try JPEGLibDecompressor(bytes)
        let (width, height) = (decompressor.width, decompressor.height)
        isCMYK = decompressor.isCMYK
        let target = try options.targetSize(width: width, height: height)
        try JPEGDataPlausibility.check(bytes, width: width, height: height)
        let denominator = Self.dctDenominator(width: width, height: height, atLeast: target)
        let scaled = ((width + denominator - 1) / denominator, (height + denominator - 1) / denominator)
        let decoded = try decompressor.decode(denominator: denominator, size: scaled) { buffer in
            Self.convertCMYK(buffer, inverted: Self.hasAdobeMarker(bytes), profile: profile, options: options)
        }
        let resized = try Self.resized(decoded, to: target, options: options)
        return isCMYK || options.keepsColors ? resized
            : try ColorConversion.convertToSRGB(resized, iccProfile: profile, parallel: options.parallelDecoding)
    }

    /// A decode that needs no resample, with a profile to convert: through libjpeg's row API, so
    /// each batch of rows is converted to sRGB while it is still in cache (on a second thread when
    /// there is one, see ``RowConversionPipeline``). TurboJPEG 2.1 hands back only whole images.
    private static func decodeConverting(_ bytes: UnsafeRawBufferPointer, transform: ICCTransform, size: (width: Int, height: Int),
                                         denominator: Int, options: DecodeOptions) throws -> Bitmap {
        let decompressor = try JPEGLibDecompressor(bytes)
        return try Bitmap(width: size.width, height: size.height) { buffer in
            try RowConversionPipeline.run(transform, buffer: buffer, rowBytes: size.width * 4, parallel: options.parallelDecoding) { rowsDone in
                try decompressor.decode(into: buffer, denominator: denominator, size: size, convertCMYK: { _ in }, rowsDone: rowsDone)
            }
        }
    }

    /// `decoded` itself when it has the target size, else resampled to it.
    private static func resized(_ decoded: Bitmap, to target: (width: Int, height: Int), options: DecodeOptions) throws -> Bitmap {
        if (decoded.width, decoded.height) == (target.width, target.height) { return decoded }
        return try Resampler.resize(decoded, width: target.width, height: target.height, filter: .lanczos3, options: options)
    }

    package func canEncode(_ format: ImageFormat) -> Bool { format == .jpeg }

    /// Encodes the first frame as a baseline JPEG of `options.quality` (progressive with
    /// ``EncodeOptions/progressive``: TurboJPEG's `jpeg_simple_progression`). Transparent images are
    /// composited over white first, since JPEG has no alpha.
    package func encode(_ image: DecodedImage, format: ImageFormat, options: EncodeOptions) throws -> Data {
        guard format == .jpeg else { throw WebImageError.unsupportedFormat("JPEGCoder encodes JPEG only") }
        let bitmap = image.hasAlpha ? try Self.flattenedOnWhite(image.bitmap) : image.bitmap
        let quality = Int32(min(100, max(1, (options.quality * 100).rounded())))
        let encoded = try Self.encode(bitmap, quality: quality, sampling: quality >= 95 ? .full : .halfBoth,
                                      progressive: options.progressive)
        guard let profile = image.iccProfile else { return encoded }
        return JPEGICCProfile.embedding(profile, in: encoded)
    }

    /// Chroma sampling for ``encode(_:quality:sampling:)``.
    enum ChromaSampling {
        /// 4:4:4, 4:2:2, 4:2:0, 4:4:0, 4:1:1, and luma only.
        case full, halfAcross, halfBoth, halfDown, quarterAcross, gray

        var turboJPEG: TJSAMP {
            switch self {
            case .full: TJSAMP_444
            case .halfAcross: TJSAMP_422
            case .halfBoth: TJSAMP_420
            case .halfDown: TJSAMP_440
            case .quarterAcross: TJSAMP_411
            case .gray: TJSAMP_GRAY
            }
        }
    }

    /// Encodes an opaque bitmap as a baseline (or progressive) JPEG with the given quality
    /// (1...100) and sampling.
    static func encode(_ bitmap: Bitmap, quality: Int32, sampling: ChromaSampling, progressive: Bool = false) throws -> Data {
        guard let handle = tjInitCompress() else { throw WebImageError.encodingFailed("cannot create a JPEG encoder") }
        defer { tjDestroy(handle) }
        let subsampling = sampling.turboJPEG
        var output: UnsafeMutablePointer<UInt8>?
        var size: UInt = 0
        let status = bitmap.withUnsafeBytes { bytes in
            tjCompress2(handle, bytes.bindMemory(to: UInt8.self).baseAddress, Int32(bitmap.width), 0,
                        Int32(bitmap.height), TJPF_RGBA.rawValue, &output, &size,
                        Int32(subsampling.rawValue), quality, progressive ? TJFLAG_PROGRESSIVE : 0)
        }
        defer { if let output { tjFree(output) } }
        guard status == 0, let output else {
            throw WebImageError.encodingFailed(String(cString: tjGetErrorStr2(handle)))
        }
        return Data(bytes: output, count: Int(size))
    }

    /// The smallest DCT-scaled size (1/1, 1/2, 1/4, 1/8) that still covers `target`.
    package static func dctScaledSize(width: Int, height: Int, atLeast target: (width: Int, height: Int)) -> (width: Int, height: Int) {
        let denominator = dctDenominator(width: width, height: height, atLeast: target)
        return ((width + denominator - 1) / denominator, (height + denominator - 1) / denominator)
    }

    /// The largest DCT scaling denominator (8, 4, 2 or 1) whose output still covers `target`.
    package static func dctDenominator(width: Int, height: Int, atLeast target: (width: Int, height: Int)) -> Int {
        for denominator in [8, 4, 2] {
            let scaledWidth = (width + denominator - 1) / denominator
            let scaledHeight = (height + denominator - 1) / denominator
            if scaledWidth >= target.width, scaledHeight >= target.height { return denominator }
        }
        return 1
    }

    /// The typed error for a libjpeg (or TurboJPEG) error message.
    static func error(message: String) -> WebImageError {
        if message.contains("Premature end") || message.contains("insufficient data") {
            return .truncatedData(message)
        }
        if message.contains("Unsupported JPEG process") || message.contains("Unsupported JPEG data precision") {
            return .unsupportedFormat("JPEG: \(message)")
        }
        if message.contains("Maximum supported image dimension") {
            return .tooLarge(message)
        }
        return .corruptData(message)
    }

    /// Whether an Adobe APP14 segment is present: Adobe writes CMYK inverted.
    private static func hasAdobeMarker(_ bytes: UnsafeRawBufferPointer) -> Bool {
        !JPEGMarkerWalker.payloads(of: JPEGMarkerWalker.Marker.app14, signature: Array("Adobe".utf8), in: bytes).isEmpty
    }

    /// CMYK to RGB in place: through the file's CMYK profile with Little CMS (see
    /// ``ColorConversion``), or with the plain formula when colours are kept or there is no
    /// usable CMYK profile.
    private static func convertCMYK(_ buffer: UnsafeMutableRawBufferPointer, inverted: Bool, profile: Data?, options: DecodeOptions) {
        let managed = options.keepsColors ? false
            : ColorConversion.convertCMYKInPlace(buffer, iccProfile: profile, inverted: inverted, parallel: options.parallelDecoding)
        if !managed { convertCMYKToRGBA(buffer, inverted: inverted) }
    }

    /// CMYK to RGB in place, the plain way Pillow does it (no colour management).
    private static func convertCMYKToRGBA(_ buffer: UnsafeMutableRawBufferPointer, inverted: Bool) {
        let pixels = buffer.bindMemory(to: UInt8.self)
        var index = 0
        while index + 3 < pixels.count {
            var c = Int(pixels[index]), m = Int(pixels[index + 1]), y = Int(pixels[index + 2]), k = Int(pixels[index + 3])
            if inverted { c = 255 - c; m = 255 - m; y = 255 - y; k = 255 - k }
            let notK = 255 - k
            func channel(_ value: Int) -> UInt8 {
                let product = value * notK + 128
                return UInt8(clamping: notK - ((product >> 8) + product) >> 8)
            }
            pixels[index] = channel(c)
            pixels[index + 1] = channel(m)
            pixels[index + 2] = channel(y)
            pixels[index + 3] = 255
            index += 4
        }
    }

    private static func flattenedOnWhite(_ bitmap: Bitmap) throws -> Bitmap {
        try bitmap.withUnsafeBytes { source in
            try Bitmap(width: bitmap.width, height: bitmap.height) { target in
                var index = 0
                while index + 3 < source.count {
                    let alpha = Int(source[index + 3])
                    for channel in 0..<3 {
                        target[index + channel] = UInt8((Int(source[index + channel]) * alpha + 255 * (255 - alpha) + 127) / 255)
                    }
                    target[index + 3] = 255
                    index += 4
                }
            }
        }
    }
}
