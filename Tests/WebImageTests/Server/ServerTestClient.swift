#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import NIOCore
import NIOHTTP1
import NIOPosix

/// One HTTP answer, as the tests read it.
struct HTTPReply: Sendable {
    var status: Int
    var headers: [(String, String)]
    var body: Data

    /// The first value of header `name` (case-insensitive).
    func header(_ name: String) -> String? {
        headers.first { $0.0.lowercased() == name.lowercased() }?.1
    }

    /// The `{"error": {"code", "message"}}` body's code.
    var errorCode: String? {
        struct Body: Decodable { struct Detail: Decodable { var code: String; var message: String }; var error: Detail }
        return (try? JSONDecoder().decode(Body.self, from: body))?.error.code
    }

    /// The `{"error": {"code", "message"}}` body's message.
    var errorMessage: String? {
        struct Body: Decodable { struct Detail: Decodable { var code: String; var message: String }; var error: Detail }
        return (try? JSONDecoder().decode(Body.self, from: body))?.error.message
    }
}

/// A minimal HTTP/1.1 client over a real socket: one connection per request, `Connection: close`.
enum ServerTestClient {
    static func send(port: Int, _ target: String, method: HTTPMethod = .GET, headers: [(String, String)] = []) async throws -> HTTPReply {
        let promise = MultiThreadedEventLoopGroup.singleton.next().makePromise(of: HTTPReply.self)
        let channel: any Channel
        do {
            channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                .channelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHTTPClientHandlers()
                        try channel.pipeline.syncOperations.addHandler(ReplyCollector(promise: promise))
                    }
                }
                .connect(host: "127.0.0.1", port: port).get()
        } catch {
            // A connect that failed: the test fails with the error, rather than NIO's debug
            // build stopping the process over a promise left unfulfilled.
            promise.fail(error)
            throw error
        }
        var head = HTTPRequestHead(version: .http1_1, method: method, uri: target)
        head.headers.add(name: "Host", value: "127.0.0.1:\(port)")
        head.headers.add(name: "Connection", value: "close")
        for (name, value) in headers { head.headers.add(name: name, value: value) }
        channel.write(HTTPClientRequestPart.head(head), promise: nil)
        try await channel.writeAndFlush(HTTPClientRequestPart.end(nil)).get()
        defer { channel.close(promise: nil) }
        return try await promise.futureResult.get()
    }

    /// `GET /image?` + the query.
    static func image(port: Int, _ query: String, method: HTTPMethod = .GET, headers: [(String, String)] = []) async throws -> HTTPReply {
        try await send(port: port, "/image?" + query, method: method, headers: headers)
    }
}

/// Collects one response; the promise fails if the connection ends first.
private final class ReplyCollector: ChannelInboundHandler, @unchecked Sendable {
    // Only touched on the channel's event loop (NIO's handler contract), hence the unchecked Sendable.
    typealias InboundIn = HTTPClientResponsePart
    private let promise: EventLoopPromise<HTTPReply>
    private var head: HTTPResponseHead?
    private var body = Data()

    init(promise: EventLoopPromise<HTTPReply>) { self.promise = promise }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head): self.head = head
        case .body(var buffer): body.append(contentsOf: buffer.readBytes(length: buffer.readableBytes) ?? [])
        case .end:
            if let head {
                promise.succeed(HTTPReply(status: Int(head.status.code), headers: head.headers.map { ($0.name, $0.value) }, body: body))
            }
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        promise.fail(ChannelError.eof)
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        promise.fail(error)
        context.close(promise: nil)
    }
}
