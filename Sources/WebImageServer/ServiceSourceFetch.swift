#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Logging
import Tracing
import WebImage

/// Around each source fetch the manager starts for a request: the `fetch source` span (the
/// request's trace continues to the origin as `traceparent`), the fetch metric, and the answers
/// a client may be told of a failure (what the guard found is logged, not told).
struct ServiceSourceFetch: ImageRequest.SourceFetchInterceptor {
    let tracer: any Tracer
    /// The request's span context: the fetch runs in the manager's task, which has no task-local one.
    let context: ServiceContext
    let metrics: ServiceMetrics
    let logger: Logger

    func fetch(_ url: URL, next: @Sendable ([String: String]) async throws -> SourceImage) async throws -> SourceImage {
        let span = tracer.startSpan("fetch source", context: context, ofKind: .client)
        defer { span.end() }
        span.attributes["url.scheme"] = url.scheme ?? ""
        var headers: [String: String] = [:]
        tracer.inject(span.context, into: &headers, using: DictionaryInjector())
        do {
            let source = try await next(headers)
            span.attributes["webimage.source.bytes"] = source.data.count
            metrics.sourceFetched(failed: false)
            return source
        } catch {
            span.recordError(error)
            span.setStatus(SpanStatus(code: .error))
            metrics.sourceFetched(failed: true)
            throw answer(for: error, url: url)
        }
    }

    private func answer(for error: any Error, url: URL) -> any Error {
        switch error as? WebImageError {
        case .fileSystem(let reason) where LocalRoot.isLocal(url), .rejected(let reason) where LocalRoot.isLocal(url):
            // Missing, not a regular file, unreadable, or a link that leads out of the root (the
            // path as written passed the source checks): one answer for all, as an origin's 404,
            // so that the answer says nothing of what lies outside the root. The reason is logged.
            logger.info("local source not served", metadata: ["url": "\(url.absoluteString)", "reason": "\(reason)"])
            return ServiceError(status: 404, code: "sourceNotFound", message: "no readable file at \(url.path(percentEncoded: true))")
        case .rejected(let reason):
            // The connect-address policy names the addresses a name resolved to (internal DNS
            // answers), the redirect policy the hop: logged, not told.
            logger.info("source refused", metadata: ["url": "\(SourceAllowList.redacted(url))", "reason": "\(reason)"])
            return ServiceError.sourceNotAllowed(Self.refusedSourceReason)
        case .httpStatus(let status) where S3Configuration.isS3(url) && (status == 401 || status == 403):
            return ServiceError(status: 502, code: "sourceFailed",
                                message: "the S3 store refused the read (\(status): AccessDenied, or the credentials or region are wrong)")
        default:
            return error
        }
    }

    /// What a client is told when the guard refused a source's address or a redirect hop at fetch time.
    static let refusedSourceReason = "the source, or a redirect from it, leads to an address or place this service may not fetch"
        + " (private, loopback, link-local or reserved; or off the allowed-source list)"
}

/// Writes a trace context into request headers for the tracer.
private struct DictionaryInjector: Injector {
    func inject(_ value: String, forKey key: String, into carrier: inout [String: String]) { carrier[key] = value }
}
