import CAVIF
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// AVIF decoding and encoding with libavif (AV1 through dav1d to decode, aom to encode, as
/// Debian builds it): stills, image sequences, alpha, grids, 8/10/12-bit.
///
/// - Colour: YUV becomes RGB by the matrix and range the file declares (its `nclx`); then the
///   file's ICC profile, or its nclx primaries and transfer (Display P3, BT.2020, PQ and HLG
///   tone-mapped, see ``ColorProfileBuilder``), are converted to sRGB (see ``ColorConversion``)
///   unless ``DecodeOptions/keepsColors``. Deeper samples are rounded to 8 bits by libavif.
/// - Transformations: the clean aperture (`clap`) crop is applied, as a viewer shows it, unless
///   ``applyCleanAperture`` is off; `irot`/`imir` are reported as the EXIF-style
///   ``DecodedImage/orientation`` and not applied (``DecodeOptions/applyOrientation`` turns them).
/// - Thumbnails: AV1 has no reduced-size decode, so the frame is converted once at full size and
///   resampled; the YUV planes stay in libavif and only one full RGBA bitmap exists at a time.
/// - Limits: the size in the header is checked against ``DecodeOptions/pixelLimit`` before any
///   frame is decoded, and libavif's own size limit is set to it so the AV1 decoder refuses too.
package struct AVIFCoder: ImageCoder {
    /// libavif's encoder speed, 0 (slowest, smallest) to 10 (fastest).
    package var encodeSpeed: Int
    /// Crop to the clean aperture (`clap`) when the file has a valid one.
    package var applyCleanAperture: Bool

    /// Creates the coder. The default speed, 8, favours answering a request quickly over the
    /// last few percent of size.
    package init(encodeSpeed: Int = 8, applyCleanAperture: Bool = true) {
        self.encodeSpeed = encodeSpeed
        self.applyCleanAperture = applyCleanAperture
    }

    package func canDecode(_ data: Data) -> Bool {
        ImageFormat.detect(data) == .avif
    }

    package func decode(_ data: Data, options: DecodeOptions) throws -> DecodedImage {
        guard !data.isEmpty else { throw WebImageError.emptyData }
        let decoder = try Self.makeDecoder(options)
        defer { avifDecoderDestroy(decoder) }
        return try data.withUnsafeBytes { bytes -> DecodedImage in
            guard let base = bytes.bindMemory(to: UInt8.self).baseAddress else { throw WebImageError.emptyData }
            let header = try Self.parse(decoder, base, count: bytes.count, options: options)
            let orientation = Self.orientation(header.pointee)
            let hasAlpha = decoder.pointee.alphaPresent != AVIF_FALSE
            let profile = Self.colorProfile(header.pointee)
            let transform = options.keepsColors ? nil : ColorConversion.rgbaTransform(for: profile)
            let imageCount = max(1, Int(decoder.pointee.imageCount))
            let frameCount = options.firstFrameOnly ? 1 : min(imageCount, max(1, options.maxFrameCount))
            var frames: [ImageFrame] = []
            var bytesSoFar = 0
            for index in 0..<frameCount {
                let result = avifDecoderNextImage(decoder)
                if result != AVIF_RESULT_OK, index > 0, result == AVIF_RESULT_TRUNCATED_DATA || result == AVIF_RESULT_NO_IMAGES_REMAINING {
                    break
                }
                try Self.check(result, "frame \(index)")
                guard let image = decoder.pointee.image else { throw WebImageError.corruptData("AVIF: no image") }
                let bitmap = try frameBitmap(image, options: options, transform: transform)
                frames.append(ImageFrame(bitmap: bitmap, duration: frameCount > 1 ? decoder.pointee.imageTiming.duration : 0))
                bytesSoFar += bitmap.byteCount
                if bytesSoFar >= options.animationByteLimit { break }
            }
            // libavif 0.11 does not read the edit list that carries a repetition count; sequences
            // loop forever, as browsers play them.
            var decoded = try DecodedImage(frames: frames, loopCount: 0, format: .avif, orientation: orientation,
                                           scale: options.scale, hasAlpha: hasAlpha)
            if !options.firstFrameOnly, frames.count == frameCount, frameCount < imageCount { decoded.truncation = .frameCount }
            if options.keepsColors { decoded.iccProfile = ColorConversion.keptProfile(profile) }
            return decoded
        }
    }

    /// The colour space the file declares: its ICC profile when it has one, else a profile made
    /// from its nclx primaries and transfer; `nil` for sRGB (or unspecified) colours.
    static func colorProfile(_ image: avifImage) -> Data? {
        if let bytes = image.icc.data, image.icc.size > 0 { return Data(bytes: bytes, count: image.icc.size) }
        return ColorProfileBuilder.nclxProfile(primaries: Int(image.colorPrimaries), transfer: Int(image.transferCharacteristics))
    }

    /// A decoder set up as every AVIF decode here wants it; the caller destroys it.
    static func makeDecoder(_ options: DecodeOptions) throws -> UnsafeMutablePointer<avifDecoder> {
        try CodecLibrary.avif.require()
        guard let decoder = avifDecoderCreate() else { throw WebImageError.tooLarge("AVIF: cannot create a decoder") }
        decoder.pointee.maxThreads = options.parallelDecoding ? 2 : 1
        decoder.pointee.ignoreExif = AVIF_TRUE
        decoder.pointee.ignoreXMP = AVIF_TRUE
        // libavif 0.11 refuses a whole file for a clean aperture it finds invalid (libavif 1.x and
        // browsers show such files): without that flag a bad `clap` is only left unapplied.
        decoder.pointee.strictFlags = avifStrictFlags(AVIF_STRICT_PIXI_REQUIRED.rawValue | AVIF_STRICT_ALPHA_ISPE_REQUIRED.rawValue)
        return decoder
    }

    /// Reads the file's boxes (no frame is decoded) and checks the size they declare against the
    /// options' limits; `bytes` must stay valid while `decoder` is used.
    /// - Returns: the image holding the header facts (size, colour, transforms).
    static func parse(_ decoder: UnsafeMutablePointer<avifDecoder>, _ bytes: UnsafePointer<UInt8>, count: Int,
                      options: DecodeOptions) throws -> UnsafeMutablePointer<avifImage> {
        try check(avifDecoderSetIOMemory(decoder, bytes, count), "reading")
        try check(avifDecoderParse(decoder), "header")
        guard let header = decoder.pointee.image else { throw WebImageError.corruptData("AVIF: no image") }
        try options.checkFullSizeCanvas(width: Int(header.pointee.width), height: Int(header.pointee.height))
        // Set after the header passed our own check (so an oversized header is `tooLarge`), for
        // the AV1 decoder (dav1d) to refuse a bitstream bigger than the header says.
        decoder.pointee.imageSizeLimit = UInt32(clamping: min(fullSizeLimit(options), Int(AVIF_DEFAULT_IMAGE_SIZE_LIMIT)))
        return header
    }

    /// The current frame as RGBA8: cropped to the clean aperture, then resampled when the options
    /// ask for a smaller image.
    private func frameBitmap(_ image: UnsafeMutablePointer<avifImage>, options: DecodeOptions, transform: ICCTransform?) throws -> Bitmap {
        let shown = Self.shownSize(image.pointee, applyCleanAperture: applyCleanAperture)
        let target = try options.targetSize(width: shown.width, height: shown.height)
        let isFinalSize = (target.width, target.height) == (shown.width, shown.height)
        // At full size the rows are converted while the bitmap is made; a thumbnail converts
        // only its own, far fewer, pixels after the resample.
        var bitmap = try Self.shownRGBA(image, applyCleanAperture: applyCleanAperture,
                                        converting: isFinalSize ? transform : nil, parallel: options.parallelDecoding)
        if (target.width, target.height) != (bitmap.width, bitmap.height) {
            bitmap = try Resampler.resize(bitmap, width: target.width, height: target.height, options: options)
        }
        if !isFinalSize, let transform { bitmap = try ColorConversion.convert(bitmap, with: transform, parallel: options.parallelDecoding) }
        return bitmap
    }

    /// The size a frame is shown at: its clean aperture, or the whole frame.
    static func shownSize(_ image: avifImage, applyCleanAperture: Bool) -> (width: Int, height: Int) {
        if applyCleanAperture, let rect = cleanAperture(image) { return (Int(rect.width), Int(rect.height)) }
        return (Int(image.width), Int(image.height))
    }

    /// The current frame at full size as RGBA8, cropped to the clean aperture, converted by
    /// `transform` when one is given.
    static func shownRGBA(_ image: UnsafeMutablePointer<avifImage>, applyCleanAperture: Bool,
                          converting transform: ICCTransform?, parallel: Bool) throws -> Bitmap {
        var source = UnsafePointer(image)
        var pendingCrop: avifCropRect?
        var view: UnsafeMutablePointer<avifImage>?
        defer { if let view { avifImageDestroy(view) } }
        if applyCleanAperture, let rect = cleanAperture(image.pointee) {
            // A view converts only the cropped pixels; libavif cannot view a crop at odd offsets in
            // subsampled chroma, which is then cut from the converted frame.
            if let cropped = avifImageCreateEmpty() {
                view = cropped
                if avifImageSetViewRect(cropped, image, [rect]) == AVIF_RESULT_OK { source = UnsafePointer(cropped) } else { pendingCrop = rect }
            } else {
                pendingCrop = rect
            }
        }
        var bitmap = try rgba(source, converting: pendingCrop == nil ? transform : nil, parallel: parallel)
        if let rect = pendingCrop {
            bitmap = try bitmap.cropped(x: Int(rect.x), y: Int(rect.y), width: Int(rect.width), height: Int(rect.height))
            if let transform { bitmap = try ColorConversion.convert(bitmap, with: transform, parallel: parallel) }
        }
        return bitmap
    }

    /// Converts a YUV image to RGBA8 with libavif, by the matrix and range the image declares.
    private static func rgba(_ source: UnsafePointer<avifImage>, converting transform: ICCTransform?, parallel: Bool) throws -> Bitmap {
        let width = Int(source.pointee.width), height = Int(source.pointee.height)
        return try Bitmap(width: width, height: height) { buffer in
            var rgb = avifRGBImage()
            avifRGBImageSetDefaults(&rgb, source)
            rgb.format = AVIF_RGB_FORMAT_RGBA
            rgb.depth = 8
            rgb.alphaPremultiplied = AVIF_FALSE
            rgb.pixels = buffer.bindMemory(to: UInt8.self).baseAddress
            rgb.rowBytes = UInt32(width * 4)
            try check(avifImageYUVToRGB(source, &rgb), "YUV to RGB")
            if let transform, let base = buffer.baseAddress {
                transform.run(base, base, pixelCount: width * height, parallel: parallel)
            }
        }
    }

    package func canEncode(_ format: ImageFormat) -> Bool {
        format == .avif && Self.encoderName != nil
    }

    /// Encodes lossy (`options.quality` mapped onto AV1's quantizer, 4:2:0) or lossless (4:4:4
    /// with the identity matrix, quantizer 0); an animated image becomes an AVIF sequence unless
    /// `options.firstFrameOnly`.
    /// - Throws: ``WebImageError/unsupportedFormat(_:)`` when libavif was built with no AV1 encoder.
    package func encode(_ image: DecodedImage, format: ImageFormat, options: EncodeOptions) throws -> Data {
        guard format == .avif else { throw WebImageError.unsupportedFormat("AVIFCoder encodes AVIF only") }
        guard Self.encoderName != nil else {
            throw WebImageError.unsupportedFormat("AVIF: this libavif has no AV1 encoder")
        }
        guard let encoder = avifEncoderCreate() else { throw WebImageError.encodingFailed("AVIF: cannot create an encoder") }
        defer { avifEncoderDestroy(encoder) }
        encoder.pointee.speed = Int32(min(max(encodeSpeed, Int(AVIF_SPEED_SLOWEST)), Int(AVIF_SPEED_FASTEST)))
        encoder.pointee.maxThreads = 2
        let quantizer = options.lossless
            ? Int32(AVIF_QUANTIZER_LOSSLESS)
            : Int32(((1 - min(1, max(0, options.quality))) * Double(AVIF_QUANTIZER_WORST_QUALITY)).rounded())
        encoder.pointee.minQuantizer = quantizer
        encoder.pointee.maxQuantizer = quantizer
        encoder.pointee.minQuantizerAlpha = options.lossless ? quantizer : 0
        encoder.pointee.maxQuantizerAlpha = options.lossless ? quantizer : min(quantizer, 10)
        encoder.pointee.timescale = 1000
        let frames = options.firstFrameOnly ? [image.frames[0]] : image.frames
        let hasAlpha = image.hasAlpha && frames.contains { $0.bitmap.containsTransparency }
        // aom keeps references to frames it has not coded yet (its lookahead): every YUV image
        // lives until the encoder has finished.
        var yuvImages: [UnsafeMutablePointer<avifImage>] = []
        defer { yuvImages.forEach { avifImageDestroy($0) } }
        for frame in frames {
            try options.stop.check()
            let yuv = try Self.yuvImage(frame.bitmap, lossless: options.lossless, hasAlpha: hasAlpha)
            // Kept colours (``DecodeOptions/keepsColors``) carry their profile into the file.
            if let profile = image.iccProfile, !profile.isEmpty {
                profile.withUnsafeBytes { avifImageSetProfileICC(yuv, $0.bindMemory(to: UInt8.self).baseAddress, $0.count) }
            }
            yuvImages.append(yuv)
            let duration = UInt64(max(1, (frame.duration * 1000).rounded()))
            // Lossless inter frames from Debian's aom 3.6 decode as copies of the frame before
            // (`avifenc --lossless` does the same): lossless sequences are keyframes only.
            let flags = frames.count == 1 ? avifAddImageFlags(AVIF_ADD_IMAGE_FLAG_SINGLE.rawValue)
                : avifAddImageFlags(options.lossless ? AVIF_ADD_IMAGE_FLAG_FORCE_KEYFRAME.rawValue : 0)
            try Self.check(avifEncoderAddImage(encoder, yuv, duration, flags), "encoding", error: WebImageError.encodingFailed)
        }
        var output = avifRWData()
        defer { avifRWDataFree(&output) }
        try Self.check(avifEncoderFinish(encoder, &output), "encoding", error: WebImageError.encodingFailed)
        guard let bytes = output.data, output.size > 0 else { throw WebImageError.encodingFailed("AVIF: empty output") }
        return Data(bytes: bytes, count: output.size)
    }

    /// The name of the AV1 encoder libavif was built with (`aom` on Debian), or `nil` for none
    /// (or no libavif).
    package static var encoderName: String? {
        guard CodecLibrary.avif.isAvailable else { return nil }
        return avifCodecName(AVIF_CODEC_CHOICE_AUTO, avifCodecFlags(AVIF_CODEC_FLAG_CAN_ENCODE.rawValue)).map { String(cString: $0) }
    }

    /// `bitmap` as an 8-bit YUV image, which the caller destroys.
    private static func yuvImage(_ bitmap: Bitmap, lossless: Bool, hasAlpha: Bool) throws -> UnsafeMutablePointer<avifImage> {
        guard let image = avifImageCreate(UInt32(clamping: bitmap.width), UInt32(clamping: bitmap.height), 8,
                                          lossless ? AVIF_PIXEL_FORMAT_YUV444 : AVIF_PIXEL_FORMAT_YUV420) else {
            throw WebImageError.encodingFailed("AVIF: cannot create an image")
        }
        var handedOver = false
        defer { if !handedOver { avifImageDestroy(image) } }
        image.pointee.yuvRange = AVIF_RANGE_FULL
        // sRGB primaries and transfer: RGBA8 bitmaps are taken to be sRGB, as every other encoder here does.
        image.pointee.colorPrimaries = avifColorPrimaries(AVIF_COLOR_PRIMARIES_BT709)
        image.pointee.transferCharacteristics = avifTransferCharacteristics(AVIF_TRANSFER_CHARACTERISTICS_SRGB)
        image.pointee.matrixCoefficients = avifMatrixCoefficients(lossless ? AVIF_MATRIX_COEFFICIENTS_IDENTITY
                                                                            : AVIF_MATRIX_COEFFICIENTS_BT601)
        try bitmap.withUnsafeBytes { bytes in
            var rgb = avifRGBImage()
            avifRGBImageSetDefaults(&rgb, image)
            rgb.format = AVIF_RGB_FORMAT_RGBA
            rgb.depth = 8
            rgb.ignoreAlpha = hasAlpha ? AVIF_FALSE : AVIF_TRUE
            // libavif only reads the pixels when converting to YUV; the pointer is mutable in its API only.
            rgb.pixels = UnsafeMutablePointer(mutating: bytes.bindMemory(to: UInt8.self).baseAddress)
            rgb.rowBytes = UInt32(bitmap.bytesPerRow)
            try check(avifImageRGBToYUV(image, &rgb), "RGB to YUV", error: WebImageError.encodingFailed)
        }
        handedOver = true
        return image
    }

    /// The largest full-size canvas the options allow (see ``DecodeOptions/checkFullSizeCanvas(width:height:)``).
    static func fullSizeLimit(_ options: DecodeOptions) -> Int {
        let limit = max(options.pixelLimit, 1)
        guard options.scaleDownLargeImages else { return limit }
        let (scaled, overflow) = limit.multipliedReportingOverflow(by: 4)
        return overflow ? .max : scaled
    }

    /// The clean aperture as a crop rectangle, when the file has one that lies on whole pixels
    /// inside the image and is smaller than it. Computed here rather than by libavif 0.11, whose
    /// converter also refuses odd offsets in subsampled images (libavif 1.x and browsers crop those).
    static func cleanAperture(_ image: avifImage) -> avifCropRect? {
        guard image.transformFlags & avifTransformFlags(AVIF_TRANSFORM_CLAP.rawValue) != 0 else { return nil }
        let clap = image.clap
        guard let width = wholeNumber(Int64(clap.widthN), Int64(clap.widthD)),
              let height = wholeNumber(Int64(clap.heightN), Int64(clap.heightD)),
              width > 0, height > 0, width <= Int64(image.width), height <= Int64(image.height),
              (width, height) != (Int64(image.width), Int64(image.height)) else { return nil }
        // The aperture's centre is the image's centre moved by the offset: its left edge is
        // offset + (imageWidth - width) / 2, which must be a whole pixel.
        func edge(_ offsetN: UInt32, _ offsetD: UInt32, image size: UInt32, crop: Int64) -> Int64? {
            let numerator = Int64(Int32(bitPattern: offsetN)), denominator = Int64(offsetD)
            guard denominator > 0 else { return nil }
            return wholeNumber(2 * numerator + (Int64(size) - crop) * denominator, 2 * denominator)
        }
        guard let x = edge(clap.horizOffN, clap.horizOffD, image: image.width, crop: width),
              let y = edge(clap.vertOffN, clap.vertOffD, image: image.height, crop: height),
              x >= 0, y >= 0, x + width <= Int64(image.width), y + height <= Int64(image.height) else { return nil }
        return avifCropRect(x: UInt32(x), y: UInt32(y), width: UInt32(width), height: UInt32(height))
    }

    private static func wholeNumber(_ numerator: Int64, _ denominator: Int64) -> Int64? {
        guard denominator > 0, numerator % denominator == 0 else { return nil }
        return numerator / denominator
    }

    /// The EXIF orientation equal to the file's `irot` (anti-clockwise quarter turns) followed by
    /// its `imir` (mode 0 swaps top and bottom, mode 1 left and right), as Pillow and libavif's
    /// own Exif writer report it.
    static func orientation(_ image: avifImage) -> ImageOrientation {
        let rotates = image.transformFlags & avifTransformFlags(AVIF_TRANSFORM_IROT.rawValue) != 0
        let mirrors = image.transformFlags & avifTransformFlags(AVIF_TRANSFORM_IMIR.rawValue) != 0
        let angle = rotates ? image.irot.angle & 3 : 0
        let mirror: UInt8? = mirrors ? image.imir.mode & 1 : nil
        return orientation(quarterTurnsAntiClockwise: Int(angle), mirrorMode: mirror.map(Int.init))
    }

    /// See ``orientation(_:)``; `mirrorMode` 0 is top-bottom, 1 left-right, `nil` none.
    static func orientation(quarterTurnsAntiClockwise angle: Int, mirrorMode: Int?) -> ImageOrientation {
        switch (angle, mirrorMode) {
        case (0, nil): .up
        case (0, 0): .downMirrored
        case (0, _): .upMirrored
        case (1, nil): .left
        case (1, 0): .leftMirrored
        case (1, _): .rightMirrored
        case (2, nil): .down
        case (2, 0): .upMirrored
        case (2, _): .downMirrored
        case (_, nil): .right
        case (_, 0): .rightMirrored
        case (_, _): .leftMirrored
        }
    }

    static func check(_ result: avifResult, _ step: String,
                              error: (String) -> WebImageError = AVIFCoder.decodeError(_:)) throws {
        guard result != AVIF_RESULT_OK else { return }
        let text = "AVIF \(step): \(String(cString: avifResultToString(result)))"
        switch result {
        case AVIF_RESULT_TRUNCATED_DATA, AVIF_RESULT_WAITING_ON_IO: throw WebImageError.truncatedData(text)
        case AVIF_RESULT_OUT_OF_MEMORY: throw WebImageError.tooLarge(text)
        case AVIF_RESULT_NO_CODEC_AVAILABLE: throw WebImageError.unsupportedFormat(text)
        default: throw error(text)
        }
    }

    private static func decodeError(_ text: String) -> WebImageError { .corruptData(text) }
}
