/// How one caller of a download joins its ``SharedWork``: through its token's event stream, or
/// through the handlers it gave.
extension SharedWorkSink where Value == DownloadOutcome {
    /// A caller that reads its token's stream. Ordered: yields go to the stream under the work's
    /// lock, so a late joiner gets the replayed response and progress before anything newer.
    static func download(_ continuation: AsyncThrowingStream<ImageLoadEvent, any Error>.Continuation,
                         options: DownloadOptions) -> Self {
        Self(wantsProgress: options.reportsProgress, ordered: true, accepts: options.responseModifier,
             receive: { event in
                 switch event {
                 case .response(let response): continuation.yield(.response(response))
                 case .progress(let received, let expected): continuation.yield(.progress(received: received, expected: expected))
                 case .partialData(let data): continuation.yield(.partialData(data))
                 case .partialImage, .value: break
                 }
             },
             finish: { result in
                 switch result {
                 case .success(let outcome):
                     continuation.yield(outcome.event)
                     continuation.finish()
                 case .failure(let error):
                     continuation.finish(throwing: error)
                 }
             })
    }

    /// A caller with handlers. Called on the thread that produced the event (an event loop for
    /// HTTP), outside the lock, so the handlers may call back into the downloader; the
    /// completion runs exactly once. Not ordered, so a late joiner is replayed nothing (its
    /// progress could otherwise go back).
    static func download(options: DownloadOptions, progress: (@Sendable (_ received: Int64, _ expected: Int64?) -> Void)?,
                         completion: @escaping @Sendable (Result<DownloadOutcome, WebImageError>) -> Void) -> Self {
        Self(wantsProgress: progress != nil, ordered: false, accepts: options.responseModifier,
             receive: { event in
                 if case .progress(let received, let expected) = event { progress?(received, expected) }
             },
             finish: { result in
                 completion(result.mapError { $0 as? WebImageError ?? .fromLoading($0) })
             })
    }
}

extension DownloadOutcome {
    /// The last event of a caller's stream.
    var event: ImageLoadEvent {
        switch self {
        case .data(let data, let response): .completed(data, response)
        case .notModified(let response): .notModified(response)
        }
    }
}
