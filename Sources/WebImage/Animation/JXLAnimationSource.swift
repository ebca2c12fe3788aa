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
/// reader (``forReader()``) gets its own libjxl decoder, made on its first frame; all of them read
/// the one copy of the file the source made (``PinnedBytes``).
struct JXLAnimationSource: AnimationFrameSource {
    let format = ImageFormat.jxl
    let canvasWidth: Int
    let canvasHeight: Int
    let loopCount: Int
    let frames: [AnimationFrameInfo]
    let hasAlpha: Bool
    let iccProfile: Data?
    let orientation: ImageOrientation
    private let bytes: PinnedBytes
    private let options: DecodeOptions
    private let reader: Locked<JXLDecoderHandle?> = Locked(nil)

    /// Reads the headers of `data`, listing at most one frame past `options.maxFrameCount`; a
    /// still image lists one frame.
    /// - Throws: ``WebImageError`` when the headers are corrupt or the size is over the limits.
    init(data: Data, options: DecodeOptions) throws {
        guard !data.isEmpty else { throw WebImageError.emptyData }
        let bytes = PinnedBytes(copying: data)
        self.bytes = bytes
        self.options = options
        let (decoder, runner) = try JXLCoder.makeDecoder(events: [JXL_DEC_BASIC_INFO, JXL_DEC_COLOR_ENCODING, JXL_DEC_FRAME],
                                                         parallel: false)
        defer { JXLCoder.destroy(decoder, runner: runner) }
        try JXLCoder.setInput(decoder, bytes.start, count: bytes.count)
        let frameLimit = max(1, options.maxFrameCount)
        let framesWanted = options.firstFrameOnly ? 1 : (frameLimit == .max ? frameLimit : frameLimit + 1)
        var info = JxlBasicInfo()
        var profile: Data?
        var durations: [Double] = []
        reading: while durations.count < framesWanted {
            let status = JxlDecoderProcessInput(decoder)
            switch status {
            case JXL_DEC_BASIC_INFO:
                info = try JXLCoder.basicInfo(decoder, options: options)
                if info.have_animation == 0 {
                    durations = [0]
                    break reading
                }
            case JXL_DEC_COLOR_ENCODING:
                profile = JXLColorProfile.profile(decoder)
            case JXL_DEC_FRAME:
                durations.append(try JXLCoder.frameDuration(decoder, info: info))
            case JXL_DEC_SUCCESS:
                break reading
            default:
                // An animation cut short lists the frames whose headers it has.
                if !durations.isEmpty, status == JXL_DEC_NEED_MORE_INPUT { break reading }
                throw JXLCoder.error(status, framesSoFar: durations.count)
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
        (bytes, options) = (other.bytes, other.options)
    }

    func draw(_ index: Int, on canvas: UnsafeMutableRawBufferPointer) throws {
        guard index >= 0, index < frames.count else { throw WebImageError.corruptData("JPEG XL frame \(index) of \(frames.count)") }
        try reader.withLock { handle in
            // libjxl 0.7 decodes nothing after `JxlDecoderRewind` (its first call answers success)
            // and `JxlDecoderSkipFrames` lands on the wrong frame: an earlier frame takes a new
            // decoder, which decodes forward from the first frame (over the same copy of the file).
            if let current = handle, current.nextFrame > index { handle = nil }
            let current = try handle ?? JXLDecoderHandle(bytes: bytes, parallel: options.parallelDecoding)
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

/// One libjxl decoder (and its thread runner) over the source's copy of the file, which it holds
/// (libjxl reads the input set once until it is destroyed); knows which frame libjxl gives next.
///
/// `@unchecked Sendable`: a handle lives in its source's `reader` (a ``Locked``) and is used only
/// inside that lock's `withLock`, one thread at a time.
private final class JXLDecoderHandle: @unchecked Sendable {
    private let decoder: OpaquePointer
    private let runner: UnsafeMutableRawPointer?
    private let bytes: PinnedBytes
    /// The frame the decoder emits next when it goes on without a rewind.
    private var next = 0

    init(bytes: PinnedBytes, parallel: Bool) throws {
        let (decoder, runner) = try JXLCoder.makeDecoder(events: [JXL_DEC_FRAME, JXL_DEC_FULL_IMAGE], parallel: parallel)
        do {
            guard JxlDecoderSetCoalescing(decoder, 1) == JXL_DEC_SUCCESS else {
                throw WebImageError.corruptData("JPEG XL: decoder setup failed")
            }
            try JXLCoder.setInput(decoder, bytes.start, count: bytes.count)
        } catch {
            JXLCoder.destroy(decoder, runner: runner)
            throw error
        }
        self.decoder = decoder
        self.runner = runner
        self.bytes = bytes
    }

    deinit {
        JXLCoder.destroy(decoder, runner: runner)
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
