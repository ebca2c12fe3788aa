#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import NIOCore
import NIOHTTP1
import WebImageSupport

/// One request/response hop of an HTTP load (one attempt of it), handled on the connection's event loop.
///
/// The connection reports the head and every body part on its event loop, so bytes are appended
/// where they arrive instead of crossing into a task per chunk (an async body sequence cost more
/// CPU than the bytes themselves). The idle timer also lives on the event loop, re-armed lazily
/// from the last activity.
final class HTTPExchange: HTTPResponseConsumer {
    /// How a hop ended.
    enum Outcome: Sendable {
        /// A 2xx body, complete.
        case body(Data, HTTPLoadResponse)
        /// A redirect to `location` (relative to the hop's URL).
        case redirect(location: String)
        /// HTTP 304 to a conditional request.
        case notModified(HTTPLoadResponse)
        /// Any other status: the load fails with it.
        case status(Int)
    }

    /// Where a retried hop picks up a body cut short: the bytes so far, the response they came
    /// with, and the validator that makes the range request conditional (`If-Range`).
    struct Resume: Sendable {
        var data: Data
        var response: HTTPLoadResponse
        var validator: String
    }

    /// What a failed hop leaves for a retry.
    struct Leftover: Sendable {
        /// Where a retry can resume the body, if the server supports ranges and sent a validator.
        var resume: Resume?
        /// Whether partial data went to the sink.
        var deliveredPartialData: Bool
        /// The `Retry-After` of the response, if it had one.
        var retryAfter: String?
    }

    /// What the hop is doing with the body.
    private enum Phase {
        case awaitingHead
        case collecting(HTTPLoadResponse)
        /// Not a body we keep (redirect, 304, error status): read and dropped, up to a bound.
        case discarding(Outcome)
    }

    private struct State {
        var phase = Phase.awaitingHead
        var data = Data()
        var received: Int64 = 0
        var partialData = PartialDataThrottle()
        var discarded = 0
        var lastActivity = NIODeadline.now()
        var timer: Scheduled<Void>?
        var timedOut = false
        var finished = false
        var deliveredPartialData = false
        var retryAfter: String?
        /// The server answered the range request of a resume with something else than the range.
        var resumeRefused = false
    }

    /// A body we drop is read this far so the connection can be reused; past it, the connection goes.
    private static let discardLimit = 256 * 1024

    private let url: URL
    private let maxBodySize: Int64
    private let wantsPartialData: Bool
    private let idleTimeout: TimeAmount
    private let onCookies: (@Sendable (URL, [String]) -> Void)?
    private let sink: @Sendable (HTTPLoadEvent) throws -> Void
    private let resume: Resume?
    // The connection's callbacks and the idle timer run on its event loop, and so does
    // `resolve` in practice; the lock makes the state safe whatever thread the connection's end
    // is reported on (it is never contended in the steady state).
    private let state = Locked(State())

    /// Whether a 2xx without a body completes (the answer to a write) rather than failing with `emptyData`.
    private let acceptsEmptyBody: Bool

    init(url: URL, maxBodySize: Int64, wantsPartialData: Bool, idleTimeout: TimeAmount,
         onCookies: (@Sendable (URL, [String]) -> Void)?,
         sink: @escaping @Sendable (HTTPLoadEvent) throws -> Void, resume: Resume? = nil, acceptsEmptyBody: Bool = false) {
        self.resume = resume
        self.acceptsEmptyBody = acceptsEmptyBody
        self.url = url
        self.maxBodySize = maxBodySize
        self.wantsPartialData = wantsPartialData
        self.idleTimeout = idleTimeout
        self.onCookies = onCookies
        self.sink = sink
        if let resume {
            state.withLock { state in
                state.data = resume.data
                state.received = Int64(resume.data.count)
            }
        }
    }

