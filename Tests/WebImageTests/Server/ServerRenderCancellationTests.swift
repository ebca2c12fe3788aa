#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import InMemoryTracing
import Testing
import Tracing
import WebImage
import WebImageDemo
@testable import WebImageServer
import WebImageTestSupport

/// A render past `--render-timeout` stops at its next step: between the transform's steps (crop,
/// rotate, flip, each resize, blur, sharpen, watermark, flatten), not only between decode,
/// transform and encode, and inside the steps that work in bands (a PNG's rows, a resize's rows,
/// an animation's frames decoded and encoded), so it gives its thread back sooner.
@Suite("webimage serve: a cancelled render stops between steps and inside them")
struct ServerRenderCancellationTests {
    @Test func aRenderCancelledDuringItsTransformStopsBeforeTheNextStep() throws {
        let tracer = InMemoryTracer()
        // Cancelled from the third check on: after the decode's and the transform's own checks.
        let checks = Locked(0)
        let stages = RenderStages(tracer: tracer, context: .topLevel, isCancelled: {
            checks.withLock { count in
                count += 1
                return count >= 3
            }
        })
        let parameters = try ImageParameters(query: "url=http%3A%2F%2Fexample.com%2Fa.jpg&w=64&blur=2&sharpen=1&format=png")
        let renderer = ImageRenderer(coders: .shared, maxSourcePixels: 1 << 26, animationByteLimit: 1 << 26)
        #expect(throws: CancellationError.self) {
            try renderer.render(ServerTestImages.photo, sourceValidators: "v", parameters: parameters, choice: .png, stages: stages)
        }
        let spans = tracer.finishedSpans
        // The transform stopped inside itself (its span records the cancellation); the encode never began.
        let transform = try #require(spans.first { $0.operationName == "transform" }, "\(spans.map(\.operationName))")
        #expect(transform.errors.contains { $0.error is CancellationError })
        #expect(!spans.contains { $0.operationName == "encode" })
    }

    /// Stages whose cancellation is set when the stage `name` begins: after the check before it,
    /// so only a check inside the stage can see it.
    private static func stages(cancellingInside name: String, tracer: InMemoryTracer) -> RenderStages {
        let cancellation = DecodeCancellation()
        return RenderStages(tracer: StageStartTracer(tracer) { started in
            if started == name { cancellation.cancel() }
        }, context: .topLevel, cancellation: cancellation)
    }

    /// The spans of a render stopped inside `stage`: it records the cancellation, no later stage began.
    private static func expectStopped(inside stage: String, laterStages: [String], _ spans: [FinishedInMemorySpan]) throws {
        let span = try #require(spans.first { $0.operationName == stage }, "\(spans.map(\.operationName))")
        #expect(span.errors.contains { $0.error is CancellationError }, "\(span.errors.map(\.error))")
        for later in laterStages { #expect(!spans.contains { $0.operationName == later }, "\(later) began") }
    }

    @Test func aRenderCancelledDuringItsPNGDecodeStopsBetweenItsRows() throws {
        let source = try ImageCodersManager.shared.encode(
            DecodedImage(bitmap: try SampleImages.quadrants(width: 300, height: 200, transparentCenter: false), hasAlpha: false),
            format: .png, options: EncodeOptions())
        let tracer = InMemoryTracer()
        let parameters = try ImageParameters(query: "url=http%3A%2F%2Fexample.com%2Fa.png&w=64&format=png")
        let renderer = ImageRenderer(coders: .shared, maxSourcePixels: 1 << 26, animationByteLimit: 1 << 26)
        #expect(throws: CancellationError.self) {
            try renderer.render(source, sourceValidators: "v", parameters: parameters, choice: .png,
                                stages: Self.stages(cancellingInside: "decode", tracer: tracer))
        }
        try Self.expectStopped(inside: "decode", laterStages: ["transform", "encode"], tracer.finishedSpans)
    }

    @Test func aRenderCancelledDuringItsAnimationEncodeStopsBetweenFrames() throws {
        let tracer = InMemoryTracer()
        let parameters = try ImageParameters(query: "url=http%3A%2F%2Fexample.com%2Fa.webp&w=20&format=gif")
        let renderer = ImageRenderer(coders: .shared, maxSourcePixels: 1 << 26, animationByteLimit: 1 << 26)
        #expect(throws: CancellationError.self) {
            try renderer.render(ServerTestImages.animation, sourceValidators: "v", parameters: parameters, choice: .gif,
                                stages: Self.stages(cancellingInside: "encode", tracer: tracer))
        }
        try Self.expectStopped(inside: "encode", laterStages: [], tracer.finishedSpans)
    }

    @Test func aResizeStopsBetweenItsRowsOnItsStopFlag() throws {
        let image = DecodedImage(bitmap: try SampleImages.quadrants(width: 400, height: 300, transparentCenter: false), hasAlpha: false)
        let parameters = try ImageParameters(query: "url=http%3A%2F%2Fexample.com%2Fa.png&w=64")
        let renderer = ImageRenderer(coders: .shared, maxSourcePixels: 1 << 26, animationByteLimit: 1 << 26)
        let cancellation = DecodeCancellation()
        // Not set: the same pixels as without a flag.
        let resized = try renderer.transform(image, for: parameters, stop: StopFlag(cancellation))
        let plain = try renderer.transform(image, for: parameters)
        #expect(resized.bitmap.withUnsafeBytes { Array($0) } == plain.bitmap.withUnsafeBytes { Array($0) })
        cancellation.cancel()
        #expect(throws: WebImageError.cancelled) { try renderer.transform(image, for: parameters, stop: StopFlag(cancellation)) }
    }
}

/// A tracer that tells `onStart` the name of each span as it starts, then records it in an ``InMemoryTracer``.
private struct StageStartTracer: Tracer {
    let recorder: InMemoryTracer
    let onStart: @Sendable (String) -> Void

    init(_ recorder: InMemoryTracer, onStart: @escaping @Sendable (String) -> Void) {
        self.recorder = recorder
        self.onStart = onStart
    }

    func startSpan<Instant: TracerInstant>(_ operationName: String, context: @autoclosure () -> ServiceContext, ofKind kind: SpanKind,
                                           at instant: @autoclosure () -> Instant, function: String, file fileID: String,
                                           line: UInt) -> InMemorySpan {
        onStart(operationName)
        return recorder.startSpan(operationName, context: context(), ofKind: kind, at: instant(), function: function, file: fileID, line: line)
    }

    func forceFlush() { recorder.forceFlush() }

    func inject<Carrier, Inject: Injector>(_ context: ServiceContext, into carrier: inout Carrier, using injector: Inject)
        where Inject.Carrier == Carrier {
        recorder.inject(context, into: &carrier, using: injector)
    }

    func extract<Carrier, Extract: Extractor>(_ carrier: Carrier, into context: inout ServiceContext, using extractor: Extract)
        where Extract.Carrier == Carrier {
        recorder.extract(carrier, into: &context, using: extractor)
    }
}
