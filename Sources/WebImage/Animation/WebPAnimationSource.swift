import CWebP
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// An animated WebP as an animation source: libwebp's demuxer lists the frames (offsets, sizes,
/// durations, blend and dispose methods) without decoding any; drawing a frame decodes its
/// bitstream alone with `WebPDecode` and composites it as libwebp's `WebPAnimDecoder` does
/// (the same key-frame rule, the same non-premultiplied blend arithmetic), so every frame equals
/// the one the whole decode (``WebPAnimationDecoder``) makes.
struct WebPAnimationSource: AnimationFrameSource {
    private struct Frame {
        var fragment: Range<Int>
        var rect: CanvasRect
        var hasAlpha: Bool
        var blends: Bool
        var disposesToBackground: Bool
        var duration: Double
        /// libwebp's key frame: drawn on a cleared canvas, never blended.
        var isKeyFrame: Bool
    }

    let data: Data
    let format = ImageFormat.webp
    private(set) var canvasWidth = 0
    private(set) var canvasHeight = 0
    private(set) var loopCount = 0
    private(set) var frames: [AnimationFrameInfo] = []
    private(set) var hasAlpha = false
    private(set) var iccProfile: Data?
    private(set) var orientation = ImageOrientation.up
    private var records: [Frame] = []

    /// Demuxes `data`, keeping at most one frame past `options.maxFrameCount`.
    /// - Throws: ``WebImageError/corruptData(_:)`` when libwebp cannot demux it or it has no frame.
    init(data: Data, options: DecodeOptions) throws {
        self.data = data
        let frameLimit = max(1, options.maxFrameCount)
        let framesWanted = options.firstFrameOnly ? 1 : (frameLimit == .max ? frameLimit : frameLimit + 1)
        var records: [Frame] = []
        var width = 0, height = 0, loops = 0, alpha = false
        try data.withUnsafeBytes { bytes in
            guard let base = bytes.bindMemory(to: UInt8.self).baseAddress else { throw WebImageError.emptyData }
            var webPData = WebPData(bytes: base, size: bytes.count)
            guard let demuxer = WebPDemux(&webPData) else { throw WebImageError.corruptData("WebP: cannot read the animation") }
            defer { WebPDemuxDelete(demuxer) }
            width = Int(WebPDemuxGetI(demuxer, WEBP_FF_CANVAS_WIDTH))
            height = Int(WebPDemuxGetI(demuxer, WEBP_FF_CANVAS_HEIGHT))
            loops = Int(WebPDemuxGetI(demuxer, WEBP_FF_LOOP_COUNT))
            try options.checkFullSizeCanvas(width: width, height: height)
            var features = WebPBitstreamFeatures()
            if WebPGetFeatures(base, bytes.count, &features) == VP8_STATUS_OK { alpha = features.has_alpha != 0 }
            let count = min(Int(WebPDemuxGetI(demuxer, WEBP_FF_FRAME_COUNT)), framesWanted)
            var iterator = WebPIterator()
            guard count > 0, WebPDemuxGetFrame(demuxer, 1, &iterator) != 0 else {
                throw WebImageError.corruptData("WebP: animation without frames")
            }
            defer { WebPDemuxReleaseIterator(&iterator) }
            repeat {
                guard let fragment = iterator.fragment.bytes else { throw WebImageError.corruptData("WebP: empty frame") }
                let start = fragment - base
                let rect = CanvasRect(x: Int(iterator.x_offset), y: Int(iterator.y_offset),
                                      width: Int(iterator.width), height: Int(iterator.height))
                let frame = Frame(fragment: start..<(start + iterator.fragment.size), rect: rect,
                                  hasAlpha: iterator.has_alpha != 0, blends: iterator.blend_method == WEBP_MUX_BLEND,
                                  disposesToBackground: iterator.dispose_method == WEBP_MUX_DISPOSE_BACKGROUND,
                                  duration: Double(iterator.duration) / 1000, isKeyFrame: false)
                records.append(frame)
            } while records.count < count && WebPDemuxNextFrame(&iterator) != 0
        }
        canvasWidth = width
        canvasHeight = height
        loopCount = loops
        hasAlpha = alpha
        // libwebp's IsKeyFrame, frame by frame.
        for index in records.indices {
            let frame = records[index]
            let full = frame.rect.width == width && frame.rect.height == height
            if index == 0 || ((!frame.hasAlpha || !frame.blends) && full) {
                records[index].isKeyFrame = true
            } else {
                let previous = records[index - 1]
                let previousFull = previous.rect.width == width && previous.rect.height == height
                records[index].isKeyFrame = previous.disposesToBackground && (previousFull || previous.isKeyFrame)
            }
        }
        self.records = records
        frames = records.indices.map { index in
            let frame = records[index]
            return AnimationFrameInfo(duration: frame.duration,
                                      disposal: frame.disposesToBackground ? .clear(frame.rect) : .keep,
                                      isKeyFrame: frame.isKeyFrame)
        }
        (iccProfile, orientation) = data.withUnsafeBytes { bytes in
            guard let base = bytes.bindMemory(to: UInt8.self).baseAddress else { return (nil, .up) }
            return (WebPICCProfile.read(base, count: bytes.count), WebPCoder.orientation(base, count: bytes.count))
        }
    }

