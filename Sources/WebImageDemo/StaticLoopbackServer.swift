#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import NIOCore
import NIOHTTP1
import NIOPosix
import WebImage

/// A static HTTP/1.1 server on 127.0.0.1 (SwiftNIO) for `webimage demo`: `GET path` answers the
/// bytes registered for that path (404 otherwise), connections are kept alive. It injects no
/// faults and carries no test code: the tests' fault-injecting server is `LoopbackServer` in
/// `WebImageTestSupport`, which the shipped binary does not link.
public final class StaticLoopbackServer: Sendable {
    /// A file the server answers with.
    public struct File: Sendable {
        /// The body.
        public var data: Data
        /// The `Content-Type` header.
        public var contentType: String

        /// A file of `data` served as `contentType`.
        public init(data: Data, contentType: String) {
            self.data = data
            self.contentType = contentType
        }
    }

    private struct State {
        var countsByPath: [String: Int] = [:]
        var connections: [ObjectIdentifier: any Channel] = [:]
    }

    private let serverChannel: any Channel
    private let state: Locked<State>

    /// The port the server listens on (chosen by the system).
    public let port: Int

    /// Starts a server on 127.0.0.1 with a system-chosen port, serving `files` by path ("/a.png").
    public static func start(files: [String: File]) async throws -> StaticLoopbackServer {
        let state = Locked(State())
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(ChannelOptions.backlog, value: 256)
            .serverChannelOption(ChannelOptions.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                state.withLock { $0.connections[ObjectIdentifier(channel)] = channel }
                channel.closeFuture.whenComplete { _ in state.withLock { _ = $0.connections.removeValue(forKey: ObjectIdentifier(channel)) } }
                return channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline()
                    try channel.pipeline.syncOperations.addHandler(FileHandler(files: files, state: state))
                }
            }
            .bind(host: "127.0.0.1", port: 0).get()
        return StaticLoopbackServer(channel: channel, state: state)
    }

    private init(channel: any Channel, state: Locked<State>) {
        serverChannel = channel
        self.state = state
        port = channel.localAddress?.port ?? 0
    }

    /// The URL of `path` on this server (`path` starts with "/" and may end with "?query", which
    /// the server ignores).
    public func url(_ path: String) -> URL {
        // 127.0.0.1, a port and a path from this program always form a URL; the fallback is unreachable.
        URL(string: "http://127.0.0.1:\(port)\(path)") ?? URL(fileURLWithPath: "/")
    }

    /// How many requests arrived for `path` (without its query).
    public func requestCount(for path: String) -> Int { state.withLock { $0.countsByPath[path, default: 0] } }

    /// How many requests arrived in all.
    public var totalRequestCount: Int { state.withLock { $0.countsByPath.values.reduce(0, +) } }

    /// Stops accepting and closes every open connection.
    public func shutdown() async throws {
        try await serverChannel.close()
        for connection in state.withLock({ Array($0.connections.values) }) {
            try? await connection.close()
        }
    }

    /// Answers each request on one connection, on its event loop.
    private final class FileHandler: ChannelInboundHandler {
        typealias InboundIn = HTTPServerRequestPart
        typealias OutboundOut = HTTPServerResponsePart

        private let files: [String: File]
        private let state: Locked<State>
        private var head: HTTPRequestHead?

        init(files: [String: File], state: Locked<State>) {
            self.files = files
            self.state = state
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            switch unwrapInboundIn(data) {
            case .head(let requestHead):
                head = requestHead
            case .body:
                break
            case .end:
                guard let head else { return }
                let path = String(head.uri.prefix { $0 != "?" })
                state.withLock { $0.countsByPath[path, default: 0] += 1 }
                let file = head.method == .GET || head.method == .HEAD ? files[path] : nil
                var headers = HTTPHeaders()
                headers.add(name: "Content-Length", value: String(file?.data.count ?? 0))
                if let file { headers.add(name: "Content-Type", value: file.contentType) }
                if !head.isKeepAlive { headers.add(name: "Connection", value: "close") }
                context.write(wrapOutboundOut(.head(HTTPResponseHead(version: head.version, status: file == nil ? .notFound : .ok,
                                                                     headers: headers))), promise: nil)
                if let file, head.method == .GET {
                    context.write(wrapOutboundOut(.body(.byteBuffer(context.channel.allocator.buffer(bytes: file.data)))), promise: nil)
                }
                let channel = context.channel, keepAlive = head.isKeepAlive
                context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { _ in
                    if !keepAlive { channel.close(promise: nil) }
                }
                self.head = nil
            }
        }
    }
}
