#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import InMemoryTracing
import Testing
import Tracing
import WebImage
@testable import WebImageServer
import WebImageTestSupport

/// A render past `--render-timeout` stops at its next step: between the transform's steps (crop,
/// rotate, flip, each resize, blur, sharpen, watermark, flatten), not only between decode,
/// transform and encode, so it gives its thread back sooner.
@Suite("webimage serve: a cancelled render stops between steps")
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
}
