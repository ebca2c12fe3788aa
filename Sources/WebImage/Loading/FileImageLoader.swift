#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import NIOPosix
import Synchronization

/// Loads file URLs on NIO's blocking thread pool (never on the caller's thread), with progress.
public struct FileImageLoader: ImageLoader {
    /// Files larger than this fail with ``WebImageError/tooLarge(_:)``.
    public var maxBodySize: Int64
    /// How many bytes are read between progress events.
    public var chunkSize: Int

    /// Creates a file loader.
    public init(maxBodySize: Int64 = ImageLoaderDefaults.maxBodySize, chunkSize: Int = 256 * 1024) {
        self.maxBodySize = maxBodySize
        self.chunkSize = max(1, chunkSize)
    }

    /// Whether `url` is a file URL.
    public func canLoad(_ url: URL) -> Bool { url.isFileURL }

    /// Starts reading; terminating the stream stops the read between chunks.
    public func load(_ request: ImageLoadRequest) -> AsyncThrowingStream<ImageLoadEvent, any Error> {
        let (stream, continuation) = AsyncThrowingStream.makeStream(of: ImageLoadEvent.self)
        let url = request.url
        let (maxBodySize, chunkSize, partial) = (maxBodySize, chunkSize, request.wantsPartialData)
        let stop = StopFlag()
        continuation.onTermination = { _ in stop.set() }
        Task {
            do {
                guard url.isFileURL else { throw WebImageError.invalidURL(url.absoluteString) }
                try await NIOThreadPool.singleton.runIfActive {
                    try Self.read(url, maxBodySize: maxBodySize, chunkSize: chunkSize, partial: partial,
                                  stop: stop, continuation: continuation)
                }
                continuation.finish()
            } catch {
                continuation.finish(throwing: Self.map(error))
            }
        }
        return stream
    }

    private static func read(_ url: URL, maxBodySize: Int64, chunkSize: Int, partial: Bool, stop: StopFlag,
                             continuation: AsyncThrowingStream<ImageLoadEvent, any Error>.Continuation) throws {
        let descriptor = open(url.path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw WebImageError.fileSystem("cannot open \(url.path): \(Self.errnoText())") }
        defer { close(descriptor) }
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { throw WebImageError.fileSystem("cannot stat \(url.path): \(Self.errnoText())") }
        let size = Int64(info.st_size)
        if size > maxBodySize { throw WebImageError.tooLarge("file of \(size) bytes exceeds \(maxBodySize)") }
        var headers = ["content-length": String(size)]
        if let type = Self.mimeType(forExtension: url.pathExtension) { headers["content-type"] = type }
        let response = ImageLoadResponse(url: url, statusCode: nil, headers: headers, expectedContentLength: size)
        continuation.yield(.response(response))
        var data = Data()
        data.reserveCapacity(Int(size))
        var partialData = PartialDataThrottle()
        while true {
            if stop.isSet { throw WebImageError.cancelled }
            let chunk = try readChunk(descriptor, count: chunkSize, path: url.path)
            if chunk.isEmpty { break }
            data.append(contentsOf: chunk)
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

    /// Up to `count` bytes from `descriptor`; empty at the end of the file.
    private static func readChunk(_ descriptor: Int32, count: Int, path: String) throws -> [UInt8] {
        var chunk = [UInt8](repeating: 0, count: count)
        while true {
            let got = chunk.withUnsafeMutableBytes { readFile(descriptor, $0.baseAddress, count) }
            if got >= 0 {
                chunk.removeLast(count - got)
                return chunk
            }
            if errno != EINTR { throw WebImageError.fileSystem("cannot read \(path): \(errnoText())") }
        }
    }

    private static func errnoText() -> String { String(cString: strerror(errno)) }

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

/// A one-way flag a consumer sets to stop work running on another thread.
final class StopFlag: Sendable {
    private let flag = Atomic<Bool>(false)
    /// Raises the flag.
    func set() { flag.store(true, ordering: .relaxed) }
    /// Whether the flag was raised.
    var isSet: Bool { flag.load(ordering: .relaxed) }
}

/// The system's `read` (inside ``FileImageLoader`` the name means its own `read(_:maxBodySize:…)`).
private func readFile(_ descriptor: Int32, _ buffer: UnsafeMutableRawPointer?, _ count: Int) -> Int {
    read(descriptor, buffer, count)
}
