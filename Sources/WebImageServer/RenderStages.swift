import Tracing
import WebImage

/// What a render reports as it runs on its thread: a span per stage (`decode`, `transform`,
/// `encode`, children of the request's span, with the sizes as attributes), and whether to stop.
/// A render past `--render-timeout` stops before the next stage, before the next step inside one,
/// and inside the steps that work in bands (``stop``): a resize's rows, a PNG's rows, an
/// animation's frames as they are decoded and encoded. A codec's single call (TurboJPEG's decode
/// or encode of a still, one AVIF or JPEG XL frame, a still WebP) runs to its end.
struct RenderStages: Sendable {
    let tracer: any Tracer
    /// The request's span context: the thread the render runs on has no task-local one.
    let context: ServiceContext
    /// Set when the render is cancelled: read between steps here and inside them by the codecs
    /// and the resampler (``stop``).
    let cancellation: DecodeCancellation
    /// A further reason to stop between steps (tests cancel at a chosen step with it).
    let isCancelled: @Sendable () -> Bool

    init(tracer: any Tracer, context: ServiceContext, cancellation: DecodeCancellation = DecodeCancellation(),
         isCancelled: @escaping @Sendable () -> Bool = { false }) {
        self.tracer = tracer
        self.context = context
        self.cancellation = cancellation
        self.isCancelled = isCancelled
    }

    /// No spans, never cancelled (benchmarks).
    static let untraced = RenderStages(tracer: NoOpTracer(), context: .topLevel)

    /// The flag the codecs and the resampler look at between their bands of rows and frames.
    var stop: StopFlag { StopFlag(cancellation) }

    private var cancelled: Bool { cancellation.isCancelled || isCancelled() }

    /// Throws when the render was cancelled: called between the steps inside a stage (each of
    /// the transform's), so a render past its timeout stops at the next step.
    /// - Throws: `CancellationError`.
    func checkpoint() throws {
        if cancelled { throw CancellationError() }
    }

    /// Runs `body` as the stage `name`, unless the render was cancelled.
    /// - Throws: `CancellationError` when cancelled before the stage or inside it; what `body` throws.
    func run<T>(_ name: String, _ body: (any Span) throws -> T) throws -> T {
        if cancelled { throw CancellationError() }
        let span = tracer.startSpan(name, context: context, ofKind: .internal)
        defer { span.end() }
        do {
            return try body(span)
        } catch {
            // A codec or the resampler stopped on the flag: one error for every way a render stops.
            let error: any Error = if case WebImageError.cancelled = error, cancellation.isCancelled { CancellationError() } else { error }
            span.recordError(error)
            span.setStatus(SpanStatus(code: .error))
            throw error
        }
    }
}
