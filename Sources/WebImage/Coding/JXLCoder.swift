import CJXL
#if canImport(Glibc)
import Glibc
#endif
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// JPEG XL decoding and encoding with libjxl: stills and animations, alpha, any bit depth
/// reduced to RGBA8 by libjxl.
///
/// - Orientation: the codestream's orientation is reported, not applied, like EXIF elsewhere.
/// - Thumbnails: libjxl 0.7 (Debian bookworm) has no reduced-resolution decode (its progressive
///   detail API arrives in 0.9), so a frame is decoded at full size straight into its bitmap and
///   resampled; one full bitmap exists at a time.
/// - Limits: the size in the basic-info header is checked against ``DecodeOptions/pixelLimit``
///   before libjxl decodes any frame; frames stop at ``DecodeOptions/maxFrameCount`` and
///   ``DecodeOptions/animationByteLimit``.
/// - Colour: the colour space of the pixels libjxl returns (the file's structured colour
///   encoding or ICC profile; for XYB-coded images, the space libjxl's decoder picks without a
///   CMS) is converted to sRGB (see ``JXLColorProfile``, ``ColorConversion``) unless
///   ``DecodeOptions/keepsColors``.
package struct JXLCoder: ImageCoder {
    /// libjxl's encoder effort, 1 (fastest) to 9 (smallest).
    package var encodeEffort: Int

    /// Creates the coder. The default effort, 7, is `cjxl`'s.
    package init(encodeEffort: Int = 7) {
        self.encodeEffort = encodeEffort
    }

    package func canDecode(_ data: Data) -> Bool {
        ImageFormat.detect(data) == .jxl
    }

    package func decode(_ data: Data, options: DecodeOptions) throws -> DecodedImage {
        guard !data.isEmpty else { throw WebImageError.emptyData }
        let (decoder, runner) = try Self.makeDecoder(events: [JXL_DEC_BASIC_INFO, JXL_DEC_COLOR_ENCODING, JXL_DEC_FRAME, JXL_DEC_FULL_IMAGE],
                                                     parallel: options.parallelDecoding)
        defer { Self.destroy(decoder, runner: runner) }
        return try data.withUnsafeBytes { bytes -> DecodedImage in
            guard let base = bytes.bindMemory(to: UInt8.self).baseAddress else { throw WebImageError.emptyData }
            try Self.setInput(decoder, base, count: bytes.count)
            var info = JxlBasicInfo()
            var frames: [ImageFrame] = []
            var duration = 0.0
            var byteCount = 0
            var format = JxlPixelFormat(num_channels: 4, data_type: JXL_TYPE_UINT8, endianness: JXL_NATIVE_ENDIAN, align: 0)
            var profile: Data?
            var transform: ICCTransform?
            var truncated = false
            decoding: while true {
                let status = JxlDecoderProcessInput(decoder)
                switch status {
                case JXL_DEC_BASIC_INFO:
                    info = try Self.basicInfo(decoder, options: options)
                case JXL_DEC_COLOR_ENCODING:
                    profile = JXLColorProfile.profile(decoder)
                    transform = options.keepsColors ? nil : ColorConversion.rgbaTransform(for: profile)
                case JXL_DEC_FRAME:
                    try options.stop.check()
                    // A frame past the limit is seen by its header before any pixel is decoded.
                    if frames.count >= max(1, options.maxFrameCount) {
                        truncated = true
                        break decoding
                    }
                    duration = try Self.frameDuration(decoder, info: info)
                case JXL_DEC_NEED_IMAGE_OUT_BUFFER:
                    let width = Int(info.xsize), height = Int(info.ysize)
                    var size = 0
                    guard JxlDecoderImageOutBufferSize(decoder, &format, &size) == JXL_DEC_SUCCESS,
                          size == Bitmap.byteCount(width: width, height: height) else {
                        throw WebImageError.corruptData("JPEG XL: unexpected output size")
                    }
                    let target = try options.targetSize(width: width, height: height)
                    let isFullSize = (target.width, target.height) == (width, height)
                    // libjxl writes the frame straight into the bitmap, then signals the full image;
                    // at full size it is converted to sRGB there, a thumbnail after its resample.
                    var bitmap = try Bitmap(width: width, height: height) { buffer in
                        guard JxlDecoderSetImageOutBuffer(decoder, &format, buffer.baseAddress, buffer.count) == JXL_DEC_SUCCESS else {
                            throw WebImageError.corruptData("JPEG XL: cannot set the output buffer")
                        }
                        let result = JxlDecoderProcessInput(decoder)
                        guard result == JXL_DEC_FULL_IMAGE else { throw Self.error(result, framesSoFar: frames.count) }
                        if isFullSize, let transform, let base = buffer.baseAddress {
                            transform.run(base, base, pixelCount: width * height, parallel: options.parallelDecoding)
                        }
                    }
                    if !isFullSize {
                        bitmap = try Resampler.resize(bitmap, width: target.width, height: target.height, options: options)
                        if let transform { bitmap = try ColorConversion.convert(bitmap, with: transform, parallel: options.parallelDecoding) }
                    }
                    frames.append(ImageFrame(bitmap: bitmap, duration: info.have_animation != 0 ? duration : 0))
                    byteCount += bitmap.byteCount
                    if options.firstFrameOnly || byteCount >= options.animationByteLimit { break decoding }
                case JXL_DEC_FULL_IMAGE:
                    continue
                case JXL_DEC_SUCCESS:
                    break decoding
                default:
                    // An animation cut short after some frames keeps the frames it has.
                    if !frames.isEmpty, status == JXL_DEC_NEED_MORE_INPUT { break decoding }
                    throw Self.error(status, framesSoFar: frames.count)
                }
            }
            let hasAlpha = info.alpha_bits > 0
            var image = try DecodedImage(frames: frames, loopCount: Int(info.animation.num_loops), format: .jxl,
                                         orientation: ImageOrientation(exifValue: Int(info.orientation.rawValue)),
                                         scale: options.scale, hasAlpha: hasAlpha)
            if options.keepsColors { image.iccProfile = ColorConversion.keptProfile(profile) }
            if truncated { image.truncation = .frameCount }
            return image
        }
    }

    /// A libjxl decoder as every JPEG XL read here sets it up: subscribed to `events`, keeping
    /// the orientation (reported, not applied), giving unpremultiplied alpha, with a two-thread
    /// runner when `parallel`. Free both with ``destroy(_:runner:)``.
    static func makeDecoder(events: [JxlDecoderStatus], parallel: Bool) throws -> (decoder: OpaquePointer, runner: UnsafeMutableRawPointer?) {
        try CodecLibrary.jxl.require()
        guard let decoder = JxlDecoderCreate(nil) else { throw WebImageError.tooLarge("JPEG XL: cannot create a decoder") }
        let runner = parallel ? JxlThreadParallelRunnerCreate(nil, 2) : nil
        if let runner {
            guard JxlDecoderSetParallelRunner(decoder, JxlThreadParallelRunner, runner) == JXL_DEC_SUCCESS else {
                destroy(decoder, runner: runner)
                throw WebImageError.corruptData("JPEG XL: cannot set the thread runner")
            }
        }
        let mask = events.reduce(0) { $0 | $1.rawValue }
        guard JxlDecoderSubscribeEvents(decoder, Int32(mask)) == JXL_DEC_SUCCESS,
              JxlDecoderSetKeepOrientation(decoder, 1) == JXL_DEC_SUCCESS,
              JxlDecoderSetUnpremultiplyAlpha(decoder, 1) == JXL_DEC_SUCCESS else {
            destroy(decoder, runner: runner)
            throw WebImageError.corruptData("JPEG XL: decoder setup failed")
        }
        return (decoder, runner)
    }

    /// Destroys a decoder from ``makeDecoder(events:parallel:)`` and its runner.
    static func destroy(_ decoder: OpaquePointer, runner: UnsafeMutableRawPointer?) {
        JxlDecoderDestroy(decoder)
        if let runner { JxlThreadParallelRunnerDestroy(runner) }
    }

    /// Gives libjxl the whole file, closing the input; libjxl reads `bytes` until the decoder is
    /// destroyed, so they must stay valid until then.
    static func setInput(_ decoder: OpaquePointer, _ bytes: UnsafePointer<UInt8>, count: Int) throws {
        guard JxlDecoderSetInput(decoder, bytes, count) == JXL_DEC_SUCCESS else {
            throw WebImageError.corruptData("JPEG XL: cannot set the input")
        }
        JxlDecoderCloseInput(decoder)
    }

    /// The basic info libjxl has just read (at `JXL_DEC_BASIC_INFO`), its canvas checked against
    /// the options' limits.
    static func basicInfo(_ decoder: OpaquePointer, options: DecodeOptions) throws -> JxlBasicInfo {
        var info = JxlBasicInfo()
        guard JxlDecoderGetBasicInfo(decoder, &info) == JXL_DEC_SUCCESS else {
            throw WebImageError.corruptData("JPEG XL: basic info")
        }
        try options.checkFullSizeCanvas(width: Int(info.xsize), height: Int(info.ysize))
        return info
    }

    /// The duration in seconds of the frame whose header libjxl has just read (at `JXL_DEC_FRAME`).
    static func frameDuration(_ decoder: OpaquePointer, info: JxlBasicInfo) throws -> Double {
        var header = JxlFrameHeader()
        guard JxlDecoderGetFrameHeader(decoder, &header) == JXL_DEC_SUCCESS else {
            throw WebImageError.corruptData("JPEG XL: frame header")
        }
        guard info.have_animation != 0, info.animation.tps_numerator > 0 else { return 0 }
        return Double(header.duration) * Double(info.animation.tps_denominator) / Double(info.animation.tps_numerator)
    }

    static func error(_ status: JxlDecoderStatus, framesSoFar: Int) -> WebImageError {
        status == JXL_DEC_NEED_MORE_INPUT
            ? .truncatedData("JPEG XL: the data ends early")
            : .corruptData("JPEG XL: decoding failed (status \(status.rawValue))")
    }

    package func canEncode(_ format: ImageFormat) -> Bool { format == .jxl }

    /// Encodes lossy (`options.quality` mapped to a butteraugli distance as `cjxl` maps its
    /// quality) or lossless (`options.lossless`); an animated image becomes a JPEG XL animation
    /// unless `options.firstFrameOnly`. Pixels are taken as sRGB, or as ``DecodedImage/iccProfile``
    /// when the image has one (then embedded).
    package func encode(_ image: DecodedImage, format: ImageFormat, options: EncodeOptions) throws -> Data {
        guard format == .jxl else { throw WebImageError.unsupportedFormat("JXLCoder encodes JPEG XL only") }
        try CodecLibrary.jxl.require()
        guard let encoder = JxlEncoderCreate(nil) else { throw WebImageError.encodingFailed("JPEG XL: cannot create an encoder") }
        defer { JxlEncoderDestroy(encoder) }
        let runner = JxlThreadParallelRunnerCreate(nil, 2)
        defer { if let runner { JxlThreadParallelRunnerDestroy(runner) } }
        if let runner { _ = JxlEncoderSetParallelRunner(encoder, JxlThreadParallelRunner, runner) }
        let frames = options.firstFrameOnly ? [image.frames[0]] : image.frames
        let animated = frames.count > 1
        let hasAlpha = image.hasAlpha && frames.contains { $0.bitmap.containsTransparency }
        var info = JxlBasicInfo()
        JxlEncoderInitBasicInfo(&info)
        info.xsize = UInt32(clamping: image.width)
        info.ysize = UInt32(clamping: image.height)
        info.bits_per_sample = 8
        info.num_color_channels = 3
        info.alpha_bits = hasAlpha ? 8 : 0
        info.num_extra_channels = hasAlpha ? 1 : 0
        info.uses_original_profile = options.lossless ? 1 : 0
        if animated {
            info.have_animation = 1
            info.animation.tps_numerator = 1000
            info.animation.tps_denominator = 1
            info.animation.num_loops = UInt32(clamping: image.loopCount)
        }
        var color = JxlColorEncoding()
        JxlColorEncodingSetToSRGB(&color, 0)
        // Kept colours (``DecodeOptions/keepsColors``) carry their profile into the file.
        let colorSet: Bool
        if let profile = image.iccProfile, !profile.isEmpty {
            colorSet = JxlEncoderSetBasicInfo(encoder, &info) == JXL_ENC_SUCCESS && profile.withUnsafeBytes {
                JxlEncoderSetICCProfile(encoder, $0.bindMemory(to: UInt8.self).baseAddress, $0.count) == JXL_ENC_SUCCESS
            }
        } else {
            colorSet = JxlEncoderSetBasicInfo(encoder, &info) == JXL_ENC_SUCCESS
                && JxlEncoderSetColorEncoding(encoder, &color) == JXL_ENC_SUCCESS
        }
        guard colorSet,
              let settings = JxlEncoderFrameSettingsCreate(encoder, nil) else {
            throw WebImageError.encodingFailed("JPEG XL: encoder setup failed")
        }
        _ = JxlEncoderFrameSettingsSetOption(settings, JXL_ENC_FRAME_SETTING_EFFORT, Int64(min(max(encodeEffort, 1), 9)))
        let configured = options.lossless
            ? JxlEncoderSetFrameLossless(settings, 1)
            : JxlEncoderSetFrameDistance(settings, Self.distance(quality: options.quality))
        guard configured == JXL_ENC_SUCCESS else { throw WebImageError.encodingFailed("JPEG XL: bad quality settings") }
        var pixelFormat = JxlPixelFormat(num_channels: hasAlpha ? 4 : 3, data_type: JXL_TYPE_UINT8, endianness: JXL_NATIVE_ENDIAN, align: 0)
        for frame in frames {
            try options.stop.check()
            if animated {
                var header = JxlFrameHeader()
                JxlEncoderInitFrameHeader(&header)
                header.duration = UInt32(clamping: Int((frame.duration * 1000).rounded()))
                guard JxlEncoderSetFrameHeader(settings, &header) == JXL_ENC_SUCCESS else {
                    throw WebImageError.encodingFailed("JPEG XL: frame header")
                }
            }
            let pixels = hasAlpha ? nil : Self.rgb(frame.bitmap)
            let added = pixels.map { rgb in
                rgb.withUnsafeBytes { JxlEncoderAddImageFrame(settings, &pixelFormat, $0.baseAddress, $0.count) }
            } ?? frame.bitmap.withUnsafeBytes { JxlEncoderAddImageFrame(settings, &pixelFormat, $0.baseAddress, $0.count) }
            guard added == JXL_ENC_SUCCESS else { throw WebImageError.encodingFailed("JPEG XL: frame rejected") }
        }
        JxlEncoderCloseInput(encoder)
        return try Self.drain(encoder)
    }

    /// Runs the encoder to the end, growing the output as it asks.
    private static func drain(_ encoder: OpaquePointer) throws -> Data {
        var output = [UInt8](repeating: 0, count: 64 << 10)
        var written = 0
        while true {
            let status = output.withUnsafeMutableBufferPointer { buffer -> JxlEncoderStatus in
                var next = buffer.baseAddress.map { $0 + written }
                var available = buffer.count - written
                let status = JxlEncoderProcessOutput(encoder, &next, &available)
                written = buffer.count - available
                return status
            }
            switch status {
            case JXL_ENC_SUCCESS: return Data(output.prefix(written))
            case JXL_ENC_NEED_MORE_OUTPUT: output.append(contentsOf: repeatElement(0, count: output.count))
            default: throw WebImageError.encodingFailed("JPEG XL: encoding failed (error \(JxlEncoderGetError(encoder).rawValue))")
            }
        }
    }

    /// `cjxl`'s mapping of a 0...100 quality to a butteraugli distance (100 is 0: lossless-like).
    static func distance(quality: Double) -> Float {
        let q: Double = min(1, max(0, quality)) * 100
        let distance: Double
        if q >= 30 {
            distance = 0.1 + (100 - q) * 0.09
        } else {
            distance = 6.4 + pow(2.5, (30 - q) / 5) / 6.25
        }
        return Float(min(25, distance))
    }

    /// The bitmap's RGB bytes without alpha, for opaque images.
    private static func rgb(_ bitmap: Bitmap) -> [UInt8] {
        bitmap.withUnsafeBytes { bytes in
            [UInt8](unsafeUninitializedCapacity: bitmap.width * bitmap.height * 3) { buffer, initialized in
                var out = 0
                var index = 0
                while index < bytes.count {
                    buffer[out] = bytes[index]; buffer[out + 1] = bytes[index + 1]; buffer[out + 2] = bytes[index + 2]
                    out += 3
                    index += 4
                }
                initialized = out
            }
        }
    }
}
