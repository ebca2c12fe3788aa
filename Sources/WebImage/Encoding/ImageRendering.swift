#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What the manager's encode stage does to a source's bytes: decode, transform and encode, as
/// one step, in a slot of the manager's processing queue. ``TransformAndEncode`` is the
/// library's; an image service brings its own (its parameters, its limits, its ETags).
public protocol ImageRendering: Sendable {
    /// The key the output is cached and shared under, given the source's cache key: equal keys,
    /// equal bytes. Every input of the render that changes its bytes is in it.
    func outputKey(sourceKey: String) -> String
    /// Further sources the render needs besides the request's (a watermark's image), each with
    /// its own context: fetched, cached and shared as the first, and handed to
    /// ``prepare(_:memoryBudget:)`` after it, in this order.
    var additionalSources: [ImageRequest] { get }
    /// Reads the sources' headers and readies the render before any pixel memory is taken:
    /// throws for a source past a limit, and says how many bytes the render will hold at most
    /// (taken from ``ImageManagerConfiguration/EncodeStageLimits/memoryBudget`` while it runs).
    /// - Parameter sources: the request's source, then each of ``additionalSources``.
    /// - Parameter memoryBudget: the stage's budget, if it has one: a render that cannot estimate
    ///   its size takes the whole of it and must keep within it.
    func prepare(_ sources: [SourceImage], memoryBudget: Int?) throws -> ImageManager.PreparedRender
}

extension ImageRendering {
    public var additionalSources: [ImageRequest] { [] }
}

extension ImageManager {
    /// A render that is ready to run: its memory estimate, and the work.
    public struct PreparedRender: Sendable {
        /// The most bytes the render holds at once.
        public var bytes: Int
        /// Renders; `cancellation` is set when every waiter left or the deadline passed: a render
        /// checks it between steps (and hands it to decodes) to stop early.
        public var render: @Sendable (_ cancellation: DecodeCancellation) throws -> EncodedImage

        /// A prepared render.
        public init(bytes: Int, render: @escaping @Sendable (_ cancellation: DecodeCancellation) throws -> EncodedImage) {
            self.bytes = bytes
            self.render = render
        }
    }
}
