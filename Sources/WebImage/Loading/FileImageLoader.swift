#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Synchronization

/// Loads file URLs, or `local:///PATH` URLs inside a ``LocalRoot``, in slots of the process's blocking-I/O budget
/// (never on the caller's thread), with progress.
package struct FileImageLoader: ImageLoader {
    /// `file:` URLs as they are, or `local:` URLs inside a root.
    package var root: LocalRoot?
    /// Files larger than this fail with ``WebImageError/tooLarge(_:)``.
    package var maxBodySize: Int64
    /// How many bytes are read between progress events.
    package var chunkSize: Int

    /// Creates a file loader.
    package init(maxBodySize: Int64 = ImageLoaderDefaults.maxBodySize, chunkSize: Int = 256 * 1024, root: LocalRoot? = nil) {
        self.root = root
        self.maxBodySize = maxBodySize
        self.chunkSize = max(1, chunkSize)
    }

    /// Whether `url` is a file URL (a `local:` URL for a loader with a root).
    package func canLoad(_ url: URL) -> Bool { root == nil ? url.isFileURL : LocalRoot.isLocal(url) }

    /// Starts reading; terminating the stream stops the read between chunks.
    package func load(_ request: ImageLoadRequest) -> AsyncThrowingStream<ImageLoadEvent, any Error> {
        let (stream, continuation) = AsyncThrowingStream.makeStream(of: ImageLoadEvent.self)
        let url = request.url
        let (maxBodySize, chunkSize, partial, root) = (maxBodySize, chunkSize, request.wantsPartialData, root)
        let stop = DecodeCancellation()
        continuation.onTermination = { _ in stop.cancel() }
        Task {
            do {
                guard root == nil ? url.isFileURL : LocalRoot.isLocal(url) else { throw WebImageError.invalidURL(url.absoluteString) }
                // Blocking reads take a slot of the process's I/O budget, as the disk cache's do.
                try await runBlockingIO {
                    let file = try root.map { try $0.open(url) } ?? OpenFile(path: url.path)
                    try Self.read(file, url: url, maxBodySize: maxBodySize, chunkSize: chunkSize, partial: partial,
                                  stop: stop, continuation: continuation)
                }
                continuation.finish()
            } catch {
                continuation.finish(throwing: Self.map(error))
            }
        }
        return stream
    }

    private static func read(_ file: OpenFile, url: URL, maxBodySize: Int64, chunkSize: Int, partial: Bool, stop: DecodeCancellation,
                             continuation: AsyncThrowingStream<ImageLoadEvent, any Error>.Continuation) throws {
        let size = try file.size()
        if size > maxBodySize { throw WebImageError.tooLarge("file of \(size) bytes exceeds \(maxBodySize)") }
        var headers = ["content-length": String(size), "etag": try file.entityTag()]
        if let type = Self.mimeType(forExtension: url.pathExtension) { headers["content-type"] = type }
        let response = ImageLoadResponse(url: url, statusCode: nil, headers: headers, expectedContentLength: size)
        continuation.yield(.response(response))
        var data = Data()
        data.reserveCapacity(Int(size))
        var partialData = PartialDataThrottle()
        // One buffer for every chunk, appended from its raw bytes.
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: chunkSize, alignment: 1)
        defer { buffer.deallocate() }
        while true {
            if stop.isCancelled { throw WebImageError.cancelled }
            let count = try file.read(into: buffer)
            if count == 0 { break }
            data.append(contentsOf: UnsafeRawBufferPointer(rebasing: buffer[..<count]))
            if Int64(data.count) > maxBodySize { throw WebImageError.tooLarge("file exceeds \(maxBodySize) bytes") }
            continuation.yield(.progress(received: Int64(data.count), expected: size))
            if partial, partialData.shouldDeliver(count: data.count) { continuation.yield(.partialData(data)) }
        }
        if data.isEmpty { throw WebImageError.emptyData }
        continuation.yield(.completed(data, response))
    }

    private static func map(_ error: any Error) -> WebImageError {
        if let error = error as? WebImageError { return error }
        if error is CancellationError { return .cancelled }
        return .fileSystem(String(describing: error))
    }

    /// The content type for common image file extensions.
    static func mimeType(forExtension ext: String) -> String? {
        switch ext.lowercased() {
        case "jpg", "jpeg": "image/jpeg"
        case "png": "image/png"
        case "gif": "image/gif"
        case "webp": "image/webp"
        default: nil
        }
    }
}
