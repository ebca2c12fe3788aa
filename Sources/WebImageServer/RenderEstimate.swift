#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import WebImage

/// What one render holds at its peak, weighed from the source's header before anything is
/// decoded: what ``MemoryBudget`` admits it by.
///
/// The sum of the source's bytes; its bitmap at full size (4 bytes a pixel: a thumbnail decode
/// takes less, so this bounds it); for an animation kept animated, every frame the decode may
/// keep (``ServerConfiguration/animationByteLimit``); and for every frame rendered (one, or an
/// animation's frames up to `--max-animation-frames`, all held at once between the steps): the
/// resized bitmap (4 bytes an output pixel, when there is a resize), the padded one beside it
/// (`fit=pad`), and the encoder's working copy and its output (2 bytes an
/// output pixel: YUV planes, a JPEG's body copied out of libjpeg's buffer, a GIF's indices).
/// Counting the output once let a 3.5 KB GIF of 150 1×1 frames padded to 1400×1400 take 1.4 GB
/// under a 64 MiB budget. An animated WebP output streams its frames and counts
/// ``streamedFramesHeld`` of them.
enum RenderEstimate {
    /// The estimate in bytes, or `nil` when the header's size cannot be read without decoding
    /// (AVIF, HEIF, JPEG XL, a broken header): the service then gives the render the whole budget
    /// and a pixel limit that keeps its decode within it. `frames` is how many frames the render
    /// renders (``RenderLimits/renderedFrames(of:detection:choice:)``).
    static func bytes(source: Data, parameters: ImageParameters, choice: FormatNegotiation.Choice,
                      animationByteLimit: Int, frames: Int = 1) -> Int? {
        let detection = FormatDetection(source)
        guard let size = detection.declaredSize(of: source) else { return nil }
        let keepsFrames = detection.isAnimated && FormatNegotiation.canAnimate(
            FormatNegotiation.format(for: choice, isAnimated: true, hasAlpha: false))
        // Doubles: a header may declare 2^32 × 2^32 pixels; the sum is clamped before it becomes an Int.
        let width = Double(size.width), height = Double(size.height)
        // A streamed animation (``ImageRenderer/streamsFrames(_:choice:)``) holds the encoder's
        // canvases (libwebp's previous, current and disposed ones and its imported picture) and
        // the lazy decoder's snapshot beside its canvas, not every frame.
        let streams = keepsFrames && ImageRenderer.streamsFrames(parameters, choice: choice)
        let count = Double(keepsFrames ? (streams ? min(max(1, frames), streamedFramesHeld) : max(1, frames)) : 1)
        let output = outputPixels(width: width, height: height, parameters: parameters)
        var total = Double(source.count) + 4 * width * height + 2 * output * count
        if keepsFrames { total += streams ? 4 * width * height : Double(animationByteLimit) }
        if parameters.width != nil || parameters.height != nil { total += 4 * output * count }
        if parameters.fit == .pad, parameters.width != nil, parameters.height != nil { total += 4 * output * count }
        // Blur's two working buffers of four Int32 a pixel (one frame at a time) and its output
        // for every frame; sharpen's blurred copy.
        if parameters.blur != nil || parameters.sharpen != nil { total += 32 * output + 4 * output * count }
        // The wavelet sharpen's five planes of Float (one frame at a time) and its output.
        if parameters.waveletSharpen != nil { total += 20 * output + 4 * output * count }
        if parameters.pixelate != nil { total += 4 * output * count }
        // A trim's cut bitmap beside the decoded one (the search itself reads in place).
        if parameters.trim != nil { total += 4 * width * height }
        if parameters.crop != nil || parameters.rotate != 0 || parameters.flipHorizontal || parameters.flipVertical
            || parameters.watermark != nil { total += 4 * width * height * count }
        return Int(min(total, Double(Int.max / 4)))
    }

    /// The output frames a streamed animation's render holds at once (see ``bytes(source:parameters:choice:animationByteLimit:frames:)``).
    static let streamedFramesHeld = 4

    /// The most pixels the output can have: the box (or, for one side, that side and the other
    /// from the aspect ratio either way up, as the EXIF orientation may turn it), never more than
    /// the source unless `enlarge` is set.
    static func outputPixels(width: Double, height: Double, parameters: ImageParameters) -> Double {
        let pixels = unpaddedOutputPixels(width: width, height: height, parameters: parameters)
        // imgproxy's padding adds a frame around whatever the fit made: bounded by the longest
        // side either could have, so the limit and the estimate hold before the canvas is taken.
        guard let padding = parameters.padding, padding.count == 4 else { return pixels }
        let longest = max(width, height, Double(parameters.width ?? 0), Double(parameters.height ?? 0))
        let across = Double(padding[1]) + Double(padding[3]), down = Double(padding[0]) + Double(padding[2])
        return pixels + across * (longest + down) + down * longest
    }

    private static func unpaddedOutputPixels(width: Double, height: Double, parameters: ImageParameters) -> Double {
        let source = width * height
        let box: Double
        switch (parameters.width.map { Double($0) }, parameters.height.map { Double($0) }) {
        case (nil, nil): return source
        case (let w?, let h?):
            // A pad is exactly the box, whatever the source's size.
            if parameters.fit == .pad { return w * h }
            box = w * h
        case (let side?, nil), (nil, let side?): box = side * side * max(width / height, height / width)
        }
        return parameters.enlarge ? box : min(box, source)
    }
}
