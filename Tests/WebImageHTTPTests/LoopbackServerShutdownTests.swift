#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Testing
import WebImageTestSupport

/// The loopback server shut down while clients are still connecting: the connections it accepts
/// then are never taken by its accept loop, and must be closed, not trap the test process (NIO
/// traps on an async channel dropped before its writer finished; this crashed CI's test run).
@Suite("Loopback server shut down while clients connect")
struct LoopbackServerShutdownTests {
    @Test(arguments: LoopbackProtocol.allCases) func connectionsArrivingDuringShutdownAreClosed(_ http: LoopbackProtocol) async throws {
        for _ in 0..<40 {
            var sockets: [Int32] = []
            defer { for socket in sockets { close(socket) } }
            try await withServer(http) { server in
                // Connected at the kernel; the server accepts them while it shuts down.
                for _ in 0..<16 { if let socket = connect(to: server.port) { sockets.append(socket) } }
            }
        }
    }

    /// A blocking TCP connect to 127.0.0.1:`port` (the kernel completes it from the listen backlog).
    private func connect(to port: Int) -> Int32? {
        #if canImport(Glibc)
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
        let socket = Darwin.socket(AF_INET, SOCK_STREAM, 0)
        #endif
        guard socket >= 0 else { return nil }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                #if canImport(Glibc)
                Glibc.connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                #else
                Darwin.connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                #endif
            }
        }
        guard connected == 0 else { close(socket); return nil }
        return socket
    }
}