    /// What a hop that failed with `error` amounts to: an error to throw, or (for a body that was
    /// only being dropped) the outcome its head already decided. `aborted`: why the load was
    /// ended from outside (cancelled, past its resource timeout), if it was.
    func resolve(failure error: any Error, aborted: HTTPLoadError?) throws -> Outcome {
        let (timedOut, phase, received) = state.withLock { state in
            state.finished = true
            state.timer?.cancel()
            return (state.timedOut, state.phase, state.received)
        }
        if timedOut { throw HTTPLoadError.timedOut }
        if let aborted { throw aborted }
        guard !(error is HTTPLoadError), !(error is StaleConnectionError) else { throw error }
        switch phase {
        case .discarding(let outcome):
            // A dropped body cut short by the server does not change what the head already decided.
            return outcome
        case .collecting(let info):
            if let expected = info.expectedContentLength, received < expected, HTTPLoadError.isEndOfStream(error) {
                throw HTTPLoadError.truncatedData("received \(received) of \(expected) bytes")
            }
            throw error
        case .awaitingHead:
            throw error
        }
    }

    // MARK: Idle timer

    private func armTimer(_ connection: any HTTPExchangeCarrier, at deadline: NIODeadline) -> Scheduled<Void> {
        connection.eventLoop.scheduleTask(deadline: deadline) { [self] in timerFired(connection) }
    }

    /// Times the hop out if it has been quiet for the whole timeout, else sleeps until it would be.
    private func timerFired(_ connection: any HTTPExchangeCarrier) {
        let expired: Bool = state.withLock { state in
            guard !state.finished else { return false }
            let due = state.lastActivity + idleTimeout
            if NIODeadline.now() >= due {
                state.timedOut = true
                return true
            }
            state.timer = armTimer(connection, at: due)
            return false
        }
        if expired { connection.abort() }
    }

    // MARK: HTTPResponseConsumer

    func started(on connection: any HTTPExchangeCarrier) {
        let timer = armTimer(connection, at: .now() + idleTimeout)
        state.withLock { state in
            state.lastActivity = .now()
            if state.finished { timer.cancel() } else if state.timer == nil { state.timer = timer }
        }
    }

    func receive(head: HTTPResponseHead) throws {
        if let onCookies {
            // Few image responses set a cookie: the others cost the jar nothing.
            let setCookies = head.headers["set-cookie"]
            if !setCookies.isEmpty { onCookies(url, setCookies) }
        }
        let status = Int(head.status.code)
        var lowercased: [String: String] = [:]
        lowercased.reserveCapacity(head.headers.count)
        for (name, value) in head.headers {
            let key = name.lowercased()
            lowercased[key] = lowercased[key].map { "\($0), \(value)" } ?? value
        }
        let expected = head.headers.first(name: "content-length").flatMap { Int64($0) }
        let info = HTTPLoadResponse(url: url, statusCode: status, headers: lowercased, expectedContentLength: expected)

        let retryAfter = head.headers.first(name: "retry-after")
        if let resume, (200..<300).contains(status) {
            // A resumed body continues only with exactly the range asked for, of the same representation.
            guard status == 206, Self.continues(resume, contentRange: head.headers.first(name: "content-range")) else {
                state.withLock { $0.resumeRefused = true }
                throw HTTPLoadError.connectionFailed("the server did not resume the body at byte \(resume.data.count) (status \(status))")
            }
            state.withLock { state in
                state.lastActivity = .now()
                state.phase = .collecting(resume.response)
            }
            return
        }
        let phase: Phase
        if [301, 302, 303, 307, 308].contains(status), let location = head.headers.first(name: "location") {
            phase = .discarding(.redirect(location: location))
        } else if status == 304 {
            phase = .discarding(.notModified(info))
        } else if !(200..<300).contains(status) {
            phase = .discarding(.status(status))
        } else {
            phase = .collecting(info)
        }
        state.withLock { state in
            state.lastActivity = .now()
            state.phase = phase
            state.retryAfter = retryAfter
            if case .collecting = phase, let expected, expected > 0, expected <= maxBodySize {
                state.data.reserveCapacity(Int(expected))
            }
        }
        guard case .collecting = phase else { return }
        if let expected, expected > maxBodySize {
            throw HTTPLoadError.tooLarge("Content-Length \(expected) exceeds \(maxBodySize) bytes")
        }
        try sink(.response(info))
    }

