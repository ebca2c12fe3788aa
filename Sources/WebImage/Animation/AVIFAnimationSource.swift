import CAVIF
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// An AVIF image sequence as an animation source: libavif's parse gives the frame count and each
/// frame's timing from the sample tables, without decoding any frame; drawing frame N asks
/// libavif for it with `avifDecoderNthImage`, which goes on from the frame decoded last or
/// decodes from the nearest AV1 key frame. Frames are whole pictures, cropped to the clean
/// aperture as ``AVIFCoder`` crops them, so each one equals the whole decode's.
///
/// AV1's inter-frame references stay inside libavif, so every frame is a key frame to the
/// ``AnimationCursor``: it asks for the frame it wants and never draws the frames before it.
/// Each reader (``forReader()``) gets its own libavif decoder, made on its first frame; all of them
/// read the one copy of the file the source made (``PinnedBytes``).
struct AVIFAnimationSource: AnimationFrameSource {
    let format = ImageFormat.avif
    let canvasWidth: Int
    let canvasHeight: Int
    /// libavif 0.11 does not read the edit list that carries a repetition count; sequences loop
    /// forever, as the whole decode and browsers play them.
    let loopCount = 0
    let frames: [AnimationFrameInfo]
    let hasAlpha: Bool
    let iccProfile: Data?
    let orientation: ImageOrientation
    private let bytes: PinnedBytes
    private let options: DecodeOptions
    private let applyCleanAperture: Bool
    private let reader: Locked<AVIFDecoderHandle?> = Locked(nil)

    /// Parses `data`'s boxes, listing at most one frame past `options.maxFrameCount`.
    /// - Throws: ``WebImageError`` when the boxes are corrupt or the size is over the limits.
    init(data: Data, options: DecodeOptions, applyCleanAperture: Bool = true) throws {
        guard !data.isEmpty else { throw WebImageError.emptyData }
        let bytes = PinnedBytes(copying: data)
        self.bytes = bytes
        self.options = options
        self.applyCleanAperture = applyCleanAperture
        let decoder = try AVIFCoder.makeDecoder(options)
        defer { avifDecoderDestroy(decoder) }
        let frameLimit = max(1, options.maxFrameCount)
        let framesWanted = options.firstFrameOnly ? 1 : (frameLimit == .max ? frameLimit : frameLimit + 1)
        let header = try AVIFCoder.parse(decoder, bytes.start, count: bytes.count, options: options)
        let shown = AVIFCoder.shownSize(header.pointee, applyCleanAperture: applyCleanAperture)
        try options.checkFullSizeCanvas(width: shown.width, height: shown.height)
        let count = min(max(1, Int(decoder.pointee.imageCount)), framesWanted)
        let animated = count > 1
        var frames: [AnimationFrameInfo] = []
        frames.reserveCapacity(count)
        for index in 0..<count {
            var timing = avifImageTiming()
            try AVIFCoder.check(avifDecoderNthImageTiming(decoder, UInt32(index), &timing), "frame \(index) timing")
            frames.append(AnimationFrameInfo(duration: animated ? timing.duration : 0, disposal: .keep, isKeyFrame: true))
        }
        (canvasWidth, canvasHeight, self.frames) = (shown.width, shown.height, frames)
        hasAlpha = decoder.pointee.alphaPresent != AVIF_FALSE
        iccProfile = AVIFCoder.colorProfile(header.pointee)
        orientation = AVIFCoder.orientation(header.pointee)
    }

    /// A copy with a decoder of its own, so that two readers do not send libavif back and forth.
    func forReader() -> any AnimationFrameSource {
        AVIFAnimationSource(copying: self)
    }

    private init(copying other: AVIFAnimationSource) {
        (canvasWidth, canvasHeight, frames, hasAlpha) = (other.canvasWidth, other.canvasHeight, other.frames, other.hasAlpha)
        (iccProfile, orientation, bytes, options) = (other.iccProfile, other.orientation, other.bytes, other.options)
        applyCleanAperture = other.applyCleanAperture
    }

    func draw(_ index: Int, on canvas: UnsafeMutableRawBufferPointer) throws {
        guard index >= 0, index < frames.count else { throw WebImageError.corruptData("AVIF frame \(index) of \(frames.count)") }
        try reader.withLock { handle in
            var current = try handle ?? AVIFDecoderHandle(bytes: bytes, options: options)
            handle = current
            var result = avifDecoderNthImage(current.decoder, UInt32(index))
            if result != AVIF_RESULT_OK, index > 0 {
                // A file whose sync-sample table marks a frame that depends on others as a key
                // frame fails when libavif seeks to it; decoding every frame from the first, as
                // the whole decode does, may still succeed.
                let fresh = try AVIFDecoderHandle(bytes: bytes, options: options)
                handle = fresh
                result = AVIF_RESULT_OK
                while result == AVIF_RESULT_OK, Int(fresh.decoder.pointee.imageIndex) < index {
                    result = avifDecoderNextImage(fresh.decoder)
                }
                current = fresh
            }
            guard result == AVIF_RESULT_OK, let image = current.decoder.pointee.image else {
                // A failed decode leaves libavif's position unknown: the next frame starts afresh.
                handle = nil
                try AVIFCoder.check(result, "frame \(index)")
                throw WebImageError.corruptData("AVIF: no image")
            }
            let bitmap = try AVIFCoder.shownRGBA(image, applyCleanAperture: applyCleanAperture, converting: nil,
                                                 parallel: options.parallelDecoding)
            guard bitmap.width == canvasWidth, bitmap.height == canvasHeight, bitmap.byteCount == canvas.count else {
                throw WebImageError.corruptData("AVIF frame \(index) is \(bitmap.width)×\(bitmap.height), not \(canvasWidth)×\(canvasHeight)")
            }
            bitmap.withUnsafeBytes { canvas.copyMemory(from: $0) }
        }
    }
}

/// One libavif decoder over the source's copy of the file, which it holds: libavif reads the
/// bytes whenever it decodes, so they must outlive the decoder.
///
/// `@unchecked Sendable`: a handle lives in its source's `reader` (a ``Locked``) and is used only
/// inside that lock's `withLock`, one thread at a time.
private final class AVIFDecoderHandle: @unchecked Sendable {
    let decoder: UnsafeMutablePointer<avifDecoder>
    private let bytes: PinnedBytes

    init(bytes: PinnedBytes, options: DecodeOptions) throws {
        let decoder = try AVIFCoder.makeDecoder(options)
        do {
            _ = try AVIFCoder.parse(decoder, bytes.start, count: bytes.count, options: options)
        } catch {
            avifDecoderDestroy(decoder)
            throw error
        }
        self.decoder = decoder
        self.bytes = bytes
    }

    deinit {
        avifDecoderDestroy(decoder)
    }
}
