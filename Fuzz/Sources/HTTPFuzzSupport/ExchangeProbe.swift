import Foundation
import NIOCore
import NIOHTTP1
@testable import WebImageHTTP
import WebImageSupport

/// One GET exchange of the client, as ``HTTPTransfer`` runs it (its ``HTTPExchange``, its
/// resolution of a failure into a typed error), sent on a carrier made by the production code,
/// with what the carrier reports recorded and checked: `returnToPool` once, then the completion
/// once; a failed exchange never leaves its carrier reusable; no event reports more than
/// ``HostileServer/maxBodySize`` bytes. A broken rule stops the fuzzer (`fatalError`): a finding.
final class ExchangeProbe: Sendable {
    private struct Record {
        var returnedToPool: [Bool] = []
        var result: Result<HTTPExchange.Outcome, any Error>?
        var completions = 0
    }

    let exchange: HTTPExchange
    private let record = Locked(Record())

    init(wantsPartialData: Bool) {
        let limit = HostileServer.maxBodySize
        exchange = HTTPExchange(url: HostileServer.url, maxBodySize: limit, wantsPartialData: wantsPartialData,
                                idleTimeout: .seconds(60), onCookies: nil) { event in
            switch event {
            case .progress(let received, _) where received > limit: fatalError("progress past maxBodySize: \(received)")
            case .partialData(let data) where data.count > limit: fatalError("partial data past maxBodySize: \(data.count)")
            default: break
            }
        }
    }

    /// The request `HTTPTransfer` would send for ``HostileServer/url``.
    static var head: HTTPRequestHead {
        HTTPRequestHead(version: .http1_1, method: .GET, uri: "/image", headers: ["Host": HTTPOrigin(HostileServer.url).hostHeader])
    }

    /// Sends the request on `carrier`; `released` runs when the carrier goes back to the pool.
    func send(on carrier: any HTTPExchangeCarrier, released: @escaping @Sendable (Bool) -> Void = { _ in }) {
        carrier.send(Self.head, body: nil, to: exchange, returnToPool: { [record] reusable in
            record.withLock { record in
                if record.completions > 0 { fatalError("returned to the pool after its completion") }
                record.returnedToPool.append(reusable)
            }
            released(reusable)
        }, completion: { [record] result in
            record.withLock { record in
                record.completions += 1
                record.result = result
            }
        })
    }

    /// Whether the carrier was given back to the pool as reusable.
    var returnedReusable: Bool { record.withLock { $0.returnedToPool == [true] } }

    /// Checks how the exchange ended, once the server has closed; returns what the load would
    /// report (the body's size, or the typed error).
    @discardableResult
    func check() -> Result<Int, HTTPLoadError> {
        let record = record.withLock { $0 }
        guard record.completions == 1, let result = record.result else {
            fatalError("the exchange completed \(record.completions) times (0: a load that hangs)")
        }
        guard record.returnedToPool.count == 1 else { fatalError("returned to the pool \(record.returnedToPool.count) times") }
        switch result {
        case .success(let outcome):
            guard case .body(let data, _) = outcome else { return .success(0) }
            if data.count > HostileServer.maxBodySize { fatalError("a body past maxBodySize: \(data.count)") }
            return .success(data.count)
        case .failure(let error):
            if record.returnedToPool == [true] { fatalError("a failed exchange left its connection reusable: \(error)") }
            do {
                _ = try exchange.resolve(failure: error, aborted: nil)
                return .success(0)
            } catch {
                // What HTTPTransfer hands its caller: every error, whatever its type, becomes an HTTPLoadError.
                return .failure(.fromLoading(error))
            }
        }
    }
}
