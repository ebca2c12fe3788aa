import NIOCore
import NIOHTTP1
import NIOHTTP2
import WebImageSupport

/// One HTTP/2 connection to an origin, carrying many exchanges at once, one stream each.
///
/// The pool reserves a stream (``reserveStream()``) under its own lock before handing a load an
/// ``HTTP2Stream``; the stream gives its slot back when its exchange ends. The server's
/// `SETTINGS_MAX_CONCURRENT_STREAMS` bounds the reservations; a GOAWAY stops them (the streams the
/// server did not take fail as refused, and the transfer sends them again on a new connection).
final class HTTP2Connection: Sendable {
    /// What the pool is told about the connection.
    enum Event: Sendable {
        /// A stream ended: its slot is free.
        case streamClosed
        /// The server's SETTINGS came; the connection now allows `maxConcurrentStreams` streams.
        case settings(maxConcurrentStreams: Int)
        /// The server sent GOAWAY: no new streams on this connection.
        case goingAway
        /// The connection closed.
        case closed
    }

    private struct State {
        /// Streams reserved or open.
        var active = 0
        /// The server's `SETTINGS_MAX_CONCURRENT_STREAMS`. Until its first SETTINGS arrive, 100
        /// (the least RFC 9113 §6.5.2 recommends, and what nghttp2, so curl, assumes): waiting for
        /// them held every request but one back by a round trip. A server with a lower limit
        /// refuses the streams over it (`REFUSED_STREAM`), and those are sent again (``wasRefused(streamID:error:)``).
        var maxStreams = 100
        /// The last stream id of the server's GOAWAY, once one came.
        var lastStreamID: HTTP2StreamID?
        /// An HTTP/2 error was seen on the connection: it takes no new stream and closes once its
        /// streams have ended.
        var draining = false
        var closed = false
        /// Streams opened so far, for the idle check.
        var generation = 0
    }

    let channel: any Channel
    let origin: HTTPOrigin
    let multiplexer: NIOHTTP2Handler.StreamMultiplexer
    /// `https` or `http`, for the `:scheme` pseudo-header.
    let scheme: HTTP2FramePayloadToHTTP1ClientCodec.HTTPProtocol
    private let idleTimeout: TimeAmount
    private let state = Locked(State())
    /// Set once by the pool before the connection is shared; read on the loop.
    private let observer = Locked<(@Sendable (HTTP2Connection, Event) -> Void)?>(nil)

    init(channel: any Channel, origin: HTTPOrigin, multiplexer: NIOHTTP2Handler.StreamMultiplexer, idleTimeout: TimeAmount) {
        self.channel = channel
        self.origin = origin
        self.multiplexer = multiplexer
        self.idleTimeout = idleTimeout
        scheme = origin.scheme == "https" ? .https : .http
    }

    var eventLoop: any EventLoop { channel.eventLoop }

    /// Has `observer` told every event from now on.
    func observe(_ observer: @escaping @Sendable (HTTP2Connection, Event) -> Void) {
        self.observer.withLock { $0 = observer }
    }

    /// Whether new streams may go out on the connection.
    var isUsable: Bool {
        state.withLock { !$0.closed && $0.lastStreamID == nil && !$0.draining } && channel.isActive
    }

    /// The streams the server allows at once (its `SETTINGS_MAX_CONCURRENT_STREAMS`, 100 until it says).
    var maxConcurrentStreams: Int {
        state.withLock { $0.maxStreams }
    }

    /// Takes a stream slot if the server allows another one; `false` when it is full, going away or closed.
    func reserveStream() -> Bool {
        state.withLock { state in
            guard !state.closed, state.lastStreamID == nil, !state.draining, state.active < state.maxStreams else { return false }
            state.active += 1
            state.generation += 1
            return true
        }
    }

    /// Gives back a slot ``reserveStream()`` took; the connection closes once idle for the idle timeout.
    func releaseStream() {
        let (idle, generation) = state.withLock { state -> (Bool, Int) in
            state.active -= 1
            return (state.active == 0, state.generation)
        }
        if idle { scheduleIdleClose(generation) }
        notify(.streamClosed)
    }

    /// Whether a stream that ended without a response was refused by the server, so sending it
    /// again elsewhere is safe: `REFUSED_STREAM` (RFC 9113 §8.7), or a stream above a GOAWAY's
    /// last stream id (or never given an id) on a connection going away.
    func wasRefused(streamID: HTTP2StreamID?, error: any Error) -> Bool {
        if let closed = error as? NIOHTTP2Errors.StreamClosed, closed.errorCode == .refusedStream { return true }
        guard let last = state.withLock({ $0.lastStreamID }) else { return false }
        guard let streamID else { return true }
        return streamID > last
    }

    // MARK: Told by the connection's handler, on the loop

    /// The server's SETTINGS came; `maxConcurrentStreams` is `nil` when they do not name the limit
    /// (which then stays as it was).
    func receivedSettings(maxConcurrentStreams: Int?) {
        let limit = state.withLock { state -> Int in
            if let maxConcurrentStreams { state.maxStreams = maxConcurrentStreams }
            return state.maxStreams
        }
        notify(.settings(maxConcurrentStreams: limit))
    }

