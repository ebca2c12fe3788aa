import NIOCore
import NIOHTTP2

/// Refuses an HTTP/2 response head whose `:status` is not three digits, before NIOHTTP2's
/// HTTP/1 codec reads it: the codec (swift-nio-http2 1.46) takes any integer, and NIOHTTP1's
/// `HTTPResponseStatus(statusCode:)` traps on a negative one, so a server answering
/// `:status: -1` crashed the client (found by `HTTP2FrameFuzzer`). RFC 9110 §15: a status code
/// is three digits. The stream fails with ``HTTPLoadError/connectionFailed(_:)`` and reads
/// nothing more.
final class HTTP2ResponseStatusValidator: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTP2Frame.FramePayload
    typealias InboundOut = HTTP2Frame.FramePayload

    /// Heads until the final (non-1xx) one carry a `:status`; blocks after it are trailers.
    private var awaitingFinalHead = true
    private var refused = false

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !refused else { return }
        if awaitingFinalHead, case .headers(let headers) = unwrapInboundIn(data) {
            let statuses = headers.headers[":status"]
            guard statuses.count == 1, let status = statuses.first, Self.isStatusCode(status) else {
                refused = true
                let shown = statuses.map { String($0.prefix(16)) }
                context.fireErrorCaught(HTTPLoadError.connectionFailed("malformed HTTP/2 response: :status \(shown)"))
                return
            }
            awaitingFinalHead = status.utf8.first == UInt8(ascii: "1")
        }
        context.fireChannelRead(data)
    }

    /// Three ASCII digits, the first not 0.
    static func isStatusCode(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        return bytes.count == 3 && (UInt8(ascii: "1")...UInt8(ascii: "9")).contains(bytes[0])
            && bytes.dropFirst().allSatisfy { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }
    }
}
