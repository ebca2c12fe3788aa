#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// One request the HTTP stack runs (a `GET`, or an object store's `PUT`): the URL and what goes with it.
package struct HTTPLoadRequest: Sendable {
    /// Validators of a stored copy, sent as `If-None-Match` / `If-Modified-Since`.
    package struct Validators: Sendable {
        package var etag: String?
        package var lastModified: String?

        package init(etag: String?, lastModified: String?) {
            self.etag = etag
            self.lastModified = lastModified
        }
    }

    /// An http or https URL.
    package var url: URL
    /// Headers added to the defaults (these win); checked before anything is sent.
    package var headers: [String: String]
    /// The idle timeout; `nil` uses the session's.
    package var timeout: Duration?
    /// The whole load's deadline; `nil` uses the hooks' or the session's.
    package var resourceTimeout: Duration?
    /// Makes the request conditional: a 304 completes with ``HTTPLoadEvent/notModified(_:)``.
    package var validators: Validators?
    /// Deliver ``HTTPLoadEvent/partialData(_:)`` as the body grows.
    package var wantsPartialData: Bool
    /// How urgent the load is, -2 (lowest) to 2 (highest); over HTTP/2 it becomes the stream's weight.
    package var priority: Int
    /// `GET` for loads; `PUT` (with ``body``) for the writes of an object store. A request other
    /// than `GET` is never redirected: a 3xx ends it with its status.
    package var method: HTTPRequestMethod = .get
    /// The request body, sent with `Content-Length`.
    package var body: Data?

    package init(url: URL, headers: [String: String] = [:], timeout: Duration? = nil, resourceTimeout: Duration? = nil,
                 validators: Validators? = nil, wantsPartialData: Bool = false, priority: Int = 0) {
        self.priority = priority
        self.url = url
        self.headers = headers
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

/// A response head as the HTTP stack reports it.
package struct HTTPLoadResponse: Sendable {
    /// The URL of the hop that answered (after redirects).
    package var url: URL
    package var statusCode: Int
    /// By lowercased name; repeated fields joined with ", ".
    package var headers: [String: String]
    /// The `Content-Length`, if the server sent one.
    package var expectedContentLength: Int64?

    package init(url: URL, statusCode: Int, headers: [String: String], expectedContentLength: Int64?) {
        self.url = url
        self.statusCode = statusCode
        self.headers = headers
        self.expectedContentLength = expectedContentLength
    }
}

/// One thing that happened during an HTTP load.
package enum HTTPLoadEvent: Sendable {
    /// The final response head of a 2xx answer.
    case response(HTTPLoadResponse)
    /// Body bytes arrived: how many so far, of how many if known.
    case progress(received: Int64, expected: Int64?)
    /// Every body byte so far (only when the request asked for partial data).
    case partialData(Data)
    /// The whole body: the last event of a successful load.
    case completed(Data, HTTPLoadResponse)
    /// HTTP 304 to a conditional request: the last event of a revalidation.
    case notModified(HTTPLoadResponse)
}

/// Sees a redirect before it is followed: `from` answered with a redirect to `to`. Return `false`
/// to refuse it (the load fails as rejected): a server can block private addresses or hosts it
/// does not know. Runs on an event loop: must be quick and must not block.
public typealias HTTPRedirectPolicy = @Sendable (_ from: URL, _ to: URL) -> Bool
