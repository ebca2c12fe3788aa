/// The frame and byte budget of one animation decode, asked before each frame is decoded so a
/// frame past a limit costs neither memory nor time (the rule is documented on
/// ``DecodeOptions/animationByteLimit`` and ``DecodeOptions/maxFrameCount``).
struct AnimationBudget {
    private let options: DecodeOptions
    /// What one frame keeps (its pixels as returned, plus the per-frame overhead).
    private let frameCost: Int
    /// What composing one frame touches at full size, counted only when frames are shrunk.
    private let composeCost: Int
    private(set) var frameCount = 0
    private(set) var bytes = 0
    private var composedBytes = 0
    /// Set when ``admitFrame()`` refused a frame because of a limit.
    private(set) var truncation: DecodedImage.AnimationTruncation?

    /// A budget for frames on a `canvasWidth` × `canvasHeight` canvas that are returned at
    /// `kept` size (the canvas size, or the thumbnail size).
    init(options: DecodeOptions, canvasWidth: Int, canvasHeight: Int, kept: (width: Int, height: Int)) {
        self.options = options
        let canvasBytes = Bitmap.byteCount(width: canvasWidth, height: canvasHeight) ?? .max
        let keptBytes = Bitmap.byteCount(width: kept.width, height: kept.height) ?? .max
        frameCost = keptBytes.addingReportingOverflow(DecodeOptions.frameOverheadBytes).overflow
            ? .max : keptBytes + DecodeOptions.frameOverheadBytes
        composeCost = keptBytes < canvasBytes ? canvasBytes : 0
    }

    /// Whether the next frame may be decoded; reserves its cost when it may. The first frame
    /// always may. `false` with ``truncation`` set means a limit stopped the animation; `false`
    /// without it means only the first frame was asked for.
    /// - Throws: ``WebImageError/cancelled`` once the options' stop flag is set: a decode stopped
    ///   from outside ends between frames.
    mutating func admitFrame() throws -> Bool {
        try options.stop.check()
        if frameCount > 0 {
            if options.firstFrameOnly { return false }
            guard frameCount < max(1, options.maxFrameCount) else {
                truncation = .frameCount
                return false
            }
            let (newBytes, overflow) = bytes.addingReportingOverflow(frameCost)
            let workLimit = options.animationByteLimit.multipliedReportingOverflow(by: DecodeOptions.thumbnailWorkFactor)
            let (newComposed, composeOverflow) = composedBytes.addingReportingOverflow(composeCost)
            guard !overflow, newBytes <= options.animationByteLimit,
                  workLimit.overflow || (!composeOverflow && newComposed <= workLimit.partialValue) else {
                truncation = .byteLimit
                return false
            }
        }
        frameCount += 1
        bytes = bytes.addingReportingOverflow(frameCost).overflow ? .max : bytes + frameCost
        composedBytes = composedBytes.addingReportingOverflow(composeCost).overflow ? .max : composedBytes + composeCost
        return true
    }
}
