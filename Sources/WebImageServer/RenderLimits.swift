#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import WebImage

/// `--max-source-pixels`, `--max-animation-frames` and `--max-result-pixels`, imgproxy's limits
/// by their meaning, checked from the source's header before anything is decoded.
///
/// An animation kept animated (a GIF or WebP output) renders at most `maxAnimationFrames` of its
/// frames, and every one of them counts: its source pixels are width × height × frames, its
/// output pixels the output's size × frames (every frame is resized or padded, and all are held
/// until the encoder has them). A still output renders the first frame only.
struct RenderLimits: Sendable, Equatable {
    /// The most pixels a source may have, its rendered frames counted (413 `sourceTooLarge`).
    var maxSourcePixels: Int
    /// The most frames of an animation rendered; the decode stops after them.
    var maxAnimationFrames: Int
    /// The most pixels an output may have, its frames counted (422 `resultTooLarge`).
    var maxResultPixels: Int

    /// No limit but the decoder's default pixel limit (benchmarks and tests of the renderer alone).
    static let unlimited = RenderLimits(maxSourcePixels: DecodeOptions.defaultPixelLimit, maxAnimationFrames: DecodeOptions.defaultMaxFrameCount,
                                        maxResultPixels: .max)

    /// The limits of `configuration`.
    init(_ configuration: ServerConfiguration) {
        self.init(maxSourcePixels: configuration.maxSourcePixels, maxAnimationFrames: configuration.maxAnimationFrames,
                  maxResultPixels: configuration.maxResultPixels)
    }

    init(maxSourcePixels: Int, maxAnimationFrames: Int, maxResultPixels: Int) {
        self.maxSourcePixels = maxSourcePixels
        self.maxAnimationFrames = max(1, maxAnimationFrames)
        self.maxResultPixels = maxResultPixels
    }

    /// How many frames a render of `source` for `parameters` negotiated to `choice` renders, from
    /// the header: 1 for a still output or a still source; for an animation kept animated, its
    /// frame count (``ImageInfo/frames``, or ``maxAnimationFrames`` when the header cannot say)
    /// up to ``maxAnimationFrames``.
    func renderedFrames(of source: Data, detection: FormatDetection, choice: FormatNegotiation.Choice) -> Int {
        guard detection.isAnimated, FormatNegotiation.canAnimate(FormatNegotiation.format(for: choice, isAnimated: true, hasAlpha: false))
        else { return 1 }
        let declared = (try? ImageInfo.read(from: source))?.frames ?? maxAnimationFrames
        return min(max(1, declared), maxAnimationFrames)
    }

    /// Refuses a render over a limit, from the header; the frames it renders (see
    /// ``renderedFrames(of:detection:choice:)``).
    /// - Throws: ``ServiceError`` 413 `sourceTooLarge` for source pixels × frames over
    ///   ``maxSourcePixels``; 422 `resultTooLarge` for output pixels × frames over ``maxResultPixels``.
    @discardableResult
    func check(_ source: Data, parameters: ImageParameters, choice: FormatNegotiation.Choice) throws -> Int {
        let detection = FormatDetection(source)
        let frames = renderedFrames(of: source, detection: detection, choice: choice)
        // A header without a readable size: the decoder's pixel limit and ``checkResult`` after the decode apply.
        guard let size = detection.declaredSize(of: source) else { return frames }
        // Doubles: a header may declare 2^32 × 2^32 pixels.
        let sourcePixels = Double(size.width) * Double(size.height) * Double(frames)
        if sourcePixels > Double(maxSourcePixels) {
            let what = frames > 1 ? "\(size.width)×\(size.height) × \(frames) frames" : "\(size.width)×\(size.height)"
            throw ServiceError(status: 413, code: "sourceTooLarge", message: "the source's \(what) is over the limit of \(maxSourcePixels) pixels")
        }
        try checkResult(width: Double(size.width), height: Double(size.height), frames: frames, parameters: parameters)
        return frames
    }

    /// Refuses an output of a `width` × `height` source's `frames` frames over ``maxResultPixels``.
    /// - Throws: ``ServiceError`` 422 `resultTooLarge`.
    func checkResult(width: Double, height: Double, frames: Int, parameters: ImageParameters) throws {
        let output = RenderEstimate.outputPixels(width: width, height: height, parameters: parameters)
        guard output * Double(frames) > Double(maxResultPixels) else { return }
        let what = frames > 1 ? "\(Int(min(output, 1e18))) pixels × \(frames) frames" : "\(Int(min(output, 1e18))) pixels"
        throw ServiceError(status: 422, code: "resultTooLarge", message: "the output's \(what) is over the limit of \(maxResultPixels) pixels")
    }
}
