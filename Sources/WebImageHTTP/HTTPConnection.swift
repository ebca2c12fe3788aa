import NIOCore
import NIOHTTP1

/// What a connection tells the exchange it carries; every call is on the connection's event loop.
///
/// A throwing call aborts the exchange with that error and closes the connection.
protocol HTTPResponseConsumer: AnyObject, Sendable {
    /// The request is being written on `carrier` (the exchange arms its timers here, on the loop).
    func started(on carrier: any HTTPExchangeCarrier)
    /// The final (non-1xx) response head.
    func receive(head: HTTPResponseHead) throws
    /// One piece of the body; `false` stops reading: the exchange finishes with what it has
    /// and the connection is closed rather than drained.
    func receive(body: ByteBuffer) throws -> Bool
    /// The response is complete (or reading was stopped); what the exchange amounts to.
    func finish() throws -> HTTPExchange.Outcome
}

/// One keep-alive HTTP/1.1 connection, carrying one exchange at a time.
///
/// The pool leases it to an exchange, which ``send(_:to:returnToPool:completion:)``s one request on it. When that
/// exchange ends, on the event loop, the connection goes back to the pool by itself: to the idle
/// list when the response allowed keep-alive and was read to its end, else closed.
final class HTTPConnection: HTTPExchangeCarrier {
    let channel: any Channel
    let origin: HTTPOrigin
    private let handler: NIOLoopBound<HTTPResponseHandler>

    /// Call on `channel`'s event loop, with the handler that is in its pipeline.
    init(channel: any Channel, origin: HTTPOrigin, handler: HTTPResponseHandler) {
        self.channel = channel
        self.origin = origin
        self.handler = NIOLoopBound(handler, eventLoop: channel.eventLoop)
    }

    var eventLoop: any EventLoop { channel.eventLoop }

    /// Writes `head` and reports the response to `consumer`; `completion` is told, on the event
    /// loop, how the exchange ended, after the connection went back to the pool. `returnToPool` is
    /// told whether it may be reused.
    func send(_ head: HTTPRequestHead, body: ByteBuffer?, to consumer: any HTTPResponseConsumer,
              returnToPool: @escaping @Sendable (Bool) -> Void,
              completion: @escaping @Sendable (Result<HTTPExchange.Outcome, any Error>) -> Void) {
        let begin: @Sendable () -> Void = { [handler, self] in
            consumer.started(on: self)
            handler.value.start(head, body: body, consumer: consumer, completion: completion, returnToPool: returnToPool)
        }
        // On the loop already (the download before ended here), the request goes out now rather
        // than after the rest of that download's completion: the server is waiting for it.
        if channel.eventLoop.inEventLoop { begin() } else { channel.eventLoop.execute(begin) }
    }

    /// Ends the connection now; an exchange on it fails.
    func abort() {
        channel.close(promise: nil)
    }
}

extension HTTPConnection {
    /// Makes `channel` (connected, TLS set up if any) an HTTP/1.1 client connection to `origin`:
    /// the client handlers and the response handler go on its pipeline. Call on its event loop.
    /// The pool makes its connections here, and the HTTP response fuzzer its in-memory one.
    static func make(on channel: any Channel, origin: HTTPOrigin) throws -> HTTPConnection {
        try addHTTPClientHandlers(to: channel.pipeline.syncOperations)
        let handler = HTTPResponseHandler()
        try channel.pipeline.syncOperations.addHandler(handler)
        return HTTPConnection(channel: channel, origin: origin, handler: handler)
    }

    /// Adds the HTTP/1.1 client handlers to a new connection's pipeline: NIO's request encoder,
    /// header validator and response decoder, the decoder set to forward interim (1xx) heads
    /// rather than drop them, so the handler sees that one came (see ``HTTPResponseHandler``).
    static func addHTTPClientHandlers(to pipeline: ChannelPipeline.SynchronousOperations) throws {
        try pipeline.addHandlers([
            HTTPRequestEncoder(),
            ByteToMessageHandler(HTTPResponseDecoder(leftOverBytesStrategy: .dropBytes, informationalResponseStrategy: .forward)),
            NIOHTTPRequestHeadersValidator(),
        ])
    }
}

/// Thrown when a connection that served before closed without a response byte to the next
/// request: the server dropped it while idle, so the request may be sent again elsewhere.
struct StaleConnectionError: Error {}

