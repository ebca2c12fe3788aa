import Foundation
import Testing
import WebImage
import WebImageServer
import WebImageTestSupport

/// Renders and source fetches are the library's shared work: callers of one output join one
/// render, and a render (with its fetch) stops when its last caller leaves, giving back its
/// `--concurrency` slot at once instead of holding it until the origin answers.
@Suite("webimage serve: renders are shared work", .serialized, .timeLimit(.minutes(2)))
struct ServerSharedRenderTests {
    @Test func aRenderWhoseLastCallerLeftGivesBackItsSlot() async throws {
        let origin = try await LoopbackServer.start()
        let gate = LoopbackGate()
        origin.route("/held.jpg", LoopbackResponse(body: .bytes(ServerTestImages.photo), gate: gate))
        origin.route("/other.jpg", .image(ServerTestImages.photo, contentType: "image/jpeg"))
        var configuration = ServerConfiguration(host: "127.0.0.1", port: 0, privateSourceHosts: ["127.0.0.1:\(origin.port)"])
        configuration.concurrency = 1
        // Longer than the deadline below: the fetch ending on its own timeout must not free the slot.
        configuration.sourceTimeout = .seconds(60)
        let service = try WebImageService(configuration: configuration)
        func query(_ path: String) -> String {
            "url=\(origin.url(path).absoluteString.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "")&w=20&format=jpeg"
        }
        let held = Task { await service.respond(to: ServiceRequest(path: "/image", query: query("/held.jpg"))) }
        // The render holds the one slot once its fetch reached the origin, which does not answer.
        while origin.requestCount(for: "/held.jpg") == 0 { await Task.yield() }
        #expect(await service.respond(to: ServiceRequest(path: "/image", query: query("/other.jpg"))).status == 503)
        held.cancel()
        // The slot comes back as soon as the render has stopped; it used to stay taken until the
        // origin answered (never, here) or the fetch timed out (after the deadline).
        let deadline = ContinuousClock.now + .seconds(20)
        var other = await service.respond(to: ServiceRequest(path: "/image", query: query("/other.jpg")))
        while other.status == 503, ContinuousClock.now < deadline {
            await Task.yield()
            other = await service.respond(to: ServiceRequest(path: "/image", query: query("/other.jpg")))
        }
        #expect(other.status == 200, "the slot of a render whose caller left was not given back")
        gate.open()
        _ = await held.value
        await service.shutdown()
        try await origin.shutdown()
    }
}
