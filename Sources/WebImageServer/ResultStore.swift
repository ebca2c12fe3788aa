#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Logging
import WebImage

/// Rendered outputs shared by a fleet (`--result-store s3://BUCKET/PREFIX`, thumbor's result
/// storage): looked up after the instance's own caches miss and before it renders; written
/// behind every render, so another instance, or this one restarted, answers the same request
/// without fetching or rendering.
///
/// Keyed as the output cache is (source URL, options, format chosen), hashed:
/// `PREFIX/<sha256 of the key>`. The object carries the output's `Content-Type` and its ETag
/// (`x-amz-meta-webimage-etag`). The store is trusted as far as the operator's bucket is:
/// an object whose type is not an image type the service sends, or whose ETag is not one the
/// service makes, is a miss; so is any failure to read (the render goes on). Reads and writes
/// go through the service's downloader, over its S3 connections (the configured endpoint only,
/// no redirect).
final class ResultStore: ImageDataCache.SharedStore {
    /// `s3://BUCKET/PREFIX` (no trailing slash), as objects are named under it.
    let location: String
    private let downloader: ImageDownloader
    private let writes = BackgroundWrites()
    private let logger: Logger

    /// The metadata header the ETag travels in.
    static let etagHeader = "x-amz-meta-webimage-etag"

    /// - Parameter location: `s3://BUCKET` or `s3://BUCKET/PREFIX`.
    /// - Throws: ``ServiceError`` 400 when it is not.
    init(location: String, downloader: ImageDownloader, logger: Logger) throws {
        self.location = try Self.validated(location)
        self.downloader = downloader
        self.logger = logger
    }

    /// `location` without its trailing slashes, or a 400 naming what is wrong with it.
    static func validated(_ location: String) throws -> String {
        var trimmed = Substring(location)
        while trimmed.hasSuffix("/") { trimmed = trimmed.dropLast() }
        guard let url = URL(string: String(trimmed)), S3Configuration.isS3(url) else {
            throw ServiceError.badParameter("result-store must be s3://BUCKET/PREFIX: \(location)")
        }
        do {
            // A bucket and a prefix are valid when an object under them is addressable.
            _ = try S3Configuration.object(of: URL(string: String(trimmed) + "/x") ?? url)
        } catch {
            throw ServiceError.badParameter("result-store: \(error)")
        }
        return String(trimmed)
    }

    /// The object an output key is stored under.
    func objectURL(forKey key: String) -> URL? {
        URL(string: "\(location)/\(SHA256.hex(of: Array(key.utf8)))")
    }

    /// The output stored under `key`, or `nil` (absent, unreadable, or not what the service stores).
    func value(forKey key: String) async -> EncodedImage? {
        guard let url = objectURL(forKey: key) else { return nil }
        let result = await withCheckedContinuation { (continuation: CheckedContinuation<Result<DownloadOutcome, WebImageError>, Never>) in
            _ = downloader.download(ImageLoadRequest(url: url), options: DownloadOptions(reportsProgress: false),
                                    progress: nil) { continuation.resume(returning: $0) }
        }
        switch result {
        case .success(.data(let data, let response)):
            guard let contentType = response.mimeType, Self.contentTypes.contains(contentType),
                  let etag = response.headers[Self.etagHeader], EncodedImage.isSendable(contentType: contentType, etag: etag) else {
                logger.warning("result store: an object that is not a stored output", metadata: ["object": "\(url)"])
                return nil
            }
            return EncodedImage(body: data, contentType: contentType, etag: etag)
        case .failure(.httpStatus(404)), .failure(.httpStatus(403)):
            // 403: S3 answers a missing key with it when the reader may not list the bucket.
            return nil
        case .success(.notModified), .failure:
            if case .failure(let error) = result {
                logger.warning("result store: read failed", metadata: ["object": "\(url)", "error": "\(error)"])
            }
            return nil
        }
    }

    /// Writes `image` under `key` in the background: a failed write costs another instance a render, nothing more.
    func store(_ image: EncodedImage, forKey key: String) {
        guard let url = objectURL(forKey: key) else { return }
        let downloader = downloader, logger = logger
        writes.run {
            do {
                _ = try await downloader.put(image.body, to: url,
                                             headers: ["content-type": image.contentType, Self.etagHeader: image.etag])
            } catch {
                logger.warning("result store: write failed", metadata: ["object": "\(url)", "error": "\(error)"])
            }
        }
    }

    /// Waits for the writes under way (on shutdown, so the fleet gets them).
    func waitForPendingStores() async {
        await writes.waitForAll()
    }

    /// The types the service sends (``RequestedFormat``'s outputs).
    static let contentTypes: Set<String> = ["image/jpeg", "image/png", "image/webp", "image/avif", "image/gif", "image/jxl"]
}
