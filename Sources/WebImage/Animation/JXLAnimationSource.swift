import CJXL
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A JPEG XL animation as an animation source: a pass over the frame headers (libjxl skips the
/// frames' pixels when no image is asked for) gives the frame count, durations, loop count and
/// colour space. Drawing frame N goes on from the frame decoded last when N is ahead of it, else
/// decodes forward from the first frame with a new libjxl decoder. libjxl coalesces
/// as for the whole decode (`JxlDecoderSetCoalescing` on, its default): every frame comes out as
/// the whole blended canvas, so each equals the whole decode's frame.
///
/// Blending stays inside libjxl, so every frame is a key frame to the ``AnimationCursor``. Each
/// reader (``forReader()``) gets its own libjxl decoder, made on its first frame.
struct JXLAnimationSource: AnimationFrameSource {
    let format = ImageFormat.jxl
    let canvasWidth: Int
    let canvasHeight: Int
    let loopCount: Int
    let frames: [AnimationFrameInfo]
    let hasAlpha: Bool
    let iccProfile: Data?
    let orientation: ImageOrientation
    private let data: Data
    private let options: DecodeOptions
    private let reader: Locked<JXLDecoderHandle?> = Locked(nil)

    /// Reads the headers of `data`, listing at most one frame past `options.maxFrameCount`; a
    /// still image lists one frame.
    /// - Throws: ``WebImageError`` when the headers are corrupt or the size is over the limits.
    init(data: Data, options: DecodeOptions) throws {
        guard !data.isEmpty else { throw WebImageError.emptyData }
        self.data = data
        self.options = options
        guard let decoder = JxlDecoderCreate(nil) else { throw WebImageError.tooLarge("JPEG XL: cannot create a decoder") }
        defer { JxlDecoderDestroy(decoder) }
        let events = Int32(JXL_DEC_BASIC_INFO.rawValue | JXL_DEC_COLOR_ENCODING.rawValue | JXL_DEC_FRAME.rawValue)
        guard JxlDecoderSubscribeEvents(decoder, events) == JXL_DEC_SUCCESS,
              JxlDecoderSetKeepOrientation(decoder, 1) == JXL_DEC_SUCCESS else {
            throw WebImageError.corruptData("JPEG XL: decoder setup failed")
        }
        let frameLimit = max(1, options.maxFrameCount)
        let framesWanted = options.firstFrameOnly ? 1 : (frameLimit == .max ? frameLimit : frameLimit + 1)
        var info = JxlBasicInfo()
        var profile: Data?
        var durations: [Double] = []
        try data.withUnsafeBytes { bytes in
            guard let base = bytes.bindMemory(to: UInt8.self).baseAddress,
                  JxlDecoderSetInput(decoder, base, bytes.count) == JXL_DEC_SUCCESS else {
                throw WebImageError.corruptData("JPEG XL: cannot set the input")
            }
            JxlDecoderCloseInput(decoder)
            reading: while durations.count < framesWanted {
                let status = JxlDecoderProcessInput(decoder)
                switch status {
                case JXL_DEC_BASIC_INFO:
                    guard JxlDecoderGetBasicInfo(decoder, &info) == JXL_DEC_SUCCESS else {
                        throw WebImageError.corruptData("JPEG XL: basic info")
                    }
                    try options.checkFullSizeCanvas(width: Int(info.xsize), height: Int(info.ysize))
                    if info.have_animation == 0 {
                        durations = [0]
                        break reading
                    }
                case JXL_DEC_COLOR_ENCODING:
                    profile = JXLColorProfile.profile(decoder)
                case JXL_DEC_FRAME:
                    var header = JxlFrameHeader()
                    guard JxlDecoderGetFrameHeader(decoder, &header) == JXL_DEC_SUCCESS else {
                        throw WebImageError.corruptData("JPEG XL: frame header")
                    }
                    durations.append(JXLCoder.seconds(ticks: header.duration, info: info))
                case JXL_DEC_SUCCESS:
                    break reading
                default:
                    // An animation cut short lists the frames whose headers it has.
                    if !durations.isEmpty, status == JXL_DEC_NEED_MORE_INPUT { break reading }
                    throw JXLCoder.error(status, framesSoFar: durations.count)
                }
            }
        }
        guard !durations.isEmpty else { throw WebImageError.corruptData("JPEG XL: no frame") }
        canvasWidth = Int(info.xsize)
        canvasHeight = Int(info.ysize)
        loopCount = Int(info.animation.num_loops)
        frames = durations.map { AnimationFrameInfo(duration: $0, disposal: .keep, isKeyFrame: true) }
        hasAlpha = info.alpha_bits > 0
        iccProfile = profile
        orientation = ImageOrientation(exifValue: Int(info.orientation.rawValue))
    }

    /// A copy with a decoder of its own, so that two readers do not rewind each other's.
    func forReader() -> any AnimationFrameSource {
        JXLAnimationSource(copying: self)
    }

    private init(copying other: JXLAnimationSource) {
        (canvasWidth, canvasHeight, loopCount, frames) = (other.canvasWidth, other.canvasHeight, other.loopCount, other.frames)
        (hasAlpha, iccProfile, orientation) = (other.hasAlpha, other.iccProfile, other.orientation)
        (data, options) = (other.data, other.options)
    }

    func draw(_ index: Int, on canvas: UnsafeMutableRawBufferPointer) throws {
        guard index >= 0, index < frames.count else { throw WebImageError.corruptData("JPEG XL frame \(index) of \(frames.count)") }
        try reader.withLock { handle in
            // libjxl 0.7 decodes nothing after `JxlDecoderRewind` (its first call answers success)
            // and `JxlDecoderSkipFrames` lands on the wrong frame: an earlier frame takes a new
            // decoder, which decodes forward from the first frame.
            if let current = handle, current.nextFrame > index { handle = nil }
            let current = try handle ?? JXLDecoderHandle(data: data, parallel: options.parallelDecoding)
            handle = current
            do {
                try current.decode(index, into: canvas)
            } catch {
                // A failed decode leaves libjxl's position unknown: the next frame starts afresh.
                handle = nil
                throw error
            }
        }
    }
}

/// One libjxl decoder (and its thread runner) over its own copy of the file; knows which frame
/// libjxl gives next.
///
/// `@unchecked Sendable`: a handle lives in its source's `reader` (a ``Locked``) and is used only
/// inside that lock's `withLock`, one thread at a time.
private final class JXLDecoderHandle: @unchecked Sendable {
    private let decoder: OpaquePointer
    private let runner: UnsafeMutableRawPointer?
    private let bytes: UnsafeMutableRawBufferPointer
    /// The frame the decoder emits next when it goes on without a rewind.
    private var next = 0

    init(data: Data, parallel: Bool) throws {
        guard let decoder = JxlDecoderCreate(nil) else { throw WebImageError.tooLarge("JPEG XL: cannot create a decoder") }
        let runner = parallel ? JxlThreadParallelRunnerCreate(nil, 2) : nil
        let bytes = UnsafeMutableRawBufferPointer.allocate(byteCount: max(1, data.count), alignment: 1)
        bytes.copyBytes(from: data)
        let events = Int32(JXL_DEC_FRAME.rawValue | JXL_DEC_FULL_IMAGE.rawValue)
        let ready = (runner.map { JxlDecoderSetParallelRunner(decoder, JxlThreadParallelRunner, $0) == JXL_DEC_SUCCESS } ?? true)
            && JxlDecoderSubscribeEvents(decoder, events) == JXL_DEC_SUCCESS
            && JxlDecoderSetKeepOrientation(decoder, 1) == JXL_DEC_SUCCESS
            && JxlDecoderSetUnpremultiplyAlpha(decoder, 1) == JXL_DEC_SUCCESS
            && JxlDecoderSetCoalescing(decoder, 1) == JXL_DEC_SUCCESS
            && JxlDecoderSetInput(decoder, bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), data.count) == JXL_DEC_SUCCESS
        guard ready else {
            JxlDecoderDestroy(decoder)
            if let runner { JxlThreadParallelRunnerDestroy(runner) }
            bytes.deallocate()
            throw WebImageError.corruptData("JPEG XL: decoder setup failed")
        }
        JxlDecoderCloseInput(decoder)
        self.decoder = decoder
        self.runner = runner
        self.bytes = bytes
    }

    deinit {
        JxlDecoderDestroy(decoder)
        if let runner { JxlThreadParallelRunnerDestroy(runner) }
        bytes.deallocate()
    }

    /// The frame the decoder gives next.
    var nextFrame: Int { next }

    /// Decodes frame `index` (not before ``nextFrame``) into `canvas` (the canvas size, RGBA8),
    /// decoding the frames in between into `canvas` too.
    func decode(_ index: Int, into canvas: UnsafeMutableRawBufferPointer) throws {
        while next <= index { try decodeNext(into: canvas) }
    }

    /// Decodes the next frame into `canvas`.
    private func decodeNext(into canvas: UnsafeMutableRawBufferPointer) throws {
        let index = next
        var format = JxlPixelFormat(num_channels: 4, data_type: JXL_TYPE_UINT8, endianness: JXL_NATIVE_ENDIAN, align: 0)
        while true {
            let status = JxlDecoderProcessInput(decoder)
            switch status {
            case JXL_DEC_FRAME:
                continue
            case JXL_DEC_NEED_IMAGE_OUT_BUFFER:
                var size = 0
                guard JxlDecoderImageOutBufferSize(decoder, &format, &size) == JXL_DEC_SUCCESS, size == canvas.count,
                      JxlDecoderSetImageOutBuffer(decoder, &format, canvas.baseAddress, canvas.count) == JXL_DEC_SUCCESS else {
                    throw WebImageError.corruptData("JPEG XL: unexpected output size")
                }
            case JXL_DEC_FULL_IMAGE:
                next = index + 1
                return
            case JXL_DEC_SUCCESS:
                throw WebImageError.corruptData("JPEG XL: no frame \(index)")
            default:
                throw JXLCoder.error(status, framesSoFar: index)
            }
        }
    }
}
