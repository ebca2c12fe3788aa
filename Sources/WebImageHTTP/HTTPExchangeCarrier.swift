import NIOCore
import NIOHTTP1

/// What one exchange (request and response) runs on: a whole HTTP/1.1 connection
/// (``HTTPConnection``) or one stream of an HTTP/2 connection (``HTTP2Stream``). The transfer and
/// the exchange see only this, so redirects, timeouts, limits and retries have one implementation.
protocol HTTPExchangeCarrier: AnyObject, Sendable {
    /// The origin (and proxy) the carrier's connection goes to.
    var origin: HTTPOrigin { get }
    /// The loop the exchange's callbacks run on.
    var eventLoop: any EventLoop { get }
    /// Writes `head` and reports the response to `consumer`; `returnToPool` is told once whether
    /// the carrier may serve again, then `completion` how the exchange ended, both on the loop.
    func send(_ head: HTTPRequestHead, body: ByteBuffer?, to consumer: any HTTPResponseConsumer,
              returnToPool: @escaping @Sendable (Bool) -> Void,
              completion: @escaping @Sendable (Result<HTTPExchange.Outcome, any Error>) -> Void)
    /// Ends the exchange now, from any thread: HTTP/1.1 closes the connection, HTTP/2 resets
    /// the stream (`RST_STREAM`) and keeps the connection for the other streams.
    func abort()
}
