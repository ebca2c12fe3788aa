import Tracing
import WebImage

/// What a render reports as it runs on its thread: a span per stage (`decode`, `transform`,
/// `encode`, children of the request's span, with the sizes as attributes), and whether to stop
/// before the next stage or the next step inside one (a render past `--render-timeout` frees its
/// budget there rather than at its end; a codec's call, a decode or an encode, runs to its end).
struct RenderStages: Sendable {
    let tracer: any Tracer
    /// The request's span context: the thread the render runs on has no task-local one.
    let context: ServiceContext
    let isCancelled: @Sendable () -> Bool

    /// No spans, never cancelled (benchmarks).
    static let untraced = RenderStages(tracer: NoOpTracer(), context: .topLevel, isCancelled: { false })

    /// Throws when the render was cancelled: called between the steps inside a stage (each of
    /// the transform's), so a render past its timeout stops at the next step.
    /// - Throws: `CancellationError`.
    func checkpoint() throws {
        if isCancelled() { throw CancellationError() }
    }

    /// Runs `body` as the stage `name`, unless the render was cancelled.
    /// - Throws: `CancellationError` when cancelled before the stage; what `body` throws.
    func run<T>(_ name: String, _ body: (any Span) throws -> T) throws -> T {
        if isCancelled() { throw CancellationError() }
        let span = tracer.startSpan(name, context: context, ofKind: .internal)
        defer { span.end() }
        do {
            return try body(span)
        } catch {
            span.recordError(error)
            span.setStatus(SpanStatus(code: .error))
            throw error
        }
    }
}
