#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import NIOCore
import NIOPosix
import WebImage

/// A TCP listener on 127.0.0.1 that accepts connections and never sends a byte: to a client it
/// is a host that completes the TCP handshake and then never answers (no TLS server hello, no
/// HTTP response), the way a black-holed or overloaded server behaves.
///
/// Counts accepted and closed connections, so a test can wait for the client to connect and then
/// for it to give up, without sleeping.
public final class SilentListener: Sendable {
    private struct Waiter {
        var condition: @Sendable (Counts) -> Bool
        var continuation: CheckedContinuation<Void, Never>
    }

    /// How many connections were accepted, and how many of those have closed since.
    public struct Counts: Sendable {
        public var accepted = 0
        public var closed = 0
    }

    private struct State {
        var counts = Counts()
        var waiters: [Int: Waiter] = [:]
        var nextWaiter = 0
        var children: [ObjectIdentifier: any Channel] = [:]
    }

    // The counters, the waiters and the accepted channels live behind this one lock.
    private let state = Locked(State())
    private let channel: any Channel

    /// The port it listens on (chosen by the system).
    public let port: Int

    /// Starts listening on 127.0.0.1 with a system-chosen port.
    public static func start() async throws -> SilentListener {
        let box = Locked<SilentListener?>(nil)
        let pending = Locked<[any Channel]>([])
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(ChannelOptions.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { child in
                if let listener = box.withLock({ $0 }) {
                    listener.accepted(child)
                } else {
                    pending.withLock { $0.append(child) }
                }
                return child.eventLoop.makeSucceededVoidFuture()
            }
            .bind(host: "127.0.0.1", port: 0).get()
        let listener = SilentListener(channel: channel)
        box.withLock { $0 = listener }
        for child in pending.withLock({ $0 }) { listener.accepted(child) }
        return listener
    }

    private init(channel: any Channel) {
        self.channel = channel
        port = channel.localAddress?.port ?? 0
    }

    /// `scheme://127.0.0.1:<port>/path`.
    public func url(_ path: String, scheme: String = "https") -> URL {
        // Built from a literal address and a port: always a URL; the fallback is unreachable.
        URL(string: "\(scheme)://127.0.0.1:\(port)\(path)") ?? URL(fileURLWithPath: "/")
    }

    /// What happened so far.
    public var counts: Counts { state.withLock { $0.counts } }

    /// Suspends until at least `count` connections were accepted.
    public func waitForAccepted(_ count: Int) async {
        await waitUntil { $0.accepted >= count }
    }

    /// Suspends until at least `count` accepted connections have closed (the client gave up).
    public func waitForClosed(_ count: Int) async {
        await waitUntil { $0.closed >= count }
    }

    /// Closes the listener and every accepted connection.
    public func shutdown() async throws {
        let children = state.withLock { Array($0.children.values) }
        for child in children { child.close(promise: nil) }
        try? await channel.close()
    }

    private func accepted(_ child: any Channel) {
        update { state in
            state.counts.accepted += 1
            state.children[ObjectIdentifier(child)] = child
        }
        child.closeFuture.whenComplete { [self] _ in
            update { state in
                state.counts.closed += 1
                state.children[ObjectIdentifier(child)] = nil
            }
        }
    }

    private func update(_ body: (inout State) -> Void) {
        let ready = state.withLock { state -> [Waiter] in
            body(&state)
            let counts = state.counts
            let ids = state.waiters.filter { $0.value.condition(counts) }.map(\.key)
            return ids.compactMap { state.waiters.removeValue(forKey: $0) }
        }
        for waiter in ready { waiter.continuation.resume() }
    }

    private func waitUntil(_ condition: @escaping @Sendable (Counts) -> Bool) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let passNow = state.withLock { state -> Bool in
                if condition(state.counts) { return true }
                state.nextWaiter += 1
                state.waiters[state.nextWaiter] = Waiter(condition: condition, continuation: continuation)
                return false
            }
            if passNow { continuation.resume() }
        }
    }
}
