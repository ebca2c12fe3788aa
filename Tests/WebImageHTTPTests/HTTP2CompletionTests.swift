import Foundation
import Testing
import WebImageHTTP
import WebImageSupport
import WebImageTestSupport

/// Every HTTP/2 load completes, once, however its connection starts or its stream ends. Many
/// fresh connections opened at once from tasks (not from the event loop) are what lost the
/// server's preface: the pool configured HTTP/2 in a loop task of its own, after the server's
/// SETTINGS had been read and dropped, so the connection failed at once with a protocol error,
/// and a cancelled load on such a connection never heard back (the timed suites hung).
@Suite("HTTP/2 completions", .timeLimit(.minutes(1)))
struct HTTP2CompletionTests {
    static let http2: [LoopbackProtocol] = [.h2, .h2c]

    @Test(arguments: http2)
    func freshConnectionsOpenedAtOnceAllLoad(_ http: LoopbackProtocol) async throws {
        try await WebImageTestSupport.withServer(http) { server in
            server.route("/a", .image(testBytes(2_000), contentType: "image/png"))
            let outcomes = await withTaskGroup(of: HTTPOutcome?.self) { group in
                for _ in 0..<24 {
                    group.addTask {
                        await finishing(within: .seconds(40)) {
                            (try? await withSession(.testing(idleTimeout: .seconds(30))) { session in
                                await session.load(HTTPLoadRequest(url: server.url("/a")))
                            })
                                ?? HTTPOutcome(error: .cancelled)
                        }
                    }
                }
                var outcomes: [HTTPOutcome?] = []
                for await outcome in group { outcomes.append(outcome) }
                return outcomes
            }
            #expect(outcomes.filter { $0 == nil }.count == 0, "loads that never completed")
            let failures = outcomes.compactMap { $0?.error }
            #expect(failures.isEmpty, "\(failures)")
            #expect(outcomes.allSatisfy { $0?.data?.count == 2_000 })
        }
    }

    @Test(arguments: http2)
    func cancellingLoadsOnFreshConnectionsCompletesEachOnce(_ http: LoopbackProtocol) async throws {
        try await WebImageTestSupport.withServer(http) { server in
            let gate = LoopbackGate()
            server.route("/held", LoopbackResponse(body: .bytes(testBytes(10_000)), gate: gate))
            let count = 12
            let results = await withTaskGroup(of: [Result<Void, HTTPLoadError>]?.self) { group in
                for _ in 0..<count {
                    group.addTask {
                        await finishing(within: .seconds(40)) {
                            (try? await withSession(.testing(idleTimeout: .seconds(30))) { session in
                                let completions = Locked<[Result<Void, HTTPLoadError>]>([])
                                let transfer = HTTPTransfer(HTTPLoadRequest(url: server.url("/held")), session: session) { _ in }
                                await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                                    transfer.start { result in
                                        completions.withLock { $0.append(result) }
                                        continuation.resume()
                                    }
                                    Task {
                                        // Cancelled once its request is out, or before, if its connection failed.
                                        await server.waitForRequests(count, path: "/held")
                                        transfer.cancel()
                                        transfer.cancel()
                                    }
                                }
                                return completions.withLock { $0 }
                            }) ?? []
                        }
                    }
                }
                var results: [[Result<Void, HTTPLoadError>]?] = []
                for await result in group { results.append(result) }
                return results
            }
            gate.open()
            #expect(results.filter { $0 == nil }.count == 0, "loads whose completion never came")
            for completions in results.compactMap({ $0 }) {
                #expect(completions.count == 1)
                guard case .failure(.cancelled)? = completions.first else {
                    Issue.record("expected one cancelled completion, got \(completions)")
                    continue
                }
            }
        }
    }
}
