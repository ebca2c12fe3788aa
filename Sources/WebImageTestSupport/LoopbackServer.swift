#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import WebImage
import Synchronization

/// A real HTTP/1.1 server on 127.0.0.1 (SwiftNIO) for tests and demos, with injectable faults.
///
/// Start one per test with ``start()``, register routes with ``route(_:_:)`` (each a
/// ``LoopbackResponse``: status, body, and a fault such as a delay, a slow drip, a reset, a
/// truncated body, a redirect, a gate), point the client at ``url(_:)``, read the log
/// (``requests``, ``requestCount(for:)``) and call ``shutdown()`` at the end. Unknown paths get 404.
/// Delays and drips are event-loop scheduled tasks, never thread sleeps.
public final class LoopbackServer: Sendable {
    private typealias Connection = NIOAsyncChannel<HTTPServerRequestPart, HTTPServerResponsePart>

    private struct Waiter {
        var condition: @Sendable (State) -> Bool
        var continuation: CheckedContinuation<Void, Never>
    }

    struct State: Sendable {
        var routes: [String: LoopbackResponse] = [:]
        /// Responses a path answers in turn before its route (see ``route(_:sequence:)``).
        var sequences: [String: [LoopbackResponse]] = [:]
        var log: [LoopbackRequest] = []
        var countsByPath: [String: Int] = [:]
        var abortedByPath: [String: Int] = [:]
        var completedByPath: [String: Int] = [:]
        var nextConnection = 0
        var connections: [Int: (channel: any Channel, task: Task<Void, Never>?)] = [:]
        var openConnections = 0
        var isShutDown = false
    }

    // Routes, the log, the counters, open connections and waiters all live behind this one lock.
    private let state = Locked(State())
    private let waiters = Locked([Int: Waiter]())
    private let waiterIDs = Atomic<Int>(0)
    private let serverChannel: NIOAsyncChannel<Connection, Never>
    private let acceptTask: Locked<Task<Void, Never>?> = Locked(nil)

    /// The port the server listens on (chosen by the system).
    public let port: Int
    /// `http://127.0.0.1:<port>` (`https` when the server speaks TLS).
    public var baseURL: URL { url("") }

    /// Whether the server speaks HTTPS.
    public let isTLS: Bool

