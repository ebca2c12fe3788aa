#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import NIOHTTP1

/// One HTTP load from request to result: leases a connection, runs an exchange on it, follows
/// redirects, sends again when a kept-alive connection turns out dead, and reports once.
///
/// Driven by callbacks rather than a task: once a connection is leased, every step runs on its
/// event loop, so a download costs no thread hop between its request and its result, and the
/// next queued download starts on the same loop. (A task per download woke a pool thread for
/// every response; those wake-ups cost more CPU than parsing the responses.)
final class HTTPTransfer: Sendable {
    /// Told how the load ended, once. Success means the sink got the final event.
    typealias Completion = @Sendable (Result<Void, WebImageError>) -> Void

    private enum Step {
        case notStarted
        /// Waiting for a connection to `origin`: lease number `lease`, and the pool's waiter id
        /// once `lease` has returned it.
        case leasing(origin: HTTPOrigin, lease: Int, waiterID: Int?)
        /// A request is out on `connection`.
        case exchanging(HTTPConnection)
        /// The exchange has given its connection back: no longer ours to abort.
        case betweenHops
        case finished
    }

    private struct State {
        var step = Step.notStarted
        var cancelled = false
        var completion: Completion?
        var leases = 0
        var redirects = 0
        /// Every URL of the redirect chain; made at the first redirect (most loads have none).
        var visited: Set<String>?
    }

    private let request: ImageLoadRequest
    private let hooks: HTTPLoadHooks
    private let configuration: HTTPImageLoader.Configuration
    private let loaderDefaults: DefaultRequestHeaders
    private let pool: HTTPConnectionPool
    private let sink: @Sendable (ImageLoadEvent) throws -> Void
    private let origin: HTTPOrigin
    // Steps follow one another, but each runs on whatever thread reported the last one, and
    // `cancel` comes from anywhere: the lock orders them.
    private let state = Locked(State())

    /// A load of `request` that hands each event to `sink` (on the connection's event loop); an
    /// error thrown by `sink` ends the load with it. Nothing happens before ``start(_:)``.
    init(_ request: ImageLoadRequest, hooks: HTTPLoadHooks, configuration: HTTPImageLoader.Configuration,
         defaultHeaders: DefaultRequestHeaders, pool: HTTPConnectionPool,
         sink: @escaping @Sendable (ImageLoadEvent) throws -> Void) {
        self.request = request
        self.hooks = hooks
        self.configuration = configuration
        loaderDefaults = defaultHeaders
        self.pool = pool
        self.sink = sink
        origin = HTTPOrigin(request.url)
    }

    /// Starts the load; `completion` is called once, on whichever thread ends it.
    func start(_ completion: @escaping Completion) {
        let cancelled = state.withLock { state -> Bool in
            state.completion = completion
            return state.cancelled
        }
        if cancelled { finish(.failure(.cancelled)) } else { send(to: request.url, at: origin, attempt: 1) }
    }

    /// Ends the load with ``WebImageError/cancelled``: a waiting lease is withdrawn, a request on
    /// the wire is aborted with its connection. Safe from any thread, at any time, more than once.
    func cancel() {
        let withdraw = state.withLock { state -> (@Sendable () -> Void)? in
            guard !state.cancelled else { return nil }
            state.cancelled = true
            switch state.step {
            case .leasing(let origin, _, let waiterID?):
                return { [pool] in pool.cancelLease(waiterID, of: origin) }
            case .exchanging(let connection):
                return { connection.abort() }
            case .notStarted, .leasing, .betweenHops, .finished:
                // Each of these looks at `cancelled` before its next step.
                return nil
            }
        }
        withdraw?()
    }

    // MARK: Steps

    /// Sends the request for `url` (the original, or a redirect's target) on a connection to `hop`, its origin.
    private func send(to url: URL, at hop: HTTPOrigin, attempt: Int) {
        guard HTTPOrigin.isHTTP(scheme: hop.scheme), !hop.host.isEmpty, let target = url.requestTarget else {
            finish(.failure(.invalidURL(url.absoluteString)))
            return
        }
        var fields = headers(for: url, sameOrigin: hop == origin)
        fields.replaceOrAdd(name: "Host", value: hop.hostHeader)
        let head = HTTPRequestHead(version: .http1_1, method: .GET, uri: target, headers: fields)
        let exchange = HTTPExchange(url: url, maxBodySize: hooks.maxBodySize ?? configuration.maxBodySize,
                                    wantsPartialData: request.wantsPartialData,
                                    idleTimeout: request.timeout ?? configuration.idleTimeout,
                                    onCookies: hooks.didReceiveCookies, sink: sink)
        let lease = state.withLock { state -> Int? in
            guard !state.cancelled else { return nil }
            state.leases += 1
            state.step = .leasing(origin: hop, lease: state.leases, waiterID: nil)
            return state.leases
        }
        guard let lease else { return finish(.failure(.cancelled)) }
        let waiterID = pool.lease(hop) { [self] result in
            leased(result, head: head, exchange: exchange, url: url, hop: hop, attempt: attempt)
        }
        guard let waiterID else { return }
        // Recorded only if this lease is still waiting; a cancel that came in between withdraws it now.
        let withdrawNow = state.withLock { state -> Bool in
            guard case .leasing(_, lease, nil) = state.step else { return false }
            state.step = .leasing(origin: hop, lease: lease, waiterID: waiterID)
            return state.cancelled
        }
        if withdrawNow { pool.cancelLease(waiterID, of: hop) }
    }

