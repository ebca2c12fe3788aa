extension ImageTransformers {
    /// Several transformers applied one after another, as one transformer.
    ///
    /// Nested pipelines are flattened, so ``transformers`` always lists the single steps and the
    /// manager can cache and share every prefix of the chain (`a`, `a|b`, `a|b|c`).
    public struct Pipeline: ImageTransformer {
        /// The steps, in the order they run; never a ``ImageTransformers/Pipeline`` itself.
        public let transformers: [any ImageTransformer]

        /// Creates a pipeline running `transformers` in order.
        public init(_ transformers: [any ImageTransformer]) {
            self.transformers = transformers.flatMap { step -> [any ImageTransformer] in
                if let pipeline = step as? PipelineTransformer { return pipeline.transformers }
                return [step]
            }
        }

        /// The steps' identifiers joined with `"|"`, e.g. `"resize(100x100,fill,lanczos3)|roundCorners(8)"`;
        /// empty for an empty pipeline.
        public var identifier: String { transformers.map(\.identifier).joined(separator: "|") }

        /// The pipeline of the first `count` steps (all of them when `count` is larger), whose
        /// identifier is the prefix of this one the manager can share.
        public func prefix(_ count: Int) -> Pipeline {
            PipelineTransformer(Array(transformers.prefix(max(0, count))))
        }

        /// Runs every step on the result of the one before.
        public func transform(_ image: DecodedImage) throws -> DecodedImage {
            try transformers.reduce(image) { try $1.transform($0) }
        }
    }
}
