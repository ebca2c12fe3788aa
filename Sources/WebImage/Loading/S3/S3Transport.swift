#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import WebImageHTTP

/// The connections and rules of a downloader's `s3://` requests (with
/// ``ImageDownloaderConfiguration/s3``): a pool of their own beside the downloader's other HTTP
/// loads, because their trust differs.
/// - With an ``S3Configuration/endpoint`` a request connects there and nowhere else, past the
///   connect-address policy: the operator named the endpoint, so a store on a private address
///   (MinIO at `10.0.0.5`) is reachable while http sources stay guarded. A plain `http://` URL to
///   the same host goes through the other pool, guarded: it can neither reuse a connection opened
///   for S3 nor pass as an S3 read. Without an endpoint (AWS), the policy applies as to any URL.
/// - No redirect is followed: a signature is for one URL.
/// - No cookie or per-host credential is sent: the signature is the request's authorization.
///
/// The queue, coalescing, limits and events stay the downloader's: only the transport differs.
struct S3Transport: Sendable {
    let loader: HTTPImageLoader
    let hooks: HTTPLoadHooks

    init(_ configuration: ImageDownloaderConfiguration, s3: S3Configuration) {
        var settings = configuration
        settings.credentials = [:]
        settings.cookiesEnabled = false
        settings.http.redirectPolicy = { _, _ in false }
        if s3.endpoint != nil { settings.http.connectAddressPolicy = nil }
        settings.http.maxConnectionsPerHost = configuration.ownPoolConnectionsPerHost
        loader = HTTPImageLoader(configuration: settings.http)
        hooks = ImageDownloader.makeHTTPHooks(settings, cookies: CookieJar())
    }
}
