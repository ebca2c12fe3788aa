#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// How urgently a load should run. Higher priorities jump queues.
public enum LoadPriority: Int, Sendable, Hashable, Comparable, CaseIterable {
    case veryLow = -2, low = -1, normal = 0, high = 1, veryHigh = 2

    public static func < (lhs: LoadPriority, rhs: LoadPriority) -> Bool { lhs.rawValue < rhs.rawValue }
}

/// Validators of a stored copy, sent as `If-None-Match` / `If-Modified-Since` to revalidate it.
public struct CacheValidators: Sendable, Hashable, Codable {
    /// The `ETag` the server sent with the stored copy.
    public var etag: String?
    /// The `Last-Modified` the server sent with the stored copy.
    public var lastModified: String?

    public init(etag: String? = nil, lastModified: String? = nil) {
        self.etag = etag
        self.lastModified = lastModified
    }

    /// Whether there is anything to revalidate with.
    public var isEmpty: Bool { etag == nil && lastModified == nil }
}

/// What to load and how: the input of an ``ImageLoader``.
public struct ImageLoadRequest: Sendable {
    /// The URL to load (http, https, file or data).
    public var url: URL
    /// Extra request headers (added to the loader's defaults; these win).
    public var headers: [String: String]
    /// The priority among queued loads.
    public var priority: LoadPriority
    /// Idle timeout: the load fails when no bytes arrive for this long; `nil` uses the loader's default.
    /// It bounds opening a connection too. Zero or negative fails the load with
    /// ``WebImageError/invalidRequest(_:)``; more than a year counts as a year.
    public var timeout: Duration?
    /// Total deadline: the load fails with ``WebImageError/timedOut`` when it has not completed
    /// this long after it started, redirects and slow drips included; `nil` uses the loader's default.
    public var resourceTimeout: Duration?
    /// Validators of a stored copy: a server answer of 304 completes with ``ImageLoadEvent/notModified(_:)``.
    public var validators: CacheValidators?
    /// Deliver ``ImageLoadEvent/partialData(_:)`` as bytes arrive (for progressive decoding).
    public var wantsPartialData: Bool

    public init(url: URL, headers: [String: String] = [:], priority: LoadPriority = .normal,
                timeout: Duration? = nil, resourceTimeout: Duration? = nil, validators: CacheValidators? = nil,
                wantsPartialData: Bool = false) {
        self.url = url
        self.headers = headers
        self.priority = priority
        self.timeout = timeout
        self.resourceTimeout = resourceTimeout
        self.validators = validators
        self.wantsPartialData = wantsPartialData
    }
}

/// What the server (or file system) said about the data.
public struct ImageLoadResponse: Sendable, Hashable {
    /// The URL the data finally came from, after redirects.
    public var url: URL
    /// The HTTP status, or `nil` for file and data URLs.
    public var statusCode: Int?
    /// Response headers, names lowercased.
    public var headers: [String: String]
    /// The announced body length, if any.
    public var expectedContentLength: Int64?

    public init(url: URL, statusCode: Int? = nil, headers: [String: String] = [:], expectedContentLength: Int64? = nil) {
        self.url = url
        self.statusCode = statusCode
        self.headers = headers
        self.expectedContentLength = expectedContentLength
    }

    /// The `content-type` header.
    public var mimeType: String? { headers["content-type"] }
    /// Validators for revalidating this response later.
    public var validators: CacheValidators {
        CacheValidators(etag: headers["etag"], lastModified: headers["last-modified"])
    }
}

/// One thing that happened during a load.
public enum ImageLoadEvent: Sendable {
    /// The response head arrived.
    case response(ImageLoadResponse)
    /// Bytes arrived: how many so far, of how many if known.
    case progress(received: Int64, expected: Int64?)
    /// Every byte received so far (only when the request asked for partial data).
    case partialData(Data)
    /// The whole body: the last event of a successful load.
    case completed(Data, ImageLoadResponse)
    /// The server confirmed the stored copy (HTTP 304): the last event of a revalidation.
    case notModified(ImageLoadResponse)
}

/// Loads the bytes behind a URL: the network stage of the pipeline.
///
/// `load` returns at once; the stream delivers events and ends after exactly one
/// ``ImageLoadEvent/completed(_:_:)`` or ``ImageLoadEvent/notModified(_:)``, or finishes by throwing a
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