    private func leased(_ result: Result<HTTPConnection, any Error>, head: HTTPRequestHead, exchange: HTTPExchange,
                        url: URL, hop: HTTPOrigin, attempt: Int) {
        let connection: HTTPConnection
        switch result {
        case .success(let leased): connection = leased
        case .failure(let error): return finish(.failure(.fromLoading(error)))
        }
        let proceed = state.withLock { state -> Bool in
            guard !state.cancelled else { return false }
            state.step = .exchanging(connection)
            return true
        }
        guard proceed else {
            pool.release(connection, reusable: true)
            return finish(.failure(.cancelled))
        }
        connection.send(head, to: exchange, returnToPool: { [self, pool] reusable in
            // Before the pool can lease it again: a cancel from now on must not abort it.
            state.withLock { $0.step = .betweenHops }
            pool.release(connection, reusable: reusable)
        }, completion: { [self] result in
            exchanged(result, exchange: exchange, url: url, hop: hop, attempt: attempt)
        })
    }

    private func exchanged(_ result: Result<HTTPExchange.Outcome, any Error>, exchange: HTTPExchange,
                           url: URL, hop: HTTPOrigin, attempt: Int) {
        let outcome: HTTPExchange.Outcome
        do {
            switch result {
            case .success(let ended):
                outcome = ended
            case .failure(let error):
                outcome = try exchange.resolve(failure: error, cancelled: state.withLock { $0.cancelled })
            }
        } catch is StaleConnectionError {
            // The server closed the kept-alive connection while it sat idle, before any response
            // byte: the request goes again (each try drops one dead connection, so this ends).
            guard attempt <= pool.maxConnectionsPerOrigin else {
                return finish(.failure(.connectionFailed("connection closed before a response")))
            }
            return send(to: url, at: hop, attempt: attempt + 1)
        } catch {
            return finish(.failure(.fromLoading(error)))
        }
        do {
            switch outcome {
            case .body(let data, let info):
                try sink(.completed(data, info))
                finish(.success(()))
            case .notModified(let info):
                try sink(.notModified(info))
                finish(.success(()))
            case .status(let status):
                finish(.failure(.httpStatus(status)))
            case .redirect(let location):
                let next = try redirectTarget(location, from: url)
                send(to: next, at: HTTPOrigin(next), attempt: 1)
            }
        } catch {
            finish(.failure(.fromLoading(error)))
        }
    }

    /// Where a redirect from `url` leads; throws past the limit or on a loop.
    private func redirectTarget(_ location: String, from url: URL) throws -> URL {
        guard let next = URL(string: location, relativeTo: url)?.absoluteURL else {
            throw WebImageError.invalidURL(location)
        }
        let limit = hooks.maxRedirects ?? configuration.maxRedirects
        try state.withLock { state in
            state.redirects += 1
            guard state.redirects <= limit else { throw WebImageError.tooManyRedirects }
            // A URL seen before in this chain is a loop: fail now rather than after the limit.
            if state.visited == nil { state.visited = [request.url.absoluteString] }
            guard state.visited?.insert(next.absoluteString).inserted == true else { throw WebImageError.tooManyRedirects }
        }
        return next
    }

    private func finish(_ result: Result<Void, WebImageError>) {
        let completion = state.withLock { state -> Completion? in
            if case .finished = state.step { return nil }
            state.step = .finished
            defer { state.completion = nil }
            return state.completion
        }
        completion?(result)
    }

    // MARK: Request

    private func headers(for url: URL, sameOrigin: Bool) -> HTTPHeaders {
        let defaults = hooks.defaultHeaders ?? loaderDefaults
        let extras = sameOrigin ? hooks.sameOriginHeaders(url) : [:]
        // Most requests add nothing to the defaults.
        if sameOrigin, extras.isEmpty, request.headers.isEmpty, request.validators == nil { return defaults.fields }
        var merged = defaults.byName
        for (name, value) in request.headers { merged[name.lowercased()] = (name, value) }
        if let validators = request.validators {
            if let etag = validators.etag { merged["if-none-match"] = ("If-None-Match", etag) }
            if let modified = validators.lastModified { merged["if-modified-since"] = ("If-Modified-Since", modified) }
        }
        if sameOrigin {
            for (name, value) in extras { merged[name.lowercased()] = (name, value) }
        } else {
            // Credentials and cookies belong to the origin the caller asked for, never to a redirect target.
            for name in ["authorization", "cookie", "proxy-authorization"] { merged[name] = nil }
        }
        return DefaultRequestHeaders.ordered(merged)
    }
}