/// The channel handler behind ``HTTPConnection``: writes the request and feeds response parts to
/// the exchange's consumer.
final class HTTPResponseHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPClientResponsePart
    typealias OutboundOut = HTTPClientRequestPart

    private var context: ChannelHandlerContext?
    /// For an HTTP/2 stream: whether the server refused it unprocessed (`REFUSED_STREAM`, or above
    /// a GOAWAY's last stream id), so the request may go again elsewhere; HTTP/1.1 leaves it `nil`.
    private let refused: (@Sendable (ChannelHandlerContext, any Error) -> Bool)?
    private var consumer: (any HTTPResponseConsumer)?
    private var completion: (@Sendable (Result<HTTPExchange.Outcome, any Error>) -> Void)?
    private var returnToPool: (@Sendable (Bool) -> Void)?
    private var exchangesStarted = 0
    private var sawResponse = false
    private var keepAlive = true
    /// An interim (1xx) head came before the final one. The client never asks for one (no
    /// `Expect: 100-continue`), so a server sending one is not following the exchange we started:
    /// the connection is closed after the response rather than reused.
    private var sawInterimResponse = false

    init(refused: (@Sendable (ChannelHandlerContext, any Error) -> Bool)? = nil) {
        self.refused = refused
    }

    /// Whether the channel is an HTTP/2 stream (one exchange, then it ends) rather than an HTTP/1.1 connection.
    private var isStream: Bool { refused != nil }

    func handlerAdded(context: ChannelHandlerContext) { self.context = context }

    func handlerRemoved(context: ChannelHandlerContext) {
        fail(ChannelError.ioOnClosedChannel)
        self.context = nil
    }

    func start(_ head: HTTPRequestHead, body: ByteBuffer? = nil, consumer: any HTTPResponseConsumer,
               completion: @escaping @Sendable (Result<HTTPExchange.Outcome, any Error>) -> Void,
               returnToPool: @escaping @Sendable (Bool) -> Void) {
        guard let context, context.channel.isActive, self.completion == nil else {
            returnToPool(false)
            completion(.failure(exchangesStarted > 0 ? StaleConnectionError() : ChannelError.ioOnClosedChannel))
            return
        }
        exchangesStarted += 1
        self.consumer = consumer
        self.completion = completion
        self.returnToPool = returnToPool
        sawResponse = false
        keepAlive = true
        sawInterimResponse = false
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        if let body { context.write(wrapOutboundOut(.body(.byteBuffer(body))), promise: nil) }
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard let consumer else { return }
        do {
            switch unwrapInboundIn(data) {
            case .head(let head):
                if head.status == .switchingProtocols {
                    // The server switched the connection to a protocol we never asked for: what
                    // follows is not HTTP/1.1, so the connection is closed, not pooled (and, as
                    // the server did answer, the request is not retried as if it were stale).
                    sawResponse = true
                    throw HTTPLoadError.httpStatus(101)
                }
                // Other 1xx heads are interim: the final head follows, and the connection is not
                // pooled after it.
                if head.status.code < 200 {
                    sawResponse = true
                    sawInterimResponse = true
                    return
                }
                sawResponse = true
                keepAlive = head.isKeepAlive
                var head = head
                // HTTP/2 has no chunked coding (RFC 9113 §8.2.2): NIO's HTTP/2-to-HTTP/1 codec
                // adds `transfer-encoding: chunked` to a head without a length, which the
                // server never sent.
                if isStream { head.headers.remove(name: "transfer-encoding") }
                try consumer.receive(head: head)
            case .body(let buffer):
                // Reading stops early (a dropped body past its bound): the connection cannot be reused.
                if try !consumer.receive(body: buffer) { succeed(try consumer.finish(), reusable: false) }
            case .end:
                // An HTTP/2 stream that ended is closed by NIOHTTP2 itself: closing it here would
                // reset a stream that is already over (and keep-alive means nothing in HTTP/2).
                succeed(try consumer.finish(), reusable: isStream || (keepAlive && !sawInterimResponse),
                        closes: !isStream && !(keepAlive && !sawInterimResponse))
            }
        } catch {
            fail(error)
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        fail(error)
    }

    /// Ends the exchange now with `error` (unless it has ended) and closes the channel, without
    /// waiting for the channel to report its end: an HTTP/2 stream reset before its HEADERS left
    /// NIOHTTP2's buffer never reports one. Call on the channel's loop.
    func abandon(_ error: any Error) {
        fail(error)
        context?.close(promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        fail(ChannelError.eof)
        context.fireChannelInactive()
    }

    /// Ends the exchange with `outcome`; `closes`: the connection (or stream) is closed, which
    /// it must be when `reusable` is `false` for HTTP/1.1.
    private func succeed(_ outcome: HTTPExchange.Outcome, reusable: Bool, closes: Bool? = nil) {
        guard let completion, let returnToPool else { return }
        end()
        if closes ?? !reusable { context?.close(promise: nil) }
        returnToPool(reusable)
        completion(.success(outcome))
    }

    private func fail(_ error: any Error) {
        guard let completion, let returnToPool else { return }
        var stale = !sawResponse && exchangesStarted > 1
        if !sawResponse, let refused, let context, refused(context, error) { stale = true }
        end()
        context?.close(promise: nil)
        returnToPool(false)
        completion(.failure(stale ? StaleConnectionError() : error))
    }

    private func end() {
        completion = nil
        consumer = nil
        returnToPool = nil
    }
}
