#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import WebImageHTTP

// The request, its response and events, its priority and validators are declared once, in the
// HTTP stack (WebImageHTTP, re-exported): the http(s) loader hands them to it and its events to
// the callers as they are, with no conversion per event. These are their names here.

/// How urgently a load should run: `veryLow` (-2) to `veryHigh` (2). Higher priorities jump
/// queues; over HTTP/2 a load's priority becomes its stream's weight (see ``/WebImageHTTP/HTTPLoadRequest/Priority``).
public typealias LoadPriority = HTTPLoadRequest.Priority

/// Validators of a stored copy (`etag`, `lastModified`), sent as `If-None-Match` /
/// `If-Modified-Since` to revalidate it (see ``/WebImageHTTP/HTTPLoadRequest/Validators``).
@available(*, deprecated, renamed: "HTTPLoadRequest.Validators")
public typealias CacheValidators = HTTPLoadRequest.Validators

/// What to load and how: the input of an ``ImageLoader``. The URL is http, https, file or data;
/// a zero or negative `timeout` fails the load with ``WebImageError/invalidRequest(_:)``, a passed
/// `resourceTimeout` with ``WebImageError/timedOut``; `validators` make a 304 complete with
/// `ImageLoadEvent.notModified(_:)`; `wantsPartialData` delivers `ImageLoadEvent.partialData(_:)`
/// as bytes arrive (for progressive decoding). See ``/WebImageHTTP/HTTPLoadRequest``.
public typealias ImageLoadRequest = HTTPLoadRequest

/// What the server (or file system) said about the data: the final URL, the HTTP status (`nil`
/// for file and data URLs), the headers (names lowercased), the announced length, and from them
/// `mimeType` and `validators` (see ``/WebImageHTTP/HTTPLoadResponse``).
public typealias ImageLoadResponse = HTTPLoadResponse

/// One thing that happened during a load: `response`, `progress(received:expected:)`,
/// `partialData` (when asked for), then `completed(_:_:)` or, for a revalidation the server
/// confirmed (HTTP 304), `notModified(_:)` (see ``/WebImageHTTP/HTTPLoadEvent``).
public typealias ImageLoadEvent = HTTPLoadEvent

/// Loads the bytes behind a URL: the network stage of the pipeline.
///
/// `load` returns at once; the stream delivers events and ends after exactly one
/// ``/WebImageHTTP/HTTPLoadEvent/completed(_:_:)`` or ``/WebImageHTTP/HTTPLoadEvent/notModified(_:)``, or finishes by throwing a
/// ``WebImageError``. Cancelling the task that iterates the stream, or dropping the stream, cancels
/// the load (for a shared download: detaches this caller only).
public protocol ImageLoader: Sendable {
    /// Whether this loader handles `url` (usually by scheme).
    func canLoad(_ url: URL) -> Bool
    /// Starts loading.
    func load(_ request: ImageLoadRequest) -> AsyncThrowingStream<ImageLoadEvent, any Error>
    /// Starts loading and returns a handle through which the load's priority can change while it
    /// runs or waits. The manager calls this one. The default calls ``load(_:)`` and ignores
    /// priority changes; a loader with a queue (``ImageDownloader``) reorders it.
    func start(_ request: ImageLoadRequest) -> ImageLoadHandle
}

extension ImageLoader {
    /// Calls ``load(_:)``; priority changes are ignored.
    public func start(_ request: ImageLoadRequest) -> ImageLoadHandle {
        ImageLoadHandle(events: load(request))
    }
}

/// A started load: its events, and a way to change its priority.
public struct ImageLoadHandle: Sendable {
    /// The load's events, as ``ImageLoader/load(_:)`` delivers them.
    public let events: AsyncThrowingStream<ImageLoadEvent, any Error>
    /// Asks the loader to run the load at `priority` from now on.
    public let setPriority: @Sendable (LoadPriority) -> Void

    /// Creates a handle; without `setPriority`, priority changes are ignored.
    public init(events: AsyncThrowingStream<ImageLoadEvent, any Error>,
                setPriority: @escaping @Sendable (LoadPriority) -> Void = { _ in }) {
        self.events = events
        self.setPriority = setPriority
    }
}
