#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Logging
import WebImage
import WebImageServer
import WebImageTestSupport

/// A real `ImageServer` on an ephemeral loopback port, with a `LoopbackServer` as the origin;
/// the origin is on the guard's allow-list (by `127.0.0.1:PORT`) so it is reachable.
final class ServerHarness: Sendable {
    let origin: LoopbackServer
    let server: ImageServer
    let port: Int
    private let running: Task<Void, any Error>
    /// Whether ``stop()`` shuts the origin down too (it started it).
    private let ownsOrigin: Bool

    /// Starts both (or only the server, in front of `existingOrigin`, which it then leaves
    /// running on ``stop()``); `configure` adjusts the server's settings.
    static func start(origin existingOrigin: LoopbackServer? = nil,
                      _ configure: (inout ServerConfiguration, LoopbackServer) -> Void = { _, _ in }) async throws -> ServerHarness {
        let origin: LoopbackServer
        if let existingOrigin { origin = existingOrigin } else { origin = try await LoopbackServer.start() }
        var configuration = ServerConfiguration(host: "127.0.0.1", port: 0, privateSourceHosts: ["127.0.0.1:\(origin.port)"])
        configure(&configuration, origin)
        var logger = Logger(label: "webimage.serve.test")
        logger.logLevel = .warning
        let server = try ImageServer(configuration: configuration, logger: logger)
        let (ports, continuation) = AsyncStream.makeStream(of: Int.self)
        let running = Task {
            defer { continuation.finish() }
            try await server.run { port in continuation.yield(port); continuation.finish() }
        }
        var iterator = ports.makeAsyncIterator()
        guard let port = await iterator.next() else {
            running.cancel()
            throw WebImageError.connectionFailed("the server did not start")
        }
        return ServerHarness(origin: origin, server: server, port: port, running: running, ownsOrigin: existingOrigin == nil)
    }

    private init(origin: LoopbackServer, server: ImageServer, port: Int, running: Task<Void, any Error>, ownsOrigin: Bool) {
        self.origin = origin
        self.server = server
        self.port = port
        self.running = running
        self.ownsOrigin = ownsOrigin
    }

    /// The query `url=` value for the origin's `path`, percent-encoded.
    func source(_ path: String) -> String {
        encode(origin.url(path).absoluteString)
    }

    func encode(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? text
    }

    func get(_ query: String, headers: [(String, String)] = []) async throws -> HTTPReply {
        try await ServerTestClient.image(port: port, query, headers: headers)
    }

    /// Graceful shutdown, waiting for `run` to return.
    func stop() async throws {
        await server.shutdown()
        try await running.value
        if ownsOrigin { try await origin.shutdown() }
    }
}
