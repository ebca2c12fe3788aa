/// Turns one decoded image into another: the transform stage of the pipeline.
///
/// The ``identifier`` is appended to the cache key, so a transformed image is cached apart from
/// its original, and loads whose transformer chains share a prefix share that work.
public protocol ImageTransformer: Sendable {
    /// A stable string naming this transform and its parameters (`"resize(100x100,fill)"`).
    var identifier: String { get }
    /// What the manager compares to know two transforms do the same work, so that loads share
    /// it: by default the ``identifier``. The library's own transformers are `Hashable` and give
    /// themselves, which compares their parameters without formatting a string. A transformer
    /// of your own may do the same, when its `==` compares every parameter its output depends on.
    var hashableIdentifier: any Hashable & Sendable { get }
    /// Transforms `image`. Animated images arrive with all their frames; a transformer that works
    /// frame by frame should transform each.
    func transform(_ image: DecodedImage) throws -> DecodedImage
}

extension ImageTransformer {
    /// The ``identifier``.
    public var hashableIdentifier: any Hashable & Sendable { identifier }

    /// The cache key of this transform's result for an image cached under `key`.
    ///
    /// The rule is `key + "-" + identifier`, or `key` unchanged when ``identifier`` is empty (an
    /// empty ``ImageTransformers/Pipeline``). It uses only the two strings, so it is the same in every
    /// process and every run, which the disk cache relies on.
    public func cacheKey(for key: String) -> String {
        let identifier = self.identifier
        return identifier.isEmpty ? key : key + "-" + identifier
    }
}
