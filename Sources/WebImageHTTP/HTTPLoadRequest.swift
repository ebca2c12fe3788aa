#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What to load and how: a URL and what goes with it. The HTTP stack runs it (a `GET`, or an
/// object store's `PUT`); WebImage names it `ImageLoadRequest`, the input of every loader, and
/// its other loaders take file and data URLs in it too.
public struct HTTPLoadRequest: Sendable {
    /// How urgently a load should run, `veryLow` to `veryHigh`; higher priorities jump queues.
    /// Over HTTP/2 it becomes the stream's weight. WebImage names it `LoadPriority`.
    public enum Priority: Int, Sendable, Hashable, Comparable, CaseIterable {
        case veryLow = -2, low = -1, normal = 0, high = 1, veryHigh = 2

        public static func < (lhs: Priority, rhs: Priority) -> Bool { lhs.rawValue < rhs.rawValue }
    }

    /// Validators of a stored copy, sent as `If-None-Match` / `If-Modified-Since` to revalidate
    /// it. WebImage names them `CacheValidators`.
    public struct Validators: Sendable, Hashable, Codable {
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

    /// The URL to load: http or https for the HTTP stack (WebImage's loaders also take file and data URLs).
    public var url: URL
    /// Extra request headers (added to the loader's defaults; these win). Checked before anything is sent.
    public var headers: [String: String]
    /// The priority among queued loads.
    public var priority: Priority
    /// Idle timeout: the load fails when no bytes arrive for this long; `nil` uses the loader's default.
    /// It bounds opening a connection too. Zero or negative fails the load as an invalid request;
    /// more than a year counts as a year.
    public var timeout: Duration?
    /// Total deadline: the load fails as timed out when it has not completed this long after it
    /// started, redirects and slow drips included; `nil` uses the loader's default.
    public var resourceTimeout: Duration?
    /// Validators of a stored copy: a server answer of 304 completes with ``HTTPLoadEvent/notModified(_:)``.
    public var validators: Validators?
    /// Deliver ``HTTPLoadEvent/partialData(_:)`` as bytes arrive (for a consumer that reads the body as it grows).
    public var wantsPartialData: Bool
    /// `GET` for loads; `PUT` (with ``body``) for the writes of an object store. A request other
    /// than `GET` is never redirected: a 3xx ends it with its status.
    package var method: HTTPRequestMethod = .get
    /// The request body, sent with `Content-Length`.
    package var body: Data?

    public init(url: URL, headers: [String: String] = [:], priority: Priority = .normal,
                timeout: Duration? = nil, resourceTimeout: Duration? = nil, validators: Validators? = nil,
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

/// The request methods the client sends.
package enum HTTPRequestMethod: String, Sendable {
    case get = "GET", put = "PUT"
}

/// What the server said about the data: a response head. WebImage names it `ImageLoadResponse`
/// (its file and data loaders report one too, without a status).
public struct HTTPLoadResponse: Sendable, Hashable {
    /// The URL the data finally came from, after redirects.
    public var url: URL
    /// The HTTP status, or `nil` when the data did not come over HTTP (a file or data URL).
    public var statusCode: Int?
    /// Response headers, names lowercased; repeated fields joined with ", ".
    public var headers: [String: String]
    /// The announced body length (`Content-Length`), if any.
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
    public var validators: HTTPLoadRequest.Validators {
        HTTPLoadRequest.Validators(etag: headers["etag"], lastModified: headers["last-modified"])
    }
}

/// One thing that happened during a load. WebImage names it `ImageLoadEvent`.
public enum HTTPLoadEvent: Sendable {
    /// The response head arrived (the final one, of a 2xx answer).
    case response(HTTPLoadResponse)
    /// Bytes arrived: how many so far, of how many if known.
    case progress(received: Int64, expected: Int64?)
    /// Every byte received so far (only when the request asked for partial data).
    case partialData(Data)
    /// The whole body: the last event of a successful load.
    case completed(Data, HTTPLoadResponse)
    /// The server confirmed the stored copy (HTTP 304): the last event of a revalidation.
    case notModified(HTTPLoadResponse)
}

/// Sees a redirect before it is followed: `from` answered with a redirect to `to`. Return `false`
/// to refuse it (the load fails as rejected): a server can block private addresses or hosts it
/// does not know. Runs on an event loop: must be quick and must not block.
public typealias HTTPRedirectPolicy = @Sendable (_ from: URL, _ to: URL) -> Bool
