import InMemoryTracing
import Tracing

/// `InMemoryTracing`'s tracer with W3C Trace Context propagation (`traceparent`), as swift-otel's
/// tracer propagates: the service hands extraction and injection to whatever tracer it is given,
/// so this is what an application exporting with OpenTelemetry would see, recorded in memory.
struct W3CInMemoryTracer: Tracer {
    typealias Span = InMemorySpan
    let recorded = InMemoryTracer(idGenerator: InMemoryTracer.IDGenerator(
        nextTraceID: { String((0..<32).map { _ in "0123456789abcdef".randomElement()! }) },
        nextSpanID: { String((0..<16).map { _ in "0123456789abcdef".randomElement()! }) }))

    func startSpan<Instant: TracerInstant>(_ operationName: String, context: @autoclosure () -> ServiceContext, ofKind kind: SpanKind,
                                           at instant: @autoclosure () -> Instant, function: String, file fileID: String,
                                           line: UInt) -> InMemorySpan {
        recorded.startSpan(operationName, context: context(), ofKind: kind, at: instant(), function: function, file: fileID, line: line)
    }

    func forceFlush() { recorded.forceFlush() }

    func extract<Carrier, Extract: Extractor>(_ carrier: Carrier, into context: inout ServiceContext, using extractor: Extract)
    where Extract.Carrier == Carrier {
        // version-traceid-parentid-flags
        guard let value = extractor.extract(key: "traceparent", from: carrier) else { return }
        let parts = value.split(separator: "-")
        guard parts.count == 4, parts[1].count == 32, parts[2].count == 16 else { return }
        context.inMemorySpanContext = InMemorySpanContext(traceID: String(parts[1]), spanID: String(parts[2]), parentSpanID: nil)
    }

    func inject<Carrier, Inject: Injector>(_ context: ServiceContext, into carrier: inout Carrier, using injector: Inject)
    where Inject.Carrier == Carrier {
        guard let span = context.inMemorySpanContext else { return }
        injector.inject("00-\(span.traceID)-\(span.spanID)-01", forKey: "traceparent", into: &carrier)
    }
}
