#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What a ``LoopbackServer`` route answers, including the fault to inject.
///
/// Build one with the initializer or the factory helpers (``redirect(to:status:)``,
/// ``status(_:)``, ``image(_:contentType:)``) and then adjust the fault fields.
public struct LoopbackResponse: Sendable {
    /// Where the body bytes come from.
    public enum Body: Sendable {
        /// Bytes held in memory.
        case bytes(Data)
        /// `count` bytes generated on the fly in chunks (a repeating pattern), never held in memory.
        case generated(count: Int)

        var count: Int {
            switch self {
            case .bytes(let data): data.count
            case .generated(let count): count
            }
        }
    }

    /// Where a gated response waits for its ``LoopbackGate``.
    public enum GatePoint: Sendable {
        /// Before the response head: the client sees nothing until the gate opens.
        case beforeHead
        /// After the head and the first `bytes` body bytes: the body does not complete until the gate opens.
        case afterBodyBytes(Int)
    }

    /// The HTTP status code.
    public var status: Int
    /// Extra response headers.
    public var headers: [String: String]
    /// The body.
    public var body: Body
    /// Send a `Content-Length`; `false` sends the body chunked with no length.
    public var sendsContentLength: Bool
    /// Announce this `Content-Length` instead of the real one; with a larger value the server sends
    /// the body and closes the connection cleanly (a truncated body).
    public var announcedLength: Int?
    /// Wait this long (an event-loop scheduled task) before sending the head.
    public var delayBeforeHead: Duration?
    /// Send the body in pieces of `chunkSize` bytes, `interval` apart (a slow drip).
    public var drip: (chunkSize: Int, interval: Duration)?
    /// After sending this many body bytes, reset the connection (SO_LINGER 0 then close: the client sees RST).
    public var resetAfterBytes: Int?
    /// Hold the response at this gate (see ``gatePoint``) until the test opens it.
    public var gate: LoopbackGate?
    /// Where the response waits for ``gate``.
    public var gatePoint: GatePoint
    /// The `ETag` of the resource; a request whose `If-None-Match` matches gets 304.
    public var etag: String?
    /// The `Last-Modified` of the resource; a request whose `If-Modified-Since` matches gets 304.
    public var lastModified: String?
    /// A request for this route that arrives on a connection which already served one is not
    /// answered: the server closes the connection, as one that dropped an idle keep-alive
    /// connection just as the client reused it.
    public var dropsReusedConnection = false
    /// On HTTP/2, the stream is reset with `REFUSED_STREAM` instead of answered, as by a server
    /// over its stream limit: the client may send the request again (HTTP/1.1 ignores it).
    public var refusesStream = false
    /// Interim (1xx) heads sent, in this order, before the response's own head (e.g. `[103]`).
    public var interimStatuses: [Int] = []
    /// Answer `Accept-Ranges: bytes`, and a 200 response's `Range: bytes=N-` request with 206 and
    /// the body from byte N, unless its `If-Range` names another validator than ``etag`` or ``lastModified``.
    public var acceptsRanges = false

    /// Creates a response; the defaults answer 200 with the body and its length.
    public init(status: Int = 200, headers: [String: String] = [:], body: Body = .bytes(Data()),
                sendsContentLength: Bool = true, announcedLength: Int? = nil, delayBeforeHead: Duration? = nil,
                drip: (chunkSize: Int, interval: Duration)? = nil, resetAfterBytes: Int? = nil,
                gate: LoopbackGate? = nil, gatePoint: GatePoint = .beforeHead,
                etag: String? = nil, lastModified: String? = nil) {
        self.status = status
        self.headers = headers
        self.body = body
        self.sendsContentLength = sendsContentLength
        self.announcedLength = announcedLength
        self.delayBeforeHead = delayBeforeHead
        self.drip = drip
        self.resetAfterBytes = resetAfterBytes
        self.gate = gate
        self.gatePoint = gatePoint
        self.etag = etag
        self.lastModified = lastModified
    }

    /// In-memory bytes served with a content type (for images: `image/png`...).
    public static func image(_ data: Data, contentType: String) -> LoopbackResponse {
        LoopbackResponse(headers: ["Content-Type": contentType], body: .bytes(data))
    }

    /// No answer: on HTTP/2 the stream is reset with `REFUSED_STREAM` (see ``refusesStream``).
    public static var refusedStream: LoopbackResponse {
        var response = LoopbackResponse()
        response.refusesStream = true
        return response
    }

    /// A bare status with an empty body.
    public static func status(_ code: Int) -> LoopbackResponse {
        LoopbackResponse(status: code)
    }

    /// A redirect to `location`: a path on the same server or an absolute URL (another server).
    public static func redirect(to location: String, status: Int = 302) -> LoopbackResponse {
        LoopbackResponse(status: status, headers: ["Location": location])
    }
}

/// One request the server received, in arrival order.
public struct LoopbackRequest: Sendable {
    /// The position in arrival order, from 0.
    public var order: Int
    /// The request method (`GET`...).
    public var method: String
    /// The path without the query.
    public var path: String
    /// The full request target, with the query.
    public var uri: String
    /// The request headers, names lowercased (repeated names joined with ", ").
    public var headers: [String: String]
    /// Which connection carried it (connections are numbered from 0 in accept order).
    public var connection: Int
    /// The HTTP version it came in (`HTTP/1.1`, `HTTP/2.0`).
    public var version: String = "HTTP/1.1"
    /// The request's body as received (a POST's: what an OTLP exporter sends).
    public var body = Data()
}
