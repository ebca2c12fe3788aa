import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import NIOSSL
import WebImage

/// An ``ImageLoader`` over AsyncHTTPClient's `HTTPClient`, written the way a user of the library
/// would plug AHC in (`ImageManager(loader:)`): AHC's delegate API, the cheapest it has (no
/// `AsyncSequence` of body parts between the event loop and us), streaming the body into one
/// buffer reserved from `Content-Length`, a progress event per body part, the body limit checked
/// on the head and on every part, cancellation through `HTTPClient.Task.cancel()`, and HTTP/2 by
/// ALPN when asked (AHC has no h2c: plain http is always HTTP/1.1).
///
/// For comparison only (issue #30): it lives in the Benchmarks package, which the library's users
/// and CI never build. What it cannot do that ``HTTPImageLoader`` does (a connect-time address
/// policy, pins, h2c...) is in docs/BENCHMARKS.md.
final class AHCImageLoader: ImageLoader {
    enum Version: String { case http1_1 = "1.1", http2 = "2", auto }

    let client: HTTPClient
    let maxBodySize: Int64
    let defaultHeaders: [String: String]
    let resourceTimeout: Duration

    /// - Parameters:
    ///   - trustedCertificatesPEM: certificates trusted besides the system's roots (as
    ///     `webimage --ca-file`).
    ///   - maxConnectionsPerHost: AHC's HTTP/1.1 soft limit per host (ours defaults to 8 as well).
    init(version: Version, trustedCertificatesPEM: String? = nil, maxConnectionsPerHost: Int = 8,
         maxBodySize: Int64 = ImageLoaderDefaults.maxBodySize, headers: [String: String] = ImageLoaderDefaults.headers,
         idleTimeout: Duration = ImageLoaderDefaults.idleTimeout, connectTimeout: Duration = ImageLoaderDefaults.connectTimeout,
         resourceTimeout: Duration = ImageLoaderDefaults.resourceTimeout) throws {
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.minimumTLSVersion = .tlsv12
        if let pem = trustedCertificatesPEM {
            tls.additionalTrustRoots = [.certificates(try NIOSSLCertificate.fromPEMBytes(Array(pem.utf8)))]
        }
        var configuration = HTTPClient.Configuration(
            tlsConfiguration: tls,
            redirectConfiguration: .follow(max: ImageLoaderDefaults.maxRedirects, allowCycles: false),
            timeout: HTTPClient.Configuration.Timeout(connect: .init(connectTimeout), read: .init(idleTimeout)),
            decompression: .disabled)
        configuration.connectionPool = HTTPClient.Configuration.ConnectionPool(
            idleTimeout: .seconds(60), concurrentHTTP1ConnectionsPerHostSoftLimit: maxConnectionsPerHost)
        // AHC speaks HTTP/1.1 only, or HTTP/2 when ALPN agrees on it (https); there is no "h2 only".
        configuration.httpVersion = version == .http1_1 ? .http1Only : .automatic
        // The same event loops as ours (MultiThreadedEventLoopGroup.singleton, one per core).
        client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
        self.maxBodySize = maxBodySize
        self.defaultHeaders = headers
        self.resourceTimeout = resourceTimeout
    }

    func shutdown() async throws { try await client.shutdown() }

    func canLoad(_ url: URL) -> Bool {
        ["http", "https"].contains(url.scheme?.lowercased() ?? "")
    }

    func load(_ request: ImageLoadRequest) -> AsyncThrowingStream<ImageLoadEvent, any Error> {
        let (stream, continuation) = AsyncThrowingStream.makeStream(of: ImageLoadEvent.self)
        let task = start(request, sink: { continuation.yield($0) }) { result in
            switch result {
            case .success: continuation.finish()
            case .failure(let error): continuation.finish(throwing: error)
            }
        }
        continuation.onTermination = { _ in task?.cancel() }
        return stream
    }

    /// Starts `request`: `sink` gets every event (the final one too) on the task's event loop, then
    /// `completion` runs once. Returns `nil` when the request could not be made (completion has run).
    @discardableResult
    func start(_ request: ImageLoadRequest, sink: @escaping @Sendable (ImageLoadEvent) -> Void,
               completion: @escaping @Sendable (Result<Void, WebImageError>) -> Void) -> HTTPClient.Task<ImageLoadEvent>? {
        var headers = HTTPHeaders()
        for (name, value) in defaultHeaders where request.headers[name] == nil { headers.add(name: name, value: value) }
        for (name, value) in request.headers { headers.add(name: name, value: value) }
        if let etag = request.validators?.etag { headers.replaceOrAdd(name: "If-None-Match", value: etag) }
        if let date = request.validators?.lastModified { headers.replaceOrAdd(name: "If-Modified-Since", value: date) }
        let http: HTTPClient.Request
        do {
            http = try HTTPClient.Request(url: request.url, method: .GET, headers: headers)
        } catch {
            completion(.failure(.invalidURL(request.url.absoluteString)))
            return nil
        }
        let delegate = ImageResponseDelegate(url: request.url, maxBodySize: maxBodySize,
                                             wantsPartialData: request.wantsPartialData, sink: sink)
        let deadline = NIODeadline.now() + TimeAmount(request.resourceTimeout ?? resourceTimeout)
        let task = client.execute(request: http, delegate: delegate, deadline: deadline)
        task.futureResult.whenComplete { result in
            switch result {
            case .success(let final):
                sink(final)
                completion(.success(()))
            case .failure(let error):
                completion(.failure(Self.webImageError(error)))
            }
        }
        return task
    }