    func receive(body buffer: ByteBuffer) throws -> Bool {
        enum Step { case progress(Int64, Int64?, Data?), discardedEnough, tooLarge, ignore }
        let step: Step = state.withLock { state in
            state.lastActivity = .now()
            switch state.phase {
            case .awaitingHead:
                return .ignore
            case .discarding:
                state.discarded += buffer.readableBytes
                return state.discarded > Self.discardLimit ? .discardedEnough : .ignore
            case .collecting(let info):
                state.received += Int64(buffer.readableBytes)
                guard state.received <= maxBodySize else { return .tooLarge }
                // Through the raw bytes: the generic Sequence path asks the runtime about the
                // sequence's type on every call.
                buffer.withUnsafeReadableBytes { state.data.append(contentsOf: $0) }
                let deliversPartial = wantsPartialData && state.partialData.shouldDeliver(count: state.data.count)
                if deliversPartial { state.deliveredPartialData = true }
                return .progress(state.received, info.expectedContentLength, deliversPartial ? state.data : nil)
            }
        }
        switch step {
        case .ignore:
            return true
        case .discardedEnough:
            return false
        case .tooLarge:
            throw HTTPLoadError.tooLarge("body exceeds \(maxBodySize) bytes")
        case .progress(let received, let expected, let partial):
            try sink(.progress(received: received, expected: expected))
            if let partial { try sink(.partialData(partial)) }
            return true
        }
    }

    /// What this hop leaves for a retry; call after it failed.
    func leftover() -> Leftover {
        state.withLock { state in
            var resumable: Resume?
            if case .collecting(let info) = state.phase {
                if !state.data.isEmpty, let validator = Self.rangeValidator(of: info) {
                    resumable = Resume(data: state.data, response: info, validator: validator)
                }
            } else if !state.resumeRefused {
                // A resume that failed before its body (no connection, a 503) can be tried again.
                resumable = resume
            }
            return Leftover(resume: resumable, deliveredPartialData: state.deliveredPartialData, retryAfter: state.retryAfter)
        }
    }

    /// The validator a range request for the rest of `response`'s body can be made conditional
    /// on: a strong `ETag`, else `Last-Modified`; `nil` when the server does not take byte ranges.
    static func rangeValidator(of response: HTTPLoadResponse) -> String? {
        guard let ranges = response.headers["accept-ranges"],
              ranges.split(separator: ",").contains(where: { $0.trimmingSpacesAndTabs.lowercased() == "bytes" }) else { return nil }
        if let etag = response.headers["etag"], !etag.hasPrefix("W/"), !etag.contains(",") { return etag }
        return response.headers["last-modified"]
    }

    /// Whether `contentRange` (`bytes first-last/total`) starts where `resume` stopped and
    /// describes a body of the length the first response announced, if it announced one.
    static func continues(_ resume: Resume, contentRange: String?) -> Bool {
        guard let contentRange, contentRange.lowercased().hasPrefix("bytes ") else { return false }
        let spec = contentRange.dropFirst(6)
        let parts = spec.split(separator: "/", maxSplits: 1)
        guard parts.count == 2 else { return false }
        let bounds = parts[0].split(separator: "-", maxSplits: 1)
        guard bounds.count == 2, let first = Int64(bounds[0]), let last = Int64(bounds[1]), first <= last,
              first == Int64(resume.data.count) else { return false }
        if let expected = resume.response.expectedContentLength {
            return parts[1] == "*" || Int64(parts[1]) == expected
        }
        return true
    }

    func finish() throws -> Outcome {
        let (phase, data, received) = state.withLock { state in
            state.finished = true
            state.timer?.cancel()
            state.timer = nil
            let data = state.data
            state.data = Data()
            return (state.phase, data, state.received)
        }
        switch phase {
        case .awaitingHead:
            throw HTTPLoadError.connectionFailed("no response head")
        case .discarding(let outcome):
            return outcome
        case .collecting(let info):
            if let expected = info.expectedContentLength, received < expected {
                throw HTTPLoadError.truncatedData("received \(received) of \(expected) bytes")
            }
            if data.isEmpty, !acceptsEmptyBody { throw HTTPLoadError.emptyData }
            return .body(data, info)
        }
    }
}