    func receivedGoAway(lastStreamID: HTTP2StreamID) {
        let first = state.withLock { state -> Bool in
            defer { state.lastStreamID = min(state.lastStreamID ?? lastStreamID, lastStreamID) }
            return state.lastStreamID == nil && !state.draining
        }
        if first { notify(.goingAway) }
        // Streams still running finish; the connection closes once they have (see releaseStream).
        if state.withLock({ $0.active == 0 }) { channel.close(promise: nil) }
    }

    /// NIOHTTP2 reported an error on the connection (a stream's or the connection's own; it has
    /// reset the stream, or sent GOAWAY): the streams running go on, no new one opens here, and
    /// the connection closes once they have ended. Closing it at once failed every other load
    /// on it for one stream's error (a reset racing the stream's end, a frame for a stream
    /// already gone).
    func drain() {
        stopTakingStreams()
        if state.withLock({ $0.active == 0 }) { channel.close(promise: nil) }
    }

    /// Takes no new stream from now on (the connection is about to be closed by us): the pool
    /// is told at once, not when the close completes (a TLS close waits for the peer's close_notify).
    func stopTakingStreams() {
        let first = state.withLock { state -> Bool in
            defer { state.draining = true }
            return !state.draining && state.lastStreamID == nil
        }
        if first { notify(.goingAway) }
    }

    func closed() {
        state.withLock { $0.closed = true }
        notify(.closed)
    }

    private func notify(_ event: Event) {
        observer.withLock { $0 }?(self, event)
    }

    /// Closes the connection if no stream opened since it went idle (generation `generation`).
    private func scheduleIdleClose(_ generation: Int) {
        let goingAway = state.withLock { $0.lastStreamID != nil || $0.draining }
        if goingAway {
            channel.close(promise: nil)
            return
        }
        channel.eventLoop.scheduleTask(in: idleTimeout) { [self] in
            // Taken out of service under the lock, so no load reserves a stream on it while it closes.
            let idle = state.withLock { state -> Bool in
                guard state.active == 0, state.generation == generation else { return false }
                state.draining = true
                return true
            }
            guard idle else { return }
            notify(.goingAway)
            channel.close(promise: nil)
        }
    }

    /// Ends the connection now; its streams fail.
    func abort() {
        stopTakingStreams()
        channel.close(promise: nil)
    }
}

extension HTTP2Connection {
    /// Makes `channel` (connected, past TLS and ALPN if any) an HTTP/2 client connection to
    /// `origin`: puts NIOHTTP2 on it (client settings, windows and limits of
    /// ``HTTP2ClientSettings``), watches the connection's own frames, has `observer` told its
    /// events, and opens its receive window. Call on the loop. The pool makes its connections
    /// here, and the HTTP/2 frame fuzzer its in-memory one.
    static func make(on channel: any Channel, origin: HTTPOrigin, idleTimeout: TimeAmount,
                     observer: @escaping @Sendable (HTTP2Connection, Event) -> Void) throws -> HTTP2Connection {
        let multiplexer = try channel.pipeline.syncOperations.configureHTTP2Pipeline(
            mode: .client, connectionConfiguration: HTTP2ClientSettings.connectionConfiguration,
            streamConfiguration: HTTP2ClientSettings.streamConfiguration,
            // Push is off (SETTINGS_ENABLE_PUSH 0): a server-initiated stream is closed at once.
            inboundStreamInitializer: { $0.close() })
        let watcher = HTTP2ConnectionWatcher()
        try channel.pipeline.syncOperations.addHandler(watcher)
        let connection = HTTP2Connection(channel: channel, origin: origin, multiplexer: multiplexer, idleTimeout: idleTimeout)
        watcher.attach(connection)
        connection.observe(observer)
        channel.writeAndFlush(HTTP2ClientSettings.connectionWindowUpdate, promise: nil)
        return connection
    }
}

/// Watches an HTTP/2 connection's own frames (stream 0) after NIOHTTP2's handler: the server's
/// SETTINGS (its stream limit) and GOAWAY, and the connection's end.
final class HTTP2ConnectionWatcher: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTP2Frame
    typealias OutboundOut = HTTP2Frame

    private weak var connection: HTTP2Connection?

    func attach(_ connection: HTTP2Connection) { self.connection = connection }

    func channelActive(context: ChannelHandlerContext) {
        context.fireChannelActive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        switch frame.payload {
        case .settings(.settings(let settings)):
            // A SETTINGS frame may repeat a parameter: the last one counts.
            connection?.receivedSettings(maxConcurrentStreams: settings.last(where: { $0.parameter == .maxConcurrentStreams })?.value)
        case .goAway(let lastStreamID, _, _):
            connection?.receivedGoAway(lastStreamID: lastStreamID)
        default:
            break
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        connection?.closed()
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // NIOHTTP2 reports some errors of single streams here too: a frame for a stream already
        // gone, a stream already closed (a reset crossing the stream's end). Those leave the
        // connection sound: it takes no new stream and ends with its last one, rather than
        // failing every other load on it. Any other error (a connection error NIOHTTP2 has sent
        // GOAWAY for, TLS, the socket) has broken the connection: it closes, and its streams fail.
        if error is NIOHTTP2Errors.NoSuchStream || error is NIOHTTP2Errors.StreamClosed {
            connection?.drain()
        } else {
            connection?.stopTakingStreams()
            context.close(promise: nil)
        }
    }
}
