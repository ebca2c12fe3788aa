import NIOCore

/// Opens a `CONNECT` tunnel through an HTTP proxy on a new connection, before TLS to the target
/// starts: writes the request when the connection is up, reads the proxy's answer head (at most
/// ``maxHeadSize`` bytes), then leaves the pipeline. `ready` succeeds on a 2xx answer; a 407 fails
/// it with ``HTTPLoadError/proxyAuthenticationRequired(_:)``, any other answer with
/// ``HTTPLoadError/connectionFailed(_:)``.
///
/// The head is read by hand rather than with NIO's response decoder: a 2xx answer to `CONNECT`
/// has no body whatever its headers say, and the bytes after it belong to the TLS handshake.
final class ProxyTunnelHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    /// A proxy's answer head longer than this is refused (it is a few hundred bytes in practice).
    static let maxHeadSize = 16 * 1024

    private let target: HTTPOrigin
    private let proxy: HTTPProxy
    private let ready: EventLoopPromise<Void>
    private var received: ByteBuffer?
    private var done = false

    init(target: HTTPOrigin, proxy: HTTPProxy, ready: EventLoopPromise<Void>) {
        self.target = target
        self.proxy = proxy
        self.ready = ready
    }

    /// The `CONNECT` request for `target` through `proxy`.
    static func request(to target: HTTPOrigin, proxy: HTTPProxy) -> String {
        let authority = target.host.utf8.contains(UInt8(ascii: ":")) ? "[\(target.host)]:\(target.port)" : "\(target.host):\(target.port)"
        var text = "CONNECT \(authority) HTTP/1.1\r\nHost: \(authority)\r\n"
        if let authorization = proxy.authorization { text += "Proxy-Authorization: \(authorization)\r\n" }
        return text + "\r\n"
    }

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { sendRequest(context: context) }
    }

    func channelActive(context: ChannelHandlerContext) {
        sendRequest(context: context)
        context.fireChannelActive()
    }

    private func sendRequest(context: ChannelHandlerContext) {
        guard received == nil else { return }
        received = context.channel.allocator.buffer(capacity: 256)
        let request = Self.request(to: target, proxy: proxy)
        context.writeAndFlush(wrapOutboundOut(context.channel.allocator.buffer(string: request)), promise: nil)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !done else { return }
        var chunk = unwrapInboundIn(data)
        received?.writeBuffer(&chunk)
        guard let buffer = received else { return }
        let bytes = buffer.readableBytesView
        guard let end = Self.headEnd(in: bytes) else {
            if bytes.count > Self.maxHeadSize {
                fail(context: context, HTTPLoadError.connectionFailed("the proxy \(proxy.displayName) sent an oversized answer to CONNECT"))
            }
            return
        }
        guard let status = Self.status(of: bytes[bytes.startIndex..<end]) else {
            return fail(context: context, HTTPLoadError.connectionFailed("the proxy \(proxy.displayName) sent a malformed answer to CONNECT"))
        }
        if status == 407 {
            return fail(context: context, HTTPLoadError.proxyAuthenticationRequired(proxy.displayName))
        }
        guard (200..<300).contains(status) else {
            return fail(context: context, HTTPLoadError.connectionFailed(
                "the proxy \(proxy.displayName) answered CONNECT to \(target.host):\(target.port) with status \(status)"))
        }
        guard end == bytes.endIndex else {
            // The target speaks only after our TLS hello: bytes now are not from it.
            return fail(context: context, HTTPLoadError.connectionFailed("the proxy \(proxy.displayName) sent bytes after its answer to CONNECT"))
        }
        done = true
        context.pipeline.syncOperations.removeHandler(self, promise: nil)
        ready.succeed(())
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        fail(context: context, error)
    }

    func channelInactive(context: ChannelHandlerContext) {
        fail(context: context, HTTPLoadError.connectionFailed("the proxy \(proxy.displayName) closed the connection before the tunnel opened"))
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        if !done { ready.fail(ChannelError.ioOnClosedChannel) }
    }

    private func fail(context: ChannelHandlerContext, _ error: any Error) {
        guard !done else { return }
        done = true
        ready.fail(error)
        context.close(promise: nil)
    }

    /// The index just past the blank line that ends the head, if it has arrived.
    private static func headEnd(in bytes: ByteBufferView) -> ByteBufferView.Index? {
        var index = bytes.startIndex
        let crlfcrlf: [UInt8] = [13, 10, 13, 10]
        while index + 4 <= bytes.endIndex {
            if bytes[index] == 13, bytes[index..<index + 4].elementsEqual(crlfcrlf) { return index + 4 }
            index += 1
        }
        return nil
    }

    /// The status code of `HTTP/1.x NNN reason`, `nil` when the status line is not that.
    private static func status(of head: ByteBufferView.SubSequence) -> Int? {
        let line = head.prefix { $0 != 13 }
        let parts = line.split(separator: UInt8(ascii: " "), maxSplits: 2, omittingEmptySubsequences: true)
        guard parts.count >= 2, parts[0].starts(with: Array("HTTP/1.".utf8)), parts[1].count == 3,
              parts[1].allSatisfy({ (48...57).contains($0) }) else { return nil }
        return parts[1].reduce(0) { $0 * 10 + Int($1 - 48) }
    }
}
