import Foundation
import NIOCore
import NIOEmbedded
import NIOHTTP1
import Testing
@testable import WebImageHTTP
import WebImageSupport

/// An HTTP/2 server's response heads the client must refuse with a typed error rather than trap
/// on. The first was found by `HTTP2FrameFuzzer`: `:status: -01` crashed the client inside
/// NIOHTTP1 (`HTTPResponseStatus(statusCode:)` on a negative code, reached through NIOHTTP2's
/// HTTP/1 codec); ``HTTP2ResponseStatusValidator`` now refuses it first. The client's own
/// connection (``HTTP2Connection/make(on:origin:idleTimeout:observer:)``, ``HTTP2Stream``) runs
/// on an `EmbeddedChannel` that is fed the server's bytes, as in the fuzzer.
@Suite("HTTP/2 hostile response heads")
struct HTTP2HostileResponseTests {
    static let url = URL(string: "http://example.invalid/image")!

    /// An HTTP/2 frame on stream 1.
    static func frame(type: UInt8, flags: UInt8, _ payload: [UInt8]) -> [UInt8] {
        [0, UInt8(payload.count >> 8), UInt8(payload.count & 0xFF), type, flags, 0, 0, 0, 1] + payload
    }

    /// A HEADERS frame ending the stream, with `:status` literally `status` (HPACK: literal with
    /// incremental indexing, the name from the static table's entry 8).
    static func headers(status: String) -> [UInt8] {
        frame(type: 1, flags: 0x5, [0x48, UInt8(status.utf8.count)] + Array(status.utf8))
    }

    /// One GET on a new connection whose server answers with an empty SETTINGS frame, then
    /// `frames`, then closes; how the exchange ended.
    func load(answering frames: [UInt8]) throws -> Result<HTTPExchange.Outcome, any Error>? {
        let channel = EmbeddedChannel()
        defer { _ = try? channel.finish(acceptAlreadyClosed: true) }
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 80)).wait()
        let connection = try HTTP2Connection.make(on: channel, origin: HTTPOrigin(Self.url), idleTimeout: .seconds(60)) { _, _ in }
        #expect(connection.reserveStream())
        let exchange = HTTPExchange(url: Self.url, maxBodySize: 1 << 20, wantsPartialData: false, idleTimeout: .seconds(60),
                                    onCookies: nil) { _ in }
        let result = Locked<Result<HTTPExchange.Outcome, any Error>?>(nil)
        let head = HTTPRequestHead(version: .http1_1, method: .GET, uri: "/image", headers: ["Host": "example.invalid"])
        HTTP2Stream(on: connection, weight: 16).send(head, body: nil, to: exchange, returnToPool: { _ in }) { ended in
            result.withLock { $0 = ended }
        }
        channel.embeddedEventLoop.run()
        _ = try? channel.writeInbound(ByteBuffer(bytes: [0, 0, 0, 4, 0, 0, 0, 0, 0] + frames))
        channel.embeddedEventLoop.run()
        _ = try? channel.close().wait()
        channel.embeddedEventLoop.run()
        return result.withLock { $0 }
    }

    @Test func negativeStatusFailsTheLoad() throws {
        // The fuzzer's input, minimized by hand: a redirect head whose status is `-01`.
        let block = [0x48, 0x03] + Array("-01".utf8) + [0x6E, 0x06] + Array("/other".utf8)
        let result = try load(answering: Self.frame(type: 1, flags: 0x5, block))
        guard case .failure(let error) = result else { Issue.record("a negative :status gave \(String(describing: result))"); return }
        guard case .connectionFailed(let reason) = error as? HTTPLoadError else { Issue.record("untyped: \(error)"); return }
        #expect(reason.contains(":status"))
    }

    @Test(arguments: ["-1", "-200", "2000", "20", "", "+20", "020", "2x0", " 200"])
    func statusNotThreeDigitsFailsTheLoad(_ status: String) throws {
        let result = try load(answering: Self.headers(status: status))
        // Refused by the validator, or by NIOHTTP2's own header checks first; typed either way (what
        // HTTPTransfer reports is `HTTPLoadError.fromLoading` of it), never a trap.
        guard case .failure = result else { Issue.record("':status: \(status)' gave \(String(describing: result))"); return }
    }

    @Test func threeDigitStatusesStillLoad() throws {
        // 404 ends the exchange with its status; 200 with a body gives the body.
        guard case .success(.status(404)) = try load(answering: Self.headers(status: "404")) else {
            Issue.record("404 did not end with its status"); return
        }
        let body = Self.frame(type: 1, flags: 0x4, [0x88]) + Self.frame(type: 0, flags: 0x1, Array("hello".utf8))
        guard case .success(.body(let data, _)) = try load(answering: body) else { Issue.record("200 did not load"); return }
        #expect(data == Data("hello".utf8))
    }
}
