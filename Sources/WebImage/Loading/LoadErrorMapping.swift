import WebImageHTTP

extension WebImageError {
    /// Maps whatever a loader threw to the typed error callers see: the HTTP stack's errors case
    /// for case, transport errors (NIO, NIOSSL) as the HTTP stack classifies them.
    static func fromLoading(_ error: any Error) -> WebImageError {
        switch error {
        case let error as WebImageError: error
        case let error as HTTPLoadError: WebImageError(error)
        default: WebImageError(HTTPLoadError.fromLoading(error))
        }
    }

    /// The HTTP stack's error as the library reports it.
    init(_ error: HTTPLoadError) {
        switch error {
        case .invalidURL(let url): self = .invalidURL(url)
        case .invalidRequest(let reason): self = .invalidRequest(reason)
        case .httpStatus(let status): self = .httpStatus(status)
        case .tooManyRedirects: self = .tooManyRedirects
        case .insecureRedirect(let url): self = .insecureRedirect(url)
        case .rejected(let reason): self = .rejected(reason)
        case .tooLarge(let reason): self = .tooLarge(reason)
        case .truncatedData(let reason): self = .truncatedData(reason)
        case .emptyData: self = .emptyData
        case .connectionFailed(let reason): self = .connectionFailed(reason)
        case .untrustedCertificate(let reason): self = .untrustedCertificate(reason)
        case .proxyAuthenticationRequired(let proxy): self = .proxyAuthenticationRequired(proxy)
        case .timedOut: self = .timedOut
        case .cancelled: self = .cancelled
        case .consumer(let error): self = .fromLoading(error)
        }
    }

    /// The HTTP stack's error this one mirrors, the inverse of ``init(_:)``; `nil` for the
    /// failures no HTTP load reports (decoding, encoding, the cache, files). Listed case by case
    /// so that a new case is placed on purpose.
    var transportError: HTTPLoadError? {
        switch self {
        case .invalidURL(let url): .invalidURL(url)
        case .invalidRequest(let reason): .invalidRequest(reason)
        case .httpStatus(let status): .httpStatus(status)
        case .tooManyRedirects: .tooManyRedirects
        case .insecureRedirect(let url): .insecureRedirect(url)
        case .rejected(let reason): .rejected(reason)
        case .tooLarge(let reason): .tooLarge(reason)
        case .truncatedData(let reason): .truncatedData(reason)
        case .emptyData: .emptyData
        case .connectionFailed(let reason): .connectionFailed(reason)
        case .untrustedCertificate(let reason): .untrustedCertificate(reason)
        case .proxyAuthenticationRequired(let proxy): .proxyAuthenticationRequired(proxy)
        case .timedOut: .timedOut
        case .cancelled: .cancelled
        case .unsupportedFormat, .corruptData, .encodingFailed, .blockedFailedURL, .notCached, .fileSystem,
             .invalidNamespace, .overloaded, .deadlineExceeded: nil
        }
    }
}
