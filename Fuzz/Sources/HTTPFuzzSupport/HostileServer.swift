import Foundation
import NIOCore
import NIOEmbedded
@testable import WebImageHTTP

/// A hostile server answering the client's request with a fuzzer's input, in memory: the
/// client's own connection (its production pipeline, made by ``HTTPConnection/make(on:origin:)``
/// or ``HTTP2Connection/make(on:origin:idleTimeout:observer:)``) on an `EmbeddedChannel`, with
/// the input written as the bytes read from the socket and then the connection closed, as a
/// server closing it would. No socket and no thread: one input costs microseconds, not the
/// loopback round trips and thread hops of a real server.
///
/// An input's first byte is control: where the rest is cut in two reads (`byte × count / 255`:
/// partial reads reach the parsers' resumption paths), and in its low bits whether the exchange
/// asks for partial data (bit 0) and, over HTTP/2, whether the server's SETTINGS are not
/// prepended (bit 1: the fuzzer writes the preface itself).
package enum HostileServer {
    static let url = URL(string: "http://fuzz.invalid/image")!
    /// The loads' body limit, small so that bodies past it are common.
    static let maxBodySize: Int64 = 4096
    /// An empty SETTINGS frame: a valid server preface, so most inputs reach the frames after it.
    static let serverPreface: [UInt8] = [0, 0, 0, 4, 0, 0, 0, 0, 0]

    /// Answers one HTTP/1.1 request with `input`; if the connection went back to the pool
    /// reusable, a second request goes on it before the server closes (what it reads then is
    /// whatever followed the first response).
    package static func answerHTTP1(with input: Data) {
        guard let control = input.first, let channel = connectedChannel() else { return }
        defer { _ = try? channel.finish(acceptAlreadyClosed: true) }
        guard let connection = try? HTTPConnection.make(on: channel, origin: HTTPOrigin(url)) else {
            fatalError("the HTTP/1.1 pipeline cannot be set up")
        }
        let first = ExchangeProbe(wantsPartialData: control & 1 == 1)
        first.send(on: connection)
        feed(input.dropFirst(), cutAt: control, to: channel)
        var second: ExchangeProbe?
        if first.returnedReusable, channel.isActive {
            second = ExchangeProbe(wantsPartialData: false)
            second?.send(on: connection)
            drainOutbound(channel)
        }
        close(channel)
        first.check()
        second?.check()
    }

    /// Answers one HTTP/2 GET (stream 1) with `input` as the server's bytes after the client's preface.
    package static func answerHTTP2(with input: Data) {
        guard let control = input.first, let channel = connectedChannel() else { return }
        defer { _ = try? channel.finish(acceptAlreadyClosed: true) }
        let connection: HTTP2Connection
        do {
            connection = try HTTP2Connection.make(on: channel, origin: HTTPOrigin(url), idleTimeout: .seconds(60)) { _, _ in }
        } catch {
            fatalError("the HTTP/2 pipeline cannot be set up: \(error)")
        }
        guard connection.reserveStream() else { fatalError("a new connection refuses its first stream") }
        let probe = ExchangeProbe(wantsPartialData: control & 1 == 1)
        // As the pool does when the stream's exchange ends.
        probe.send(on: HTTP2Stream(on: connection, weight: 16)) { _ in connection.releaseStream() }
        channel.embeddedEventLoop.run()
        var bytes = control & 2 == 0 ? Data(serverPreface) : Data()
        bytes.append(input.dropFirst())
        feed(bytes, cutAt: control, to: channel)
        close(channel)
        probe.check()
    }

    /// An active channel, as a connected socket's.
    private static func connectedChannel() -> EmbeddedChannel? {
        let channel = EmbeddedChannel()
        guard let address = try? SocketAddress(ipAddress: "127.0.0.1", port: 80),
              (try? channel.connect(to: address).wait()) != nil else { return nil }
        return channel
    }

    /// Writes `bytes` as two reads, cut at `control × count / 255`, while the channel is open.
    private static func feed(_ bytes: Data, cutAt control: UInt8, to channel: EmbeddedChannel) {
        drainOutbound(channel)
        let cut = bytes.count * Int(control) / 255
        for part in [bytes.prefix(cut), bytes.dropFirst(cut)] where !part.isEmpty && channel.isActive {
            // An error the pipeline passes on to its end is thrown here; the exchange has it too.
            _ = try? channel.writeInbound(ByteBuffer(bytes: part))
            channel.embeddedEventLoop.run()
            drainOutbound(channel)
        }
    }

    /// The server closes: the client reads the end of the stream.
    private static func close(_ channel: EmbeddedChannel) {
        if channel.isActive { _ = try? channel.close().wait() }
        channel.embeddedEventLoop.run()
    }

    /// Drops what the client wrote (the request, HTTP/2's preface, settings and acknowledgements).
    private static func drainOutbound(_ channel: EmbeddedChannel) {
        while (try? channel.readOutbound(as: IOData.self)) != nil {}
    }
}
