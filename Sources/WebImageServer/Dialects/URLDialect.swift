#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The URL grammar of another image service (imgproxy's, thumbor's), mounted at a path prefix
/// with `--dialect NAME[=PREFIX]`. A dialect is a parser and nothing else: it turns one request
/// path into the service's request value (``ImageParameters``), checking the signature as the
/// original service does. Everything after the parse (the source rules, limits, caches, the
/// render, metrics, tracing) is `/image`'s.
protocol URLDialect: Sendable {
    /// Parses one request.
    /// - Parameters:
    ///   - path: the path after the mount prefix, as sent (still percent-encoded), without a leading `/`.
    ///   - query: the raw query, without the `?` (most dialects ignore it).
    /// - Throws: ``ServiceError`` with the status the original service answers (a bad signature,
    ///   a malformed URL, an option that cannot be honoured: 4xx naming it).
    func request(path: Substring, query: String) throws -> DialectRequest

    /// The error the original service answers where this one answers `error` (after the parse:
    /// the source rules, the fetch, the decode), so clients see the statuses they know.
    func translate(_ error: ServiceError) -> ServiceError
}

extension URLDialect {
    /// The service's own answers.
    func translate(_ error: ServiceError) -> ServiceError { error }
}

/// What a dialect's URL asks for: the request value, and how the answer is written.
struct DialectRequest: Sendable {
    /// What is answered.
    enum Answer: Sendable, Hashable {
        /// The rendered image (``ImageParameters``).
        case image
        /// thumbor's `meta/`: JSON describing the source and the operations, no image.
        case thumborMeta(ThumborMeta, image: Substring)
    }

    /// The request value: the source and the options that shape the output.
    var parameters: ImageParameters
    /// What is answered.
    var answer: Answer = .image
    /// Headers the original service adds to a 200 (imgproxy's `Content-Disposition` for
    /// `filename`/`return_attachment`), written after the service's own.
    var extraHeaders: [(name: String, value: String)] = []

    init(parameters: ImageParameters, answer: Answer = .image, extraHeaders: [(name: String, value: String)] = []) {
        self.parameters = parameters
        self.answer = answer
        self.extraHeaders = extraHeaders
    }
}
