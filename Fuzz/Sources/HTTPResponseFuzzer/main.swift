import Foundation
import FuzzSupport
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
@testable import WebImage

// The HTTP client against a hostile server: each input is the whole byte stream a loopback
// server answers one request with (status line, headers, body, anything), then it closes. The
// client must deliver bytes or a typed error: never crash, hang or grow without bound.
// Redirects are not followed (maxRedirects 0), so no input can point the client anywhere else.

/// What the server answers with: the current input.
let currentResponse = NIOLockedValueBox(ByteBuffer())

/// Reads a request head, answers with the current input, closes.
final class HostileResponder: ChannelInboundHandler, Sendable {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let buffer = unwrapInboundIn(data)
        // Requests from this client fit in one read; the head ends with an empty line.
        guard buffer.readableBytesView.lastIndex(of: UInt8(ascii: "\n")) != nil else { return }
        let response = currentResponse.withLockedValue { $0 }
        context.writeAndFlush(wrapOutboundOut(response)).whenComplete { _ in context.close(promise: nil) }
    }
}

let group = MultiThreadedEventLoopGroup.singleton
let server = try ServerBootstrap(group: group)
    .serverChannelOption(ChannelOptions.socketOption(.so_reuseaddr), value: 1)
    .childChannelInitializer { channel in channel.pipeline.addHandler(HostileResponder()) }
    .bind(host: "127.0.0.1", port: 0).wait()
let url = URL(string: "http://127.0.0.1:\(server.localAddress?.port ?? 0)/image")!
let loader = HTTPImageLoader(configuration: .init(idleTimeout: .seconds(2), maxBodySize: 1 << 20, maxRedirects: 0))

/// Loads `url` once with `response` as the server's answer.
func load(answering response: Data) {
    currentResponse.withLockedValue { $0 = ByteBuffer(bytes: response) }
    let done = DispatchSemaphore(value: 0)
    // Detached: a plain Task here would inherit the main actor, whose thread waits below.
    Task.detached {
        do {
            for try await _ in loader.load(ImageLoadRequest(url: url)) {}
        } catch {
            // Any error must be the library's own type.
            if !(error is WebImageError) { fatalError("untyped error: \(error)") }
        }
        done.signal()
    }
    done.wait()
}

// The pool's first weak reference allocates its side table, which lives as long as the pool but
// is pointed to by the object's shifted refcount bits, where LeakSanitizer cannot see it: once the
// last closure holding a weak reference is gone, the table looks leaked. A global weak reference
// made before fuzzing keeps it visibly reachable.
nonisolated(unsafe) weak var poolSideTableAnchor = loader.pool

runFuzzer { data in load(answering: data) }
