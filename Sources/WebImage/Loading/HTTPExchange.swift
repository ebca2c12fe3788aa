import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import Synchronization

/// One request/response hop of an HTTP load, handled on the connection's event loop.
///
/// AsyncHTTPClient's response delegate is called on the event loop for the head and every body
/// part, so bytes are appended where they arrive instead of crossing into a task per chunk (the
/// async body sequence cost more CPU than the bytes themselves). The idle timer also lives on the
/// event loop, re-armed lazily from the last activity.
final class HTTPExchange: HTTPClientResponseDelegate {
    /// How a hop ended.
    enum Outcome: Sendable {
        /// A 2xx body, complete.
        case body(Data, ImageLoadResponse)
        /// A redirect to `location` (relative to the hop's URL).
        case redirect(location: String)
        /// HTTP 304 to a conditional request.
        case notModified(ImageLoadResponse)
        /// Any other status: the load fails with it.
        case status(Int)
    }

    /// What the hop is doing with the body.
    private enum Phase {
        case awaitingHead
        case collecting(ImageLoadResponse)
        /// Not a body we keep (redirect, 304, error status): read and dropped, up to a bound.
        case discarding(Outcome)
    }

    private struct State {
        var phase = Phase.awaitingHead
        var data = Data()
        var received: Int64 = 0
        var discarded = 0
        var lastActivity = NIODeadline.now()
        var timer: Scheduled<Void>?
        var timedOut = false
        var finished = false
    }

    /// A body we drop is read this far so the connection can be reused; past it, the connection goes.
    private static let discardLimit = 256 * 1024

    private let url: URL
    private let maxBodySize: Int64
    private let wantsPartialData: Bool
    private let idleTimeout: TimeAmount
    private let onHeaders: @Sendable (URL, [(String, String)]) -> Void
    private let sink: @Sendable (ImageLoadEvent) throws -> Void
    // Callbacks arrive on one event loop, the timer is armed from the calling task: the lock
    // makes the shared state safe (it is never contended in the steady state).
    private let state = Mutex(State())

    init(url: URL, maxBodySize: Int64, wantsPartialData: Bool, idleTimeout: Duration,
         onHeaders: @escaping @Sendable (URL, [(String, String)]) -> Void,
         sink: @escaping @Sendable (ImageLoadEvent) throws -> Void) {
        self.url = url
        self.maxBodySize = maxBodySize
        self.wantsPartialData = wantsPartialData
        let (seconds, attoseconds) = idleTimeout.components
        self.idleTimeout = .nanoseconds(max(1, seconds * 1_000_000_000 + attoseconds / 1_000_000_000))
        self.onHeaders = onHeaders
        self.sink = sink
    }

    /// Runs the hop on `client`; cancelling the calling task cancels the request.
    func run(_ request: HTTPClient.Request, on client: HTTPClient) async throws -> Outcome {
        let task = client.execute(request: request, delegate: self)
        let timer = armTimer(task, at: .now() + idleTimeout)
        state.withLock { state in
            if state.finished { timer.cancel() } else if state.timer == nil { state.timer = timer }
        }
        do {
            return try await withTaskCancellationHandler {
                try await task.futureResult.get()
            } onCancel: {
                task.cancel()
            }
        } catch {
            let (timedOut, phase, received) = state.withLock { state in
                state.finished = true
                state.timer?.cancel()
                return (state.timedOut, state.phase, state.received)
            }
            if timedOut { throw WebImageError.timedOut }
            guard !(error is WebImageError), !Task.isCancelled else { throw error }
            switch phase {
            case .discarding(let outcome):
                // A dropped body cut short (by us past the discard limit, or by the server) does
                // not change what the head already decided.
                return outcome
            case .collecting(let info):
                if let expected = info.expectedContentLength, received < expected, WebImageError.isEndOfStream(error) {
                    throw WebImageError.truncatedData("received \(received) of \(expected) bytes")
                }
                throw error
            case .awaitingHead:
                throw error
            }
        }
    }

    // MARK: Idle timer

    private func armTimer(_ task: HTTPClient.Task<Outcome>, at deadline: NIODeadline) -> Scheduled<Void> {
        task.eventLoop.scheduleTask(deadline: deadline) { [self] in timerFired(task) }
    }

    /// Times the hop out if it has been quiet for the whole timeout, else sleeps until it would be.
    private func timerFired(_ task: HTTPClient.Task<Outcome>) {
        let expired: Bool = state.withLock { state in
            guard !state.finished else { return false }
            let due = state.lastActivity + idleTimeout
            if NIODeadline.now() >= due {
                state.timedOut = true
                return true
            }
            state.timer = armTimer(task, at: due)
            return false
        }
        if expired { task.cancel() }
    }

    // MARK: HTTPClientResponseDelegate

    func didReceiveHead(task: HTTPClient.Task<Outcome>, _ head: HTTPResponseHead) -> EventLoopFuture<Void> {
        onHeaders(url, head.headers.map { ($0.name, $0.value) })
        let status = Int(head.status.code)
        var lowercased: [String: String] = [:]
        for (name, value) in head.headers {
            let key = name.lowercased()
            lowercased[key] = lowercased[key].map { "\($0), \(value)" } ?? value
        }
        let expected = head.headers.first(name: "content-length").flatMap { Int64($0) }
        let info = ImageLoadResponse(url: url, statusCode: status, headers: lowercased, expectedContentLength: expected)

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
            if case .collecting = phase, let expected, expected > 0, expected <= maxBodySize {
                state.data.reserveCapacity(Int(expected))
            }
        }
        guard case .collecting = phase else { return task.eventLoop.makeSucceededVoidFuture() }
        if let expected, expected > maxBodySize {
            return task.eventLoop.makeFailedFuture(WebImageError.tooLarge("Content-Length \(expected) exceeds \(maxBodySize) bytes"))
        }
        do {
            try sink(.response(info))
        } catch {
            return task.eventLoop.makeFailedFuture(error)
        }
        return task.eventLoop.makeSucceededVoidFuture()
    }

    func didReceiveBodyPart(task: HTTPClient.Task<Outcome>, _ buffer: ByteBuffer) -> EventLoopFuture<Void> {
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
                state.data.append(contentsOf: buffer.readableBytesView)
                return .progress(state.received, info.expectedContentLength, wantsPartialData ? state.data : nil)
            }
        }
        switch step {
        case .ignore:
            return task.eventLoop.makeSucceededVoidFuture()
        case .discardedEnough:
            task.cancel()
            return task.eventLoop.makeSucceededVoidFuture()
        case .tooLarge:
            return task.eventLoop.makeFailedFuture(WebImageError.tooLarge("body exceeds \(maxBodySize) bytes"))
        case .progress(let received, let expected, let partial):
            do {
                try sink(.progress(received: received, expected: expected))
                if let partial { try sink(.partialData(partial)) }
            } catch {
                return task.eventLoop.makeFailedFuture(error)
            }
            return task.eventLoop.makeSucceededVoidFuture()
        }
    }

    func didReceiveError(task: HTTPClient.Task<Outcome>, _ error: any Error) {}

    func didFinishRequest(task: HTTPClient.Task<Outcome>) throws -> Outcome {
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
            throw WebImageError.connectionFailed("no response head")
        case .discarding(let outcome):
            return outcome
        case .collecting(let info):
            if let expected = info.expectedContentLength, received < expected {
                throw WebImageError.truncatedData("received \(received) of \(expected) bytes")
            }
            if data.isEmpty { throw WebImageError.emptyData }
            return .body(data, info)
        }
    }
}