    /// AHC's errors as the library's.
    static func webImageError(_ error: any Error) -> WebImageError {
        if let error = error as? WebImageError { return error }
        if let error = error as? HTTPClientError {
            switch error {
            case .cancelled: return .cancelled
            case .readTimeout, .deadlineExceeded, .connectTimeout, .writeTimeout: return .timedOut
            case .redirectLimitReached, .redirectCycleDetected: return .tooManyRedirects
            default: return .connectionFailed(error.description)
            }
        }
        if error is NIOSSLError || error is BoringSSLError { return .untrustedCertificate(String(describing: error)) }
        return .connectionFailed(String(describing: error))
    }
}

extension TimeAmount {
    init(_ duration: Duration) {
        let (seconds, attoseconds) = duration.components
        self = .nanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
    }
}

/// One load's response handling. AHC calls every method on the task's event loop, one after the
/// other, so the state needs no lock.
private final class ImageResponseDelegate: HTTPClientResponseDelegate, @unchecked Sendable {
    typealias Response = ImageLoadEvent

    private var url: URL
    private let maxBodySize: Int64
    private let wantsPartialData: Bool
    private let sink: @Sendable (ImageLoadEvent) -> Void
    private var response: ImageLoadResponse?
    private var notModified = false
    private var data = Data()
    private var received: Int64 = 0

    init(url: URL, maxBodySize: Int64, wantsPartialData: Bool, sink: @escaping @Sendable (ImageLoadEvent) -> Void) {
        self.url = url
        self.maxBodySize = maxBodySize
        self.wantsPartialData = wantsPartialData
        self.sink = sink
    }

    func didVisitURL(task: HTTPClient.Task<ImageLoadEvent>, _ request: HTTPClient.Request, _ head: HTTPResponseHead) {
        url = request.url
    }

    func didReceiveHead(task: HTTPClient.Task<ImageLoadEvent>, _ head: HTTPResponseHead) -> EventLoopFuture<Void> {
        let status = Int(head.status.code)
        var headers: [String: String] = [:]
        for (name, value) in head.headers {
            let key = name.lowercased()
            headers[key] = headers[key].map { "\($0), \(value)" } ?? value
        }
        let expected = headers["content-length"].flatMap { Int64($0) }
        let response = ImageLoadResponse(url: url, statusCode: status, headers: headers, expectedContentLength: expected)
        self.response = response
        if status == 304 {
            notModified = true
            return task.eventLoop.makeSucceededVoidFuture()
        }
        guard (200..<300).contains(status) else {
            return task.eventLoop.makeFailedFuture(WebImageError.httpStatus(status))
        }
        if let expected {
            guard expected <= maxBodySize else {
                return task.eventLoop.makeFailedFuture(WebImageError.tooLarge("Content-Length \(expected) exceeds \(maxBodySize) bytes"))
            }
            if expected > 0 { data.reserveCapacity(Int(expected)) }
        }
        sink(.response(response))
        return task.eventLoop.makeSucceededVoidFuture()
    }

    func didReceiveBodyPart(task: HTTPClient.Task<ImageLoadEvent>, _ buffer: ByteBuffer) -> EventLoopFuture<Void> {
        guard !notModified else { return task.eventLoop.makeSucceededVoidFuture() }
        received += Int64(buffer.readableBytes)
        guard received <= maxBodySize else {
            return task.eventLoop.makeFailedFuture(WebImageError.tooLarge("body exceeds \(maxBodySize) bytes"))
        }
        buffer.withUnsafeReadableBytes { data.append(contentsOf: $0) }
        sink(.progress(received: received, expected: response?.expectedContentLength))
        if wantsPartialData { sink(.partialData(data)) }
        return task.eventLoop.makeSucceededVoidFuture()
    }

    func didReceiveError(task: HTTPClient.Task<ImageLoadEvent>, _ error: any Error) {}

    func didFinishRequest(task: HTTPClient.Task<ImageLoadEvent>) throws -> ImageLoadEvent {
        guard let response else { throw WebImageError.connectionFailed("no response") }
        if notModified { return .notModified(response) }
        if let expected = response.expectedContentLength, expected != received {
            throw WebImageError.truncatedData("\(received) of \(expected) bytes")
        }
        return .completed(data, response)
    }
}