    /// Starts a server on 127.0.0.1 with a system-chosen port; with `tls`, it speaks HTTPS.
    public static func start(tls: LoopbackTLS? = nil) async throws -> LoopbackServer {
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(ChannelOptions.backlog, value: 256)
            .serverChannelOption(ChannelOptions.socketOption(.so_reuseaddr), value: 1)
            .bind(host: "127.0.0.1", port: 0) { channel in
                channel.eventLoop.makeCompletedFuture {
                    if let tls {
                        try channel.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: tls.context))
                    }
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline()
                    return try Connection(wrappingChannelSynchronously: channel)
                }
            }
        let server = LoopbackServer(channel: channel, isTLS: tls != nil)
        server.startAccepting()
        return server
    }

    private init(channel: NIOAsyncChannel<Connection, Never>, isTLS: Bool) {
        self.serverChannel = channel
        self.port = channel.channel.localAddress?.port ?? 0
        self.isTLS = isTLS
    }

    /// The URL of `path` on this server (`path` starts with "/" and may end with "?query").
    public func url(_ path: String) -> URL {
        var components = URLComponents()
        components.scheme = isTLS ? "https" : "http"
        components.host = "127.0.0.1"
        components.port = port
        let parts = path.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
        components.path = parts.first.map(String.init) ?? ""
        if parts.count > 1 { components.query = String(parts[1]) }
        // Components built from a valid host and port always form a URL; the fallback is unreachable.
        return components.url ?? URL(fileURLWithPath: "/")
    }

    /// Registers (or replaces) the response for `path` (matched without the query).
    public func route(_ path: String, _ response: LoopbackResponse) {
        state.withLock { $0.routes[path] = response }
    }

    /// Registers responses that `path` answers in turn, one per request; the last one keeps
    /// answering after the others were used (a 503, then the image).
    public func route(_ path: String, sequence: [LoopbackResponse]) {
        guard let last = sequence.last else { return }
        state.withLock { state in
            state.routes[path] = last
            state.sequences[path] = Array(sequence.dropLast())
        }
    }

    /// Every request received so far, in arrival order.
    public var requests: [LoopbackRequest] { state.withLock { $0.log } }

    /// How many requests arrived for `path`.
    public func requestCount(for path: String) -> Int { state.withLock { $0.countsByPath[path, default: 0] } }

    /// How many requests arrived in all.
    public var totalRequestCount: Int { state.withLock { $0.log.count } }

    /// How many responses for `path` ended because the client closed the connection first.
    public func abortedCount(for path: String) -> Int { state.withLock { $0.abortedByPath[path, default: 0] } }

    /// How many responses for `path` were sent completely.
    public func completedCount(for path: String) -> Int { state.withLock { $0.completedByPath[path, default: 0] } }

    /// How many client connections are open now.
    public var openConnectionCount: Int { state.withLock { $0.openConnections } }

    /// Suspends until exactly `count` client connections are open.
    public func waitForOpenConnections(_ count: Int) async {
        await waitUntil { $0.openConnections == count }
    }

    /// Suspends until at least `count` requests in all have arrived.
    public func waitForRequests(_ count: Int) async {
        await waitUntil { $0.log.count >= count }
    }

    /// Suspends until at least `count` requests for `path` have arrived.
    public func waitForRequests(_ count: Int, path: String) async {
        await waitUntil { $0.countsByPath[path, default: 0] >= count }
    }

    /// Suspends until at least `count` responses for `path` were cut off by the client leaving.
    public func waitForAborted(_ count: Int, path: String) async {
        await waitUntil { $0.abortedByPath[path, default: 0] >= count }
    }

    private func waitUntil(_ condition: @escaping @Sendable (State) -> Bool) async {
        let id = waiterIDs.add(1, ordering: .relaxed).newValue
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            // Register first, then check, so a change between the two is never missed.
            waiters.withLock { $0[id] = Waiter(condition: condition, continuation: continuation) }
            let snapshot = state.withLock { $0 }
            if condition(snapshot) || snapshot.isShutDown {
                waiters.withLock { $0.removeValue(forKey: id) }?.continuation.resume()
            }
        }
    }

    private func mutate(_ body: (inout State) -> Void) {
        let snapshot = state.withLock { state -> State in
            body(&state)
            return state
        }
        let ready = waiters.withLock { waiters -> [Waiter] in
            let ids = waiters.filter { $0.value.condition(snapshot) || snapshot.isShutDown }.map(\.key)
            return ids.compactMap { waiters.removeValue(forKey: $0) }
        }
        for waiter in ready { waiter.continuation.resume() }
    }

    /// Stops accepting, cuts every open connection, releases held responses and waiters.
    public func shutdown() async throws {
        let connections = state.withLock { state -> [(channel: any Channel, task: Task<Void, Never>?)] in
            state.isShutDown = true
            return Array(state.connections.values)
        }
        mutate { _ in }
        for connection in connections {
            connection.task?.cancel()
            connection.channel.close(promise: nil)
        }
        try? await serverChannel.channel.close()
        await acceptTask.withLock { $0 }?.value
        for connection in connections { await connection.task?.value }
    }

    private func startAccepting() {
        let task = Task<Void, Never> { [serverChannel] in
            _ = try? await serverChannel.executeThenClose { inbound in
                for try await connection in inbound {
                    self.accept(connection)
                }
            }
        }
        acceptTask.withLock { $0 = task }
    }

    private func accept(_ connection: Connection) {
        let channel = connection.channel
        var id = 0
        var shutDown = false
        mutate { state in
            id = state.nextConnection
            state.nextConnection += 1
            state.openConnections += 1
            shutDown = state.isShutDown
            state.connections[id] = (channel, nil)
        }
        if shutDown {
            channel.close(promise: nil)
            return
        }
        let task = Task { await self.serve(connection, id: id) }
        state.withLock { $0.connections[id]?.task = task }
        channel.closeFuture.whenComplete { _ in
            // The client went away (or we closed): wake a response parked at a gate.
            task.cancel()
        }
    }

    private func serve(_ connection: Connection, id: Int) async {
        let channel = connection.channel
        try? await connection.executeThenClose { inbound, outbound in
            var head: HTTPRequestHead?
            var served = 0
            for try await part in inbound {
                switch part {
                case .head(let requestHead):
                    head = requestHead
                case .body:
                    break
                case .end:
                    guard let requestHead = head else { continue }
                    let keepGoing = try await respond(to: requestHead, connection: id, reused: served > 0,
                                                      channel: channel, outbound: outbound)
                    served += 1
                    if !keepGoing { return }
                }
            }
        }
        mutate { state in
            state.openConnections -= 1
            state.connections[id] = nil
        }
    }

    /// Answers one request (`reused`: the connection served one before); returns whether the
    /// connection can serve another.
    private func respond(to head: HTTPRequestHead, connection: Int, reused: Bool, channel: any Channel,
                         outbound: NIOAsyncChannelOutboundWriter<HTTPServerResponsePart>) async throws -> Bool {
        let path = String(head.uri.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first ?? "")
        var headers: [String: String] = [:]
        for (name, value) in head.headers {
            let key = name.lowercased()
            headers[key] = headers[key].map { "\($0), \(value)" } ?? value
        }
        var route: LoopbackResponse?
        mutate { state in
            state.log.append(LoopbackRequest(order: state.log.count, method: "\(head.method)", path: path,
                                             uri: head.uri, headers: headers, connection: connection))
            state.countsByPath[path, default: 0] += 1
            if let next = state.sequences[path]?.first {
                state.sequences[path]?.removeFirst()
                route = next
            } else {
                route = state.routes[path]
            }
        }
        var response = route ?? .status(404)
        if reused && response.dropsReusedConnection {
            try await channel.close()
            return false
        }
        var finished = false
        defer {
            let done = finished
            mutate { state in
                if done { state.completedByPath[path, default: 0] += 1 } else { state.abortedByPath[path, default: 0] += 1 }
            }
        }

        if let delay = response.delayBeforeHead { try await pause(delay, on: channel) }
        if let gate = response.gate, case .beforeHead = response.gatePoint {
            await gate.wait()
            try Task.checkCancellation()
        }

        var notModified = false
        if let etag = response.etag, let sent = headers["if-none-match"], sent == etag { notModified = true }
        if let modified = response.lastModified, let sent = headers["if-modified-since"], sent == modified { notModified = true }
        if notModified { response.status = 304; response.body = .bytes(Data()) }

        // A range request for the rest of the body, honoured when the validator still matches.
        var rangeStart: Int?
        if response.acceptsRanges, !notModified, response.status == 200, let range = headers["range"],
           range.hasPrefix("bytes="), range.hasSuffix("-"), let start = Int(range.dropFirst(6).dropLast()),
           start >= 0, start < response.body.count {
            let ifRange = headers["if-range"]
            if ifRange == nil || ifRange == response.etag || ifRange == response.lastModified { rangeStart = start }
        }

        var responseHeaders = HTTPHeaders()
        for (name, value) in response.headers { responseHeaders.add(name: name, value: value) }
        if response.acceptsRanges { responseHeaders.replaceOrAdd(name: "Accept-Ranges", value: "bytes") }
        if let etag = response.etag { responseHeaders.replaceOrAdd(name: "ETag", value: etag) }
        if let modified = response.lastModified { responseHeaders.replaceOrAdd(name: "Last-Modified", value: modified) }
        let bodyCount = response.body.count
        if notModified {
            // 304 carries no body and no length.
        } else if let rangeStart {
            responseHeaders.replaceOrAdd(name: "Content-Range", value: "bytes \(rangeStart)-\(bodyCount - 1)/\(bodyCount)")
            responseHeaders.replaceOrAdd(name: "Content-Length", value: String(bodyCount - rangeStart))
        } else if let announced = response.announcedLength {
            responseHeaders.replaceOrAdd(name: "Content-Length", value: String(announced))
        } else if response.sendsContentLength {
            responseHeaders.replaceOrAdd(name: "Content-Length", value: String(bodyCount))
        } else {
            responseHeaders.replaceOrAdd(name: "Transfer-Encoding", value: "chunked")
        }
        let isHead = head.method == .HEAD
        for interim in response.interimStatuses {
            try await outbound.write(.head(HTTPResponseHead(version: .http1_1, status: .init(statusCode: interim))))
        }
        try await outbound.write(.head(HTTPResponseHead(version: .http1_1, status: .init(statusCode: rangeStart == nil ? response.status : 206),
                                                         headers: responseHeaders)))

        if !isHead && !notModified {
            var sent = rangeStart ?? 0
            let chunkSize = max(1, response.drip?.chunkSize ?? 64 * 1024)
            var gatePending: Int? = nil
            if let _ = response.gate, case .afterBodyBytes(let n) = response.gatePoint { gatePending = n }
            while sent < bodyCount {
                var limit = min(bodyCount, sent + chunkSize)
                if let reset = response.resetAfterBytes { limit = min(limit, reset) }
                if let gateAt = gatePending { limit = min(limit, max(gateAt, sent)) }
                if limit > sent {
                    try await outbound.write(.body(.byteBuffer(bytes(of: response.body, in: sent..<limit, allocator: channel.allocator))))
                    sent = limit
                }
                if let reset = response.resetAfterBytes, sent >= reset {
                    try await resetConnection(channel)
                    return false
                }
                if let gateAt = gatePending, sent >= gateAt, let gate = response.gate {
                    gatePending = nil
                    await gate.wait()
                    try Task.checkCancellation()
                }
                if let drip = response.drip, sent < bodyCount { try await pause(drip.interval, on: channel) }
            }
            if let reset = response.resetAfterBytes, sent >= reset {
                try await resetConnection(channel)
                return false
            }
            if let announced = response.announcedLength, announced > sent {
                // A clean close (FIN) before the announced length: a truncated body.
                try await channel.close()
                return false
            }
        }
        try await outbound.write(.end(nil))
        finished = true
        return true
    }

    private func bytes(of body: LoopbackResponse.Body, in range: Range<Int>, allocator: ByteBufferAllocator) -> ByteBuffer {
        switch body {
        case .bytes(let data):
            return allocator.buffer(bytes: data[data.startIndex + range.lowerBound ..< data.startIndex + range.upperBound])
        case .generated:
            var buffer = allocator.buffer(capacity: range.count)
            buffer.writeRepeatingByte(0xA5, count: range.count)
            return buffer
        }
    }

    private func pause(_ duration: Duration, on channel: any Channel) async throws {
        let nanos = duration.components.seconds * 1_000_000_000 + duration.components.attoseconds / 1_000_000_000
        let scheduled = channel.eventLoop.scheduleTask(in: .nanoseconds(nanos)) {}
        // Cancelling the scheduled task lets shutdown and client disconnects end a long delay at once.
        try await withTaskCancellationHandler {
            try await scheduled.futureResult.get()
        } onCancel: {
            scheduled.cancel()
        }
        try Task.checkCancellation()
    }

    private func resetConnection(_ channel: any Channel) async throws {
        if let provider = channel as? any SocketOptionProvider {
            try? await provider.setSoLinger(linger(l_onoff: 1, l_linger: 0)).get()
        }
        try? await channel.close()
    }
}
