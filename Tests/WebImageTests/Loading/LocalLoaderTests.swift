import Foundation
import Testing
import WebImageTestSupport
import WebImage

@Suite("File and data URL loaders", .timeLimit(.minutes(1)))
struct LocalLoaderTests {
    private func temporaryFile(_ data: Data, ext: String = "png") throws -> URL {
        let url = FileManager.default.temporaryDirectory
            .appendingPathComponent("webimage-loader-\(UUID().uuidString).\(ext)")
        try data.write(to: url)
        return url
    }

    @Test func fileURLLoadsWithProgress() async throws {
        let body = testBytes(700_000)
        let url = try temporaryFile(body)
        defer { try? FileManager.default.removeItem(at: url) }
        let outcome = await collect(FileImageLoader(chunkSize: 100_000).load(ImageLoadRequest(url: url)))
        #expect(outcome.data == body)
        #expect(outcome.progressCount == 7)
        #expect(outcome.responses.first?.mimeType == "image/png")
        #expect(outcome.responses.first?.expectedContentLength == 700_000)
    }

    /// A file's response carries a strong ETag from its status (as a web server's), so the
    /// service keys a local source's outputs without hashing its bytes; a rewrite changes it.
    @Test func fileResponseCarriesAnEntityTagThatChangesWithTheFile() async throws {
        let url = try temporaryFile(testBytes(2_000))
        defer { try? FileManager.default.removeItem(at: url) }
        let first = await collect(FileImageLoader().load(ImageLoadRequest(url: url))).responses.first?.headers["etag"]
        let again = await collect(FileImageLoader().load(ImageLoadRequest(url: url))).responses.first?.headers["etag"]
        let tag = try #require(first)
        #expect(tag.hasPrefix("\"") && tag.hasSuffix("\"") && tag.count > 2)
        #expect(again == tag)
        // Replaced by a file of the same size: another inode, so another tag.
        let replacement = try temporaryFile(testBytes(2_000, seed: 9))
        #expect(rename(replacement.path, url.path) == 0)
        let replaced = await collect(FileImageLoader().load(ImageLoadRequest(url: url))).responses.first?.headers["etag"]
        #expect(replaced != nil && replaced != tag)
    }

    @Test func missingFileIsFileSystemError() async throws {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("webimage-missing-\(UUID().uuidString).png")
        let outcome = await collect(FileImageLoader().load(ImageLoadRequest(url: url)))
        guard case .fileSystem = outcome.error else {
            Issue.record("expected fileSystem, got \(String(describing: outcome.error))")
            return
        }
    }

    @Test func emptyAndOversizedFiles() async throws {
        let empty = try temporaryFile(Data())
        let big = try temporaryFile(testBytes(5_000))
        defer { try? FileManager.default.removeItem(at: empty); try? FileManager.default.removeItem(at: big) }
        #expect(await collect(FileImageLoader().load(ImageLoadRequest(url: empty))).error == .emptyData)
        let outcome = await collect(FileImageLoader(maxBodySize: 1_000).load(ImageLoadRequest(url: big)))
        guard case .tooLarge = outcome.error else {
            Issue.record("expected tooLarge, got \(String(describing: outcome.error))")
            return
        }
    }

    @Test func fileURLThroughTheDownloader() async throws {
        let body = testBytes(1_000)
        let url = try temporaryFile(body, ext: "jpg")
        defer { try? FileManager.default.removeItem(at: url) }
        let downloader = ImageDownloader()
        downloader.suspend()  // file URLs take no queue slot, so suspension does not hold them.
        #expect(downloader.canLoad(url))
        let outcome = await collect(downloader.load(ImageLoadRequest(url: url)))
        #expect(outcome.data == body)
        #expect(outcome.responses.first?.mimeType == "image/jpeg")
    }

    @Test func base64DataURL() async throws {
        let body = testBytes(300)
        let url = try #require(URL(string: "data:image/png;base64," + body.base64EncodedString()))
        let outcome = await collect(DataURLLoader().load(ImageLoadRequest(url: url)))
        #expect(outcome.data == body)
        #expect(outcome.responses.first?.mimeType == "image/png")
        let viaDownloader = await collect(ImageDownloader().load(ImageLoadRequest(url: url)))
        #expect(viaDownloader.data == body)
    }

    @Test func percentEncodedDataURL() async throws {
        let url = try #require(URL(string: "data:image/svg+xml,%3Csvg%20x%3D%221%22%2F%3E%FF"))
        let outcome = await collect(DataURLLoader().load(ImageLoadRequest(url: url)))
        #expect(outcome.data == Data("<svg x=\"1\"/>".utf8) + Data([0xFF]))
        #expect(outcome.responses.first?.mimeType == "image/svg+xml")
    }

    @Test func malformedDataURLs() async throws {
        let badBase64 = try #require(URL(string: "data:image/png;base64,@@@@"))
        guard case .corruptData = await collect(DataURLLoader().load(ImageLoadRequest(url: badBase64))).error else {
            Issue.record("expected corruptData")
            return
        }
        let noComma = try #require(URL(string: "data:image/png;base64"))
        guard case .invalidURL = await collect(DataURLLoader().load(ImageLoadRequest(url: noComma))).error else {
            Issue.record("expected invalidURL")
            return
        }
        let empty = try #require(URL(string: "data:image/png;base64,"))
        #expect(await collect(DataURLLoader().load(ImageLoadRequest(url: empty))).error == .emptyData)
    }
}
