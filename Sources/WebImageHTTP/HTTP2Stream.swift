import NIOCore
import NIOHTTP1
import NIOHTTP2
import WebImageSupport

/// One exchange's stream on an ``HTTP2Connection``: the slot the pool reserved for it, opened
/// when the request is sent. Its child channel translates between NIO's HTTP/1 types and HTTP/2
/// frames (`HTTP2FramePayloadToHTTP1ClientCodec`), so the response feeds the same
/// ``HTTPResponseHandler`` and ``HTTPExchange`` as an HTTP/1.1 response.
final class HTTP2Stream: HTTPExchangeCarrier {
    private enum Phase {
        case reserved
        case opening
        case open(any Channel)
        /// Aborted before its channel existed: the channel is closed as soon as it does.
        case aborted
        case ended
    }

    let connection: HTTP2Connection
    /// The HTTP/2 weight of the stream (1...256), from the load's priority.
    let weight: Int
    private let phase = Locked(Phase.reserved)

    /// A stream in a slot `connection` reserved for it.
    init(on connection: HTTP2Connection, weight: Int) {
        self.connection = connection
        self.weight = weight
    }

    var origin: HTTPOrigin { connection.origin }
    var eventLoop: any EventLoop { connection.eventLoop }

    func send(_ head: HTTPRequestHead, body: ByteBuffer?, to consumer: any HTTPResponseConsumer,
              returnToPool: @escaping @Sendable (Bool) -> Void,
              completion: @escaping @Sendable (Result<HTTPExchange.Outcome, any Error>) -> Void) {
        let proceed = phase.withLock { phase -> Bool in
            guard case .reserved = phase else { return false }
            phase = .opening
            return true
        }
        guard proceed else {
            returnToPool(false)
            return completion(.failure(HTTPLoadError.cancelled))
        }
        consumer.started(on: self)
        let connection = connection
        let refused: @Sendable (ChannelHandlerContext, any Error) -> Bool = { context, error in
            let id = try? context.channel.syncOptions?.getOption(HTTP2StreamChannelOptions.streamID)
            return connection.wasRefused(streamID: id, error: error)
        }
        let weight = weight
        let created = connection.eventLoop.makePromise(of: (any Channel).self)
        connection.multiplexer.createStreamChannel(promise: created) { channel in
            channel.eventLoop.makeCompletedFuture {
                let handler = HTTPResponseHandler(refused: refused)
                try channel.pipeline.syncOperations.addHandlers([
                    HTTP2StreamPriorityWriter(weight: weight),
                    HTTP2ResponseStatusValidator(),
                    HTTP2FramePayloadToHTTP1ClientCodec(httpProtocol: connection.scheme),
                    handler,
                ])
            }
        }
        created.futureResult.whenComplete { [self] result in
            switch result {
            case .success(let channel):
                let abortedMeanwhile = phase.withLock { phase -> Bool in
                    if case .aborted = phase { return true }
                    phase = .open(channel)
                    return false
                }
                channel.closeFuture.whenComplete { [phase] _ in phase.withLock { $0 = .ended } }
                // The request goes out once the stream's channel is active (now, on the loop).
                do {
                    try channel.pipeline.syncOperations.handler(type: HTTPResponseHandler.self)
                        .start(head, body: body, consumer: consumer, completion: completion, returnToPool: returnToPool)
                } catch {
                    returnToPool(false)
                    completion(.failure(error))
                }
                if abortedMeanwhile { Self.end(channel) }
            case .failure(let error):
                // No stream: the connection closed or is going away (the request may go elsewhere).
                phase.withLock { $0 = .ended }
                returnToPool(false)
                let stale = connection.wasRefused(streamID: nil, error: error) || !connection.isUsable
                completion(.failure(stale ? StaleConnectionError() : error))
            }
        }
    }

    /// Resets the stream (`RST_STREAM CANCEL`, sent by NIOHTTP2 when an open stream's channel
    /// closes); the connection goes on serving its other streams. The exchange ends now, with
    /// the reason its load was aborted.
    func abort() {
        let channel = phase.withLock { phase -> (any Channel)? in
            switch phase {
            case .open(let channel): return channel
            case .reserved, .opening:
                phase = .aborted
                return nil
            case .aborted, .ended: return nil
            }
        }
        if let channel { Self.end(channel) }
    }

    /// Ends the exchange on `channel` and closes it. The exchange is told here rather than when
    /// the channel reports its end: a stream whose HEADERS still wait in NIOHTTP2's buffer (the
    /// server's stream limit) is dropped from it by the reset, and its channel never reports an
    /// end, so waiting for that lost the load's completion for good.
    private static func end(_ channel: any Channel) {
        let end: @Sendable () -> Void = {
            if let handler = try? channel.pipeline.syncOperations.handler(type: HTTPResponseHandler.self) {
                handler.abandon(ChannelError.ioOnClosedChannel)
            } else {
                channel.close(promise: nil)
            }
        }
        if channel.eventLoop.inEventLoop { end() } else { channel.eventLoop.execute(end) }
    }
}

/// Puts the load's priority on the request's HEADERS frame (RFC 9113 §5.3.2's priority fields,
/// deprecated but still read by some servers; a server that ignores them loses nothing).
final class HTTP2StreamPriorityWriter: ChannelOutboundHandler, RemovableChannelHandler {
    typealias OutboundIn = HTTP2Frame.FramePayload
    typealias OutboundOut = HTTP2Frame.FramePayload

    private let weight: UInt8

    /// `weight` is 1...256, as the protocol counts it (sent as weight - 1).
    init(weight: Int) {
        self.weight = UInt8(clamping: min(max(weight, 1), 256) - 1)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        var payload = unwrapOutboundIn(data)
        if case .headers(var headers) = payload, weight != 15 {
            headers.priorityData = HTTP2Frame.StreamPriorityData(exclusive: false, dependency: .rootStream, weight: weight)
            payload = .headers(headers)
        }
        context.write(wrapOutboundOut(payload), promise: promise)
    }
}