    func draw(_ index: Int, on canvas: UnsafeMutableRawBufferPointer) throws {
        let frame = records[index]
        let rect = frame.rect
        guard rect.x >= 0, rect.y >= 0, rect.width > 0, rect.height > 0,
              rect.x + rect.width <= canvasWidth, rect.y + rect.height <= canvasHeight else {
            throw WebImageError.corruptData("WebP frame outside the canvas")
        }
        let rowBytes = rect.width * 4
        var pixels = [UInt8](repeating: 0, count: rowBytes * rect.height)
        try data.withUnsafeBytes { bytes in
            guard let base = bytes.bindMemory(to: UInt8.self).baseAddress else { throw WebImageError.emptyData }
            var config = WebPDecoderConfig()
            guard WebPInitDecoderConfig(&config) != 0 else { throw WebImageError.corruptData("WebP: decoder version mismatch") }
            let status = pixels.withUnsafeMutableBytes { output -> VP8StatusCode in
                config.output.colorspace = MODE_RGBA
                config.output.is_external_memory = 1
                config.output.u.RGBA.rgba = output.bindMemory(to: UInt8.self).baseAddress
                config.output.u.RGBA.stride = Int32(rowBytes)
                config.output.u.RGBA.size = output.count
                defer { WebPFreeDecBuffer(&config.output) }
                return WebPDecode(base + frame.fragment.lowerBound, frame.fragment.count, &config)
            }
            guard status == VP8_STATUS_OK else { throw WebPCoder.error(status) }
        }
        // libwebp blends only non-key frames that ask for it, and not over the rectangle the
        // previous frame cleared (those pixels blend with transparent black: a no-op it skips).
        let blends = index > 0 && frame.blends && !frame.isKeyFrame
        let cleared: CanvasRect? = blends && records[index - 1].disposesToBackground ? records[index - 1].rect : nil
        pixels.withUnsafeBytes { source in
            guard blends else {
                for row in 0..<rect.height {
                    let start = ((rect.y + row) * canvasWidth + rect.x) * 4
                    UnsafeMutableRawBufferPointer(rebasing: canvas[start..<(start + rowBytes)])
                        .copyMemory(from: UnsafeRawBufferPointer(rebasing: source[(row * rowBytes)..<((row + 1) * rowBytes)]))
                }
                return
            }
            for row in 0..<rect.height {
                let y = rect.y + row
                let rowCleared = cleared.map { y >= $0.y && y < $0.y + $0.height } ?? false
                for column in 0..<rect.width {
                    let s = row * rowBytes + column * 4
                    let x = rect.x + column
                    let d = (y * canvasWidth + x) * 4
                    let sourceAlpha = Int(source[s + 3])
                    let skip = rowCleared && cleared.map { x >= $0.x && x < $0.x + $0.width } ?? false
                    if !blends || sourceAlpha == 255 || skip {
                        canvas[d] = source[s]; canvas[d + 1] = source[s + 1]
                        canvas[d + 2] = source[s + 2]; canvas[d + 3] = source[s + 3]
                        continue
                    }
                    // BlendPixelNonPremult: transparent source keeps the canvas.
                    guard sourceAlpha > 0 else { continue }
                    let destinationAlpha = Int(canvas[d + 3])
                    let destinationFactor = (destinationAlpha * (256 - sourceAlpha)) >> 8
                    let blendAlpha = sourceAlpha + destinationFactor
                    let scale = (1 << 24) / blendAlpha
                    for channel in 0..<3 {
                        let unscaled = Int(source[s + channel]) * sourceAlpha + Int(canvas[d + channel]) * destinationFactor
                        canvas[d + channel] = UInt8(truncatingIfNeeded: (unscaled * scale) >> 24)
                    }
                    canvas[d + 3] = UInt8(truncatingIfNeeded: blendAlpha)
                }
            }
        }
    }
}
