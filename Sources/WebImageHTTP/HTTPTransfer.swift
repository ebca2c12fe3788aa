#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import NIOCore
import NIOHTTP1
import NIOPosix
import WebImageSupport

/// One HTTP load from request to result: leases a connection, runs an exchange on it, follows
/// redirects, sends again when a kept-alive connection turns out dead, and reports once.
///
/// Three clocks bound it: opening a connection (TCP and TLS) may take the connect timeout or the
/// idle timeout, whichever is shorter; an exchange fails after the idle timeout without a byte;
/// the whole load, redirects included, fails after the resource timeout however the bytes trickle.
///
/// Driven by callbacks rather than a task: once a connection is leased, every step runs on its
/// event loop, so a download costs no thread hop between its request and its result, and the
/// next queued download starts on the same loop. (A task per download woke a pool thread for
/// every response; those wake-ups cost more CPU than parsing the responses.)
package final class HTTPTransfer: Sendable {
    /// Told how the load ended, once. Success means the sink got the final event.
    package typealias Completion = @Sendable (Result<Void, HTTPLoadError>) -> Void

    private enum Step {
        case notStarted
        /// Waiting for a connection to `origin`: lease number `lease`, and the pool's waiter id
        /// once `lease` has returned it.
        case leasing(origin: HTTPOrigin, lease: Int, waiterID: Int?)
        /// A request is out on `carrier` (a connection, or an HTTP/2 stream).
        case exchanging(any HTTPExchangeCarrier)
        /// The exchange has given its connection back: no longer ours to abort.
        case betweenHops
        /// Waiting to send the load again after a transient failure (the timer, once scheduled).
        case waitingToRetry(Scheduled<Void>?)
        case finished
    }

    /// The timeouts of this load, checked and converted once.
    private struct Limits {
        var idle: TimeAmount
        var connect: TimeAmount
        var resource: TimeAmount
    }

    private struct State {
        var step = Step.notStarted
        /// Why the load was ended from outside (cancelled, or past its resource timeout); each
        /// step looks at it before the next.
        var aborted: HTTPLoadError?
        /// The resource timeout's timer, while the load runs.
        var deadline: Scheduled<Void>?
        var completion: Completion?
        var leases = 0
        var redirects = 0
        var retries = 0
        /// When the load started: a retry must not wait past its resource timeout.
        var startedAt = NIODeadline.now()
        /// Partial data went to the sink: a retry may only resume the body, never restart it.
        var deliveredPartialData = false
        /// Every URL of the redirect chain; made at the first redirect (most loads have none).
        var visited: Set<String>?
    }

    private let request: HTTPLoadRequest
    private let hooks: HTTPLoadHooks
    /// The load's settings: the hooks' when they carry some, else the session's.
    private let configuration: HTTPClientSettings
    private let loaderDefaults: DefaultRequestHeaders
    private let pool: HTTPConnectionPool
    private let sink: @Sendable (HTTPLoadEvent) throws -> Void
    private let origin: HTTPOrigin
    private let limits: Result<Limits, HTTPLoadError>
    // Steps follow one another, but each runs on whatever thread reported the last one, and
    // `cancel` comes from anywhere: the lock orders them.
    private let state = Locked(State())

    /// A load of `request` over `session`'s connections that hands each event to `sink` as it
    /// happens, on the connection's event loop; an error thrown by `sink` ends the load with
    /// ``HTTPLoadError/consumer(_:)``. `hooks` carry a caller's settings and per-hop headers (a
    /// downloader's); without them the session's apply. Nothing happens before ``start(_:)``.
    package init(_ request: HTTPLoadRequest, hooks: HTTPLoadHooks = HTTPLoadHooks(), session: HTTPSession,
                 sink: @escaping @Sendable (HTTPLoadEvent) throws -> Void) {
        self.request = request
        self.hooks = hooks
        let configuration = hooks.settings ?? session.configuration
        self.configuration = configuration
        let defaultHeaders = hooks.defaultHeaders ?? session.defaultHeaders
        loaderDefaults = defaultHeaders
        pool = session.pool
        // What the sink throws passes through the stack untouched, told apart from transport errors.
        self.sink = { event in
            do { try sink(event) } catch let error as HTTPLoadError { throw error } catch { throw HTTPLoadError.consumer(error) }
        }
        origin = HTTPOrigin(request.url)
        limits = Result { () throws(HTTPLoadError) -> Limits in
            let idle = try RequestValidation.timeAmount(request.timeout ?? configuration.idleTimeout, "the timeout")
            let resource = try RequestValidation.timeAmount(
                request.resourceTimeout ?? configuration.resourceTimeout, "the resource timeout")
            // A load that says "fail after 2 s of silence" means it for the handshake too.
            let connect = min(idle, try RequestValidation.timeAmount(configuration.connectTimeout, "the connect timeout"))
            try RequestValidation.validate(request.headers)
            if let problem = defaultHeaders.problem { throw .invalidRequest(problem) }
            return Limits(idle: idle, connect: connect, resource: resource)
        }
    }

    /// Starts the load; `completion` is called once, on whichever thread ends it.
    package func start(_ completion: @escaping Completion) {
        let limits: Limits
        switch self.limits {
        case .success(let checked): limits = checked
        case .failure(let error):
            state.withLock { $0.completion = completion }
            return finish(.failure(error))
        }
        // On the loop this starts from (a download started as the previous one ended, usually that
        // connection's loop) setting and cancelling the timer wakes no other thread.
        let loop = MultiThreadedEventLoopGroup.currentEventLoop ?? pool.group.next()
        let deadline = loop.scheduleTask(in: limits.resource) { [self] in abort(with: .timedOut) }
        let aborted = state.withLock { state -> HTTPLoadError? in
            state.completion = completion
            state.deadline = deadline
            state.startedAt = .now()
            return state.aborted
        }
        if let aborted { finish(.failure(aborted)) } else { send(to: request.url, at: origin, attempt: 1, limits: limits) }
    }

    /// Ends the load with ``HTTPLoadError/cancelled``: a waiting or connecting lease is withdrawn
    /// (closing what it opened), a request on the wire is aborted with its connection. Safe from
    /// any thread, at any time, more than once.
    package func cancel() {
        abort(with: .cancelled)
    }

    /// Ends the load with `error`, whatever step it is at.
    private func abort(with error: HTTPLoadError) {
        let withdraw = state.withLock { state -> (@Sendable () -> Void)? in
            guard state.aborted == nil else { return nil }
            if case .finished = state.step { return nil }
            state.aborted = error
            switch state.step {
            case .leasing(_, _, let leaseID?):
                return { [pool] in pool.cancelLease(leaseID) }
            case .exchanging(let connection):
                return { connection.abort() }
            case .waitingToRetry(let timer):
                // Nothing is under way: the load ends now (a timer not yet recorded sees `aborted`).
                return { [self] in
                    timer?.cancel()
                    finish(.failure(error))
                }
            case .notStarted, .leasing, .betweenHops, .finished:
                // Each of these looks at `aborted` before its next step.
                return nil
            }
        }
        withdraw?()
    }

    // MARK: Steps

    /// Sends the request for `url` (the original, or a redirect's target) on a connection to `hop`, its origin.
    private func send(to url: URL, at hop: HTTPOrigin, attempt: Int, limits: Limits, resume: HTTPExchange.Resume? = nil) {
        guard HTTPOrigin.isHTTP(scheme: hop.scheme), !hop.host.isEmpty, let target = url.requestTarget else {
            finish(.failure(.invalidURL(url.absoluteString)))
            return
        }
        var fields: HTTPHeaders
        do {
            fields = try headers(for: url, sameOrigin: hop == origin)
        } catch {
            return finish(.failure(error))
        }
        fields.replaceOrAdd(name: "Host", value: hop.hostHeader)
        if let resume {
            // The rest of the body, if it is still the same representation (else the server says so with a 200).
            fields.replaceOrAdd(name: "Range", value: "bytes=\(resume.data.count)-")
            fields.replaceOrAdd(name: "If-Range", value: resume.validator)
        }
        // The pool keys connections by proxy too; a plain-http request through one names the whole URL.
        var route = hop
        var uri = target
        do {
            route.proxy = try configuration.proxy.proxy(for: hop)
        } catch {
            return finish(.failure(error))
        }
        if let proxy = route.proxy, hop.scheme == "http" {
            uri = "http://" + hop.hostHeader + target
            if let authorization = proxy.authorization { fields.replaceOrAdd(name: "Proxy-Authorization", value: authorization) }
        }
        let body = request.body.map { ByteBuffer(bytes: $0) }
        if let body { fields.replaceOrAdd(name: "Content-Length", value: String(body.readableBytes)) }
        let head = HTTPRequestHead(version: .http1_1, method: HTTPMethod(rawValue: request.method.rawValue), uri: uri, headers: fields)
        let exchange = HTTPExchange(url: url, maxBodySize: configuration.maxBodySize,
                                    wantsPartialData: request.wantsPartialData, idleTimeout: limits.idle,
                                    onCookies: hooks.didReceiveCookies, sink: sink, resume: resume,
                                    acceptsEmptyBody: request.method != .get)
        let lease = state.withLock { state -> Result<Int, HTTPLoadError> in
            if let aborted = state.aborted { return .failure(aborted) }
            state.leases += 1
            state.step = .leasing(origin: route, lease: state.leases, waiterID: nil)
            return .success(state.leases)
        }
        guard case .success(let lease) = lease else {
            if case .failure(let aborted) = lease { finish(.failure(aborted)) }
            return
        }
        let leaseID = pool.lease(route, connectTimeout: limits.connect, priority: request.priority.rawValue) { [self] result in
            leased(result, head: head, body: body, exchange: exchange, url: url, hop: hop, attempt: attempt, limits: limits)
        }
        guard let leaseID else { return }
        // Recorded only if this lease is still pending; an abort that came in between withdraws it now.
        let withdrawNow = state.withLock { state -> Bool in
            guard case .leasing(_, lease, nil) = state.step else { return false }
            state.step = .leasing(origin: route, lease: lease, waiterID: leaseID)
            return state.aborted != nil
        }
        if withdrawNow { pool.cancelLease(leaseID) }
    }

    private func leased(_ result: Result<any HTTPExchangeCarrier, any Error>, head: HTTPRequestHead, body: ByteBuffer?, exchange: HTTPExchange,
                        url: URL, hop: HTTPOrigin, attempt: Int, limits: Limits) {
        let connection: any HTTPExchangeCarrier
        switch result {
        case .success(let leased): connection = leased
        case .failure(let error):
            // A withdrawn lease reports `cancelled`: the load ends with why it was withdrawn.
            if let aborted = state.withLock({ $0.aborted }) { return finish(.failure(aborted)) }
            return retryOrFinish(.fromLoading(error), exchange: exchange, url: url, hop: hop, limits: limits)
        }
        let aborted = state.withLock { state -> HTTPLoadError? in
            if let aborted = state.aborted { return aborted }
            state.step = .exchanging(connection)
            return nil
        }
        if let aborted {
            pool.release(connection, reusable: true)
            return finish(.failure(aborted))
        }
        connection.send(head, body: body, to: exchange, returnToPool: { [self, pool] reusable in
            // Before the pool can lease it again: a cancel from now on must not abort it.
            state.withLock { $0.step = .betweenHops }
            pool.release(connection, reusable: reusable)
        }, completion: { [self] result in
            exchanged(result, exchange: exchange, url: url, hop: hop, attempt: attempt, limits: limits)
        })
    }

    private func exchanged(_ result: Result<HTTPExchange.Outcome, any Error>, exchange: HTTPExchange,
                           url: URL, hop: HTTPOrigin, attempt: Int, limits: Limits) {
        let outcome: HTTPExchange.Outcome
        do {
            switch result {
            case .success(let ended):
                outcome = ended
            case .failure(let error):
                outcome = try exchange.resolve(failure: error, aborted: state.withLock { $0.aborted })
            }
        } catch is StaleConnectionError {
            // The server closed the kept-alive connection while it sat idle, before any response
            // byte: the request goes again (each try drops one dead connection, so this ends).
            guard attempt <= pool.maxConnectionsPerOrigin else {
                return finish(.failure(.connectionFailed("connection closed before a response")))
            }
            return send(to: url, at: hop, attempt: attempt + 1, limits: limits)
        } catch {
            return retryOrFinish(.fromLoading(error), exchange: exchange, url: url, hop: hop, limits: limits)
        }
        do {
            switch outcome {
            case .body(let data, let info):
                try sink(.completed(data, info))
                finish(.success(()))
            case .notModified(let info):
                try sink(.notModified(info))
                finish(.success(()))
            case .status(407) where hop.scheme == "http":
                // A forwarding proxy answers for the server; no origin server sends 407.
                let proxy = try? configuration.proxy.proxy(for: hop)
                finish(.failure(proxy.map { .proxyAuthenticationRequired($0.displayName) } ?? .httpStatus(407)))
            case .status(let status):
                retryOrFinish(.httpStatus(status), exchange: exchange, url: url, hop: hop, limits: limits)
            case .redirect where request.method != .get:
                // A write is sent where it was addressed, never replayed elsewhere.
                finish(.failure(.rejected("a \(request.method.rawValue) is not redirected")))
            case .redirect(let location):
                let next = try redirectTarget(location, from: url)
                send(to: next, at: HTTPOrigin(next), attempt: 1, limits: limits)
            }
        } catch {
            finish(.failure(.fromLoading(error)))
        }
    }

    /// Sends the hop to `url` again after a wait when `error` is transient and the retry policy
    /// allows another try; else ends the load with `error`. A body partly handed to the sink
    /// as partial data is only ever resumed (a range request), never restarted.
    private func retryOrFinish(_ error: HTTPLoadError, exchange: HTTPExchange, url: URL, hop: HTTPOrigin, limits: Limits) {
        guard let policy = configuration.retryPolicy, HTTPRetryPolicy.retries(error) else { return finish(.failure(error)) }
        let leftover = exchange.leftover()
        let retryAfter = leftover.retryAfter.flatMap { HTTPRetryPolicy.retryAfter($0) }
        let retry = state.withLock { state -> (number: Int, startedAt: NIODeadline)? in
            state.deliveredPartialData = state.deliveredPartialData || leftover.deliveredPartialData
            guard state.aborted == nil, state.retries < policy.maxRetries,
                  !state.deliveredPartialData || leftover.resume != nil else { return nil }
            state.retries += 1
            state.step = .waitingToRetry(nil)
            return (state.retries, state.startedAt)
        }
        guard let retry else { return finish(.failure(error)) }
        let wait = TimeAmount.milliseconds(Int64(HTTPRetryPolicy.seconds(policy.delay(beforeRetry: retry.number, retryAfter: retryAfter)) * 1000))
        // A wait that outlasts the resource timeout would only delay the failure.
        guard NIODeadline.now() + wait < retry.startedAt + limits.resource else { return finish(.failure(error)) }
        let loop = MultiThreadedEventLoopGroup.currentEventLoop ?? pool.group.next()
        let timer = loop.scheduleTask(in: wait) { [self] in
            let go = state.withLock { state -> Bool in
                guard case .waitingToRetry = state.step, state.aborted == nil else { return false }
                state.step = .betweenHops
                return true
            }
            if go { send(to: url, at: hop, attempt: 1, limits: limits, resume: leftover.resume) }
        }
        let abortedMeanwhile = state.withLock { state -> Bool in
            guard case .waitingToRetry(nil) = state.step else { return false }
            state.step = .waitingToRetry(timer)
            return state.aborted != nil
        }
        if abortedMeanwhile {
            timer.cancel()
            if let aborted = state.withLock({ $0.aborted }) { finish(.failure(aborted)) }
        }
    }

    /// Where a redirect from `url` leads; throws past the limit, on a loop, on a downgrade from
    /// https to http (unless allowed) and when the redirect policy refuses the target.
    private func redirectTarget(_ location: String, from url: URL) throws -> URL {
        guard let next = URL(string: location, relativeTo: url)?.absoluteURL else {
            throw HTTPLoadError.invalidURL(location)
        }
        if url.scheme?.lowercased() == "https", next.scheme?.lowercased() == "http",
           !configuration.allowsInsecureRedirects {
            throw HTTPLoadError.insecureRedirect(next.absoluteString)
        }
        if let policy = configuration.redirectPolicy, !policy(url, next) {
            throw HTTPLoadError.rejected("redirect to \(next.absoluteString) refused by the redirect policy")
        }
        let limit = configuration.maxRedirects
        try state.withLock { state in
            state.redirects += 1
            guard state.redirects <= limit else { throw HTTPLoadError.tooManyRedirects }
            // A URL seen before in this chain is a loop: fail now rather than after the limit.
            if state.visited == nil { state.visited = [request.url.absoluteString] }
            guard state.visited?.insert(next.absoluteString).inserted == true else { throw HTTPLoadError.tooManyRedirects }
        }
        return next
    }

    private func finish(_ result: Result<Void, HTTPLoadError>) {
        let (completion, deadline) = state.withLock { state -> (Completion?, Scheduled<Void>?) in
            if case .finished = state.step { return (nil, nil) }
            state.step = .finished
            defer {
                state.completion = nil
                state.deadline = nil
            }
            return (state.completion, state.deadline)
        }
        deadline?.cancel()
        completion?(result)
    }

    // MARK: Request

    /// The header fields of a hop to `url`. A hop to another origin than the one the caller
    /// asked for sends the defaults only: the caller's headers (API keys, conditional headers,
    /// credentials, cookies) were meant for that origin.
    private func headers(for url: URL, sameOrigin: Bool) throws(HTTPLoadError) -> HTTPHeaders {
        let defaults = loaderDefaults
        guard sameOrigin else { return defaults.fields }
        let extras = hooks.sameOriginHeaders(url)
        // Most requests add nothing to the defaults.
        if extras.isEmpty, request.headers.isEmpty, request.validators == nil { return defaults.fields }
        // Cookies come from responses: checked like the caller's headers (which `init` checked).
        try RequestValidation.validate(extras)
        var merged = defaults.byName
        for (name, value) in request.headers { merged[name.lowercased()] = (name, value) }
        if let validators = request.validators {
            if let etag = validators.etag { merged["if-none-match"] = ("If-None-Match", etag) }
            if let modified = validators.lastModified { merged["if-modified-since"] = ("If-Modified-Since", modified) }
            let fields = [merged["if-none-match"], merged["if-modified-since"]].compactMap { $0 }
            try RequestValidation.validate(Dictionary(fields, uniquingKeysWith: { first, _ in first }))
        }
        for (name, value) in extras { merged[name.lowercased()] = (name, value) }
        return DefaultRequestHeaders.ordered(merged)
    }
}
