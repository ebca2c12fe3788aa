#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import WebImageHTTP

extension ImageDownloader {
    /// Stores `body` at `url` with a `PUT`: an `s3://` object (with ``ImageDownloaderConfiguration/s3``,
    /// signed over the body's SHA-256, over the S3 connections) or an http(s) resource, through
    /// the downloader's connections and policies (address policy, proxy, trust), outside its
    /// queue, never redirected. A write is not coalesced: two callers storing the same object
    /// send it twice.
    /// - Parameter headers: sent with it (and signed, for S3): `content-type`, `x-amz-meta-*`; names lowercase.
    /// - Returns: the store's answer (a 2xx).
    /// - Throws: ``WebImageError/httpStatus(_:)`` for any other status, or the transport's error.
    package func put(_ body: Data, to url: URL, headers: [String: String] = [:]) async throws(WebImageError) -> ImageLoadResponse {
        var request = ImageLoadRequest(url: url, headers: headers, timeout: configuration.idleTimeout,
                                       resourceTimeout: configuration.resourceTimeout)
        if S3Configuration.isS3(url) {
            guard let s3 = configuration.s3 else { throw .invalidURL(url.absoluteString) }
            request = try s3.signed(request, method: "PUT", payloadHash: SHA256.hex(of: body), signing: headers)
        }
        let connections = route(for: url)
        request.method = .put
        request.body = body
        let response = Locked<ImageLoadResponse?>(nil)
        let transfer = HTTPTransfer(request, hooks: connections.hooks, session: connections.session) { event in
            if case .completed(_, let answer) = event { response.withLock { $0 = answer } }
        }
        let result = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Result<Void, WebImageError>, Never>) in
                transfer.start { continuation.resume(returning: $0.mapError(WebImageError.init)) }
            }
        } onCancel: {
            transfer.cancel()
        }
        try result.get()
        guard let answer = response.withLock({ $0 }) else { throw .connectionFailed("the write ended without an answer") }
        return answer
    }
}
