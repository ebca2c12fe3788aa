import Foundation
import NIOCore
import Testing
import WebImage
import WebImageTestSupport

/// The connect-time address policy: the loader resolves the name itself, asks the policy about
/// every address, and connects only to an address it approved.
@Suite("Connect address policy", .timeLimit(.minutes(1)))
struct ConnectAddressPolicyTests {
    /// A policy that records what it was asked and refuses loopback.
    final class Recorder: Sendable {
        let asked = Locked([String]())
        var policy: ConnectAddressPolicy {
            { [self] host, port, address in
                asked.withLock { $0.append("\(host):\(port)=\(address.ipAddress ?? "?")") }
                return !(address.ipAddress?.hasPrefix("127.") ?? false) && address.ipAddress != "::1"
            }
        }
    }

    @Test(arguments: LoopbackProtocol.allCases) func aRefusedNameIsRejectedBeforeAnyConnection(_ http: LoopbackProtocol) async throws {
        try await withServer(http) { origin in
            origin.route("/a.png", .image(testBytes(10), contentType: "image/png"))
            let recorder = Recorder()
            let downloader = ImageDownloader(configuration: .speakingCurrentServer(.init(connectAddressPolicy: recorder.policy)))
            let outcome = await collect(downloader.load(ImageLoadRequest(url: URL(string: "http://localhost:\(origin.port)/a.png")!)))
            #expect(outcome.error?.code == "rejected", "\(String(describing: outcome.error))")
            #expect(origin.totalRequestCount == 0)
            // The name was resolved and its address shown to the policy.
            #expect(recorder.asked.withLock { $0 }.contains { $0.hasPrefix("localhost:\(origin.port)=") })
            let literal = await collect(downloader.load(ImageLoadRequest(url: origin.url("/a.png"))))
            #expect(literal.error?.code == "rejected")
            #expect(origin.totalRequestCount == 0)
            try await downloader.shutdown()
        }
    }

    @Test(arguments: LoopbackProtocol.allCases) func anApprovedAddressIsTheOneConnectedTo(_ http: LoopbackProtocol) async throws {
        try await withServer(http) { origin in
            origin.route("/a.png", .image(testBytes(10), contentType: "image/png"))
            let asked = Locked([String]())
            let downloader = ImageDownloader(configuration: .speakingCurrentServer(.init(connectAddressPolicy: { _, _, address in
                asked.withLock { $0.append(address.ipAddress ?? "?") }
                return address.ipAddress == "127.0.0.1"
            })))
            // `localhost` may resolve to ::1 as well: any refused address refuses the name.
            let outcome = await collect(downloader.load(ImageLoadRequest(url: origin.url("/a.png"))))
            #expect(outcome.data?.count == 10)
            #expect(asked.withLock { $0 } == ["127.0.0.1"])
            // A redirect hop to another origin is checked when its connection opens.
            origin.route("/hop", .redirect(to: "\(origin.baseURL.scheme ?? "http")://127.0.0.2:\(origin.port)/a.png"))
            let hop = await collect(downloader.load(ImageLoadRequest(url: origin.url("/hop"))))
            #expect(hop.error?.code == "rejected")
            #expect(asked.withLock { $0 }.last == "127.0.0.2")
            #expect(origin.requestCount(for: "/a.png") == 1)
            try await downloader.shutdown()
        }
    }
}
