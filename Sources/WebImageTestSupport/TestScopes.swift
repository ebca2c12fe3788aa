#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Runs `body` with `resource`, then shuts it down: also when `body` throws, and then a failed
/// shutdown is ignored (the body's error is the one worth seeing). Runs in the caller's
/// isolation, so a main-actor test hands it a main-actor body.
public func withShutdown<Resource: Sendable, T: Sendable>(of resource: Resource, isolation: isolated (any Actor)? = #isolation,
                                      _ shutdown: (Resource) async throws -> Void,
                                      _ body: (Resource) async throws -> T) async throws -> T {
    let result: T
    do {
        result = try await body(resource)
    } catch {
        try? await shutdown(resource)
        throw error
    }
    try await shutdown(resource)
    return result
}

/// Runs `body` with a fresh loopback server (HTTPS with `tls`; HTTP/2 too with `http2`, see
/// ``LoopbackServer/start(tls:http2:maxConcurrentStreams:)``), shut down afterwards even on failure.
public func withServer<T: Sendable>(tls: LoopbackTLS? = nil, http2: Bool = false, isolation: isolated (any Actor)? = #isolation,
                          _ body: (LoopbackServer) async throws -> T) async throws -> T {
    try await withShutdown(of: try await LoopbackServer.start(tls: tls, http2: http2), { try await $0.shutdown() }, body)
}

/// Runs `body` with a listener that accepts TCP and never answers, shut down afterwards.
public func withSilentListener<T: Sendable>(isolation: isolated (any Actor)? = #isolation,
                                  _ body: (SilentListener) async throws -> T) async throws -> T {
    try await withShutdown(of: try await SilentListener.start(), { try await $0.shutdown() }, body)
}

/// `count` bytes of a recognisable pattern (different for each `seed`).
public func testBytes(_ count: Int, seed: UInt8 = 7) -> Data {
    Data((0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ Int(seed)) })
}
