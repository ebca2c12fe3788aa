/// Where one caller of a download hears of it: its own event stream, or the handlers it gave.
///
/// The coordinator calls ``yield(_:)`` for every event the caller wants and ``finish(_:)``
/// once; a handler caller's completion runs exactly once, on the thread that ended the download
/// (an event loop for HTTP), so it must not block.
enum DownloadCallerSink: Sendable {
    case stream(AsyncThrowingStream<ImageLoadEvent, any Error>.Continuation)
    case handlers(progress: (@Sendable (_ received: Int64, _ expected: Int64?) -> Void)?,
                  completion: @Sendable (Result<DownloadOutcome, WebImageError>) -> Void)

    func yield(_ event: ImageLoadEvent) {
        switch self {
        case .stream(let continuation):
            continuation.yield(event)
        case .handlers(let progress, let completion):
            switch event {
            case .progress(let received, let expected): progress?(received, expected)
            case .completed(let data, let response): completion(.success(.data(data, response)))
            case .notModified(let response): completion(.success(.notModified(response)))
            case .response, .partialData: break
            }
        }
    }

    /// Ends this caller's events: after its final event (`nil`), or with `error`.
    func finish(_ error: WebImageError?) {
        switch self {
        case .stream(let continuation):
            if let error { continuation.finish(throwing: error) } else { continuation.finish() }
        case .handlers(_, let completion):
            if let error { completion(.failure(error)) }
        }
    }
}
