import Foundation
import Testing
import WebImageDemo
import WebImageTestSupport
@testable import WebImage

/// A root of files with a way out of it for every trick: a link to a file outside, a link to a
/// directory outside, a FIFO, a directory; and a file outside the root no load may ever return.
final class HostileLocalRoot: Sendable {
    let base: TemporaryDirectory
    let root: URL
    /// The file outside the root.
    let secret = Data("outside the root".utf8)
    let photo: Data

    init() throws {
        base = try TemporaryDirectory()
        root = base.url.appendingPathComponent("root", isDirectory: true)
        let outside = base.url.appendingPathComponent("outside", isDirectory: true)
        let files = FileManager.default
        try files.createDirectory(at: root.appendingPathComponent("sub/deeper"), withIntermediateDirectories: true)
        try files.createDirectory(at: outside, withIntermediateDirectories: true)
        photo = try SampleImages.encoded(.png, width: 12, height: 8)
        try photo.write(to: root.appendingPathComponent("a.png"))
        try photo.write(to: root.appendingPathComponent("sub/deeper/b image.png"))
        try secret.write(to: outside.appendingPathComponent("secret.png"))
        try files.createSymbolicLink(atPath: root.appendingPathComponent("inside-link.png").path, withDestinationPath: "sub/deeper/b image.png")
        try files.createSymbolicLink(atPath: root.appendingPathComponent("out-link.png").path, withDestinationPath: "../outside/secret.png")
        try files.createSymbolicLink(atPath: root.appendingPathComponent("absolute-link.png").path,
                                     withDestinationPath: outside.appendingPathComponent("secret.png").path)
        try files.createSymbolicLink(atPath: root.appendingPathComponent("dir-link").path, withDestinationPath: outside.path)
        try files.createSymbolicLink(atPath: root.appendingPathComponent("root-link").path, withDestinationPath: root.path)
        #expect(mkfifo(root.appendingPathComponent("fifo.png").path, 0o600) == 0)
    }

    /// Paths that lead out of the root, or could, each refused before anything is opened or read.
    static let escapes = [
        "local:///../outside/secret.png", "local:///sub/../../outside/secret.png", "local:///sub/%2e%2e/%2e%2e/outside/secret.png",
        "local:///sub/%2E%2E/%2e%2E/outside/secret.png", "local:///sub%2f..%2f..%2foutside/secret.png",
        "local:///%2e%2e%2foutside%2fsecret.png", "local:///sub/..%5c..%5coutside/secret.png", "local:///./a.png",
        "local:///out-link.png", "local:///absolute-link.png", "local:///dir-link/secret.png", "local:///root-link",
        "local:///a.png%00.jpg", "local://outside/secret.png", "local:///", "local://user@/a.png",
    ]

    /// The escapes that are links: only resolving the path shows they lead out.
    static let linksOut = ["local:///out-link.png", "local:///absolute-link.png", "local:///dir-link/secret.png", "local:///root-link"]

    /// Paths inside the root that are no regular file: refused after a non-blocking open, never read.
    static let notFiles = ["local:///fifo.png", "local:///sub", "local:///missing.png", "local:///sub/deeper/"]
}

@Suite("local:///PATH inside a root", .timeLimit(.minutes(1)))
struct LocalRootTests {
    private func downloader(root: URL?) -> ImageDownloader {
        var configuration = ImageDownloaderConfiguration()
        configuration.localRoot = root?.path
        return ImageDownloader(configuration: configuration)
    }

    @Test func filesInsideTheRootLoadLinksInsideItToo() async throws {
        let files = try HostileLocalRoot()
        let downloader = downloader(root: files.root)
        for url in ["local:///a.png", "local:///sub/deeper/b%20image.png", "local:///inside-link.png", "local:////sub//deeper/b%20image.png"] {
            let outcome = await collect(downloader.load(ImageLoadRequest(url: try #require(URL(string: url)))))
            #expect(outcome.data == files.photo, "\(url): \(String(describing: outcome.error))")
            #expect(outcome.completedResponse?.mimeType == "image/png", "\(url)")
        }
    }

    @Test func pathsOutOfTheRootAreRejectedAndNothingElseIsRead() async throws {
        let files = try HostileLocalRoot()
        let downloader = downloader(root: files.root)
        for text in HostileLocalRoot.escapes {
            guard let url = URL(string: text) else { continue }  // never loaded at all
            let outcome = await collect(downloader.load(ImageLoadRequest(url: url)))
            #expect(outcome.data == nil, "\(text)")
            guard case .rejected = outcome.error else {
                Issue.record("\(text): expected rejected, got \(String(describing: outcome.error))")
                continue
            }
        }
        // A FIFO is opened without waiting for a writer (the time limit would end a hang), a
        // directory or a missing file is no regular file: each a file-system error.
        for text in HostileLocalRoot.notFiles {
            let outcome = await collect(downloader.load(ImageLoadRequest(url: try #require(URL(string: text)))))
            #expect(outcome.data == nil, "\(text)")
            guard case .fileSystem(let message) = outcome.error else {
                Issue.record("\(text): expected fileSystem, got \(String(describing: outcome.error))")
                continue
            }
            #expect(!message.contains(files.base.url.path), "the root's place is not told: \(message)")
        }
    }

    @Test func withoutARootLocalURLsAreNotLoaded() async throws {
        let downloader = downloader(root: nil)
        let url = try #require(URL(string: "local:///a.png"))
        #expect(!downloader.canLoad(url))
        #expect(await collect(downloader.load(ImageLoadRequest(url: url))).error == .invalidURL(url.absoluteString))
        #expect(self.downloader(root: URL(fileURLWithPath: "/tmp")).canLoad(url))
    }

    @Test func theManagerLoadsThroughTheDownloadersLocalLoader() async throws {
        let files = try HostileLocalRoot()
        let cacheDirectory = try TemporaryDirectory()
        let cache = ImageCache(memoryCache: MemoryCache(costLimit: 8 << 20),
                               diskCache: DiskCache(configuration: DiskCacheConfiguration(directory: cacheDirectory.url)))
        let manager = ImageManager(cache: cache, loader: downloader(root: files.root))
        let result = try await manager.loadImage(with: try #require(URL(string: "local:///sub/deeper/b%20image.png")))
        #expect(result.image.width == 12 && result.image.height == 8)
        await #expect(throws: WebImageError.self) {
            try await manager.loadImage(with: try #require(URL(string: "local:///out-link.png")))
        }
    }
}
