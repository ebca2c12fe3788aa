import Foundation
import Testing
import WebImageTestSupport
@testable import WebImage

/// ``ImageManager/encodedImage(for:)``: the encode stage and the data tier, over a loopback
/// origin, with the library's own rendering.
@Suite("ImageManager encoded loads", .timeLimit(.minutes(1)))
struct EncodedLoadTests {
    static let thumbnail = TransformAndEncode(transformers: [ResizeTransformer(width: 32, height: 32, mode: .fill)],
                                              format: .png)

    @Test func aThumbnailAsBytesComesFromTheOriginThenFromMemoryThenFromDisk() async throws {
        try await withServer { server in
            server.route("/a.jpg", .image(try sampleJPEG(width: 200, height: 100), contentType: "image/jpeg"))
            let fixture = try ManagerFixture()
            let request = ImageRequest(url: server.url("/a.jpg"), rendering: Self.thumbnail)
            let first = try await fixture.manager.encodedImage(for: request)
            #expect(first.origin == .rendered)
            #expect(first.image.contentType == "image/png")
            let decoded = try ImageCodersManager.shared.decode(first.image.body, options: DecodeOptions())
            #expect(decoded.width == 32 && decoded.height == 32)
            let again = try await fixture.manager.encodedImage(for: request)
            #expect(again.origin == .memory)
            #expect(again.image == first.image)
            await fixture.manager.waitForPendingStores()
            // Another manager over the same disk: the output is read back, not rendered.
            let restarted = ImageManager(cache: fixture.cache, loader: fixture.downloader, coders: .shared)
            let fromDisk = try await restarted.encodedImage(for: request)
            #expect(fromDisk.origin == .disk)
            #expect(fromDisk.image == first.image)
            #expect(server.requestCount(for: "/a.jpg") == 1)
        }
    }

    @Test func concurrentRequestsShareOneRenderAndOutputsOfOneSourceOneFetch() async throws {
        try await withServer { server in
            let gate = LoopbackGate()
            server.route("/b.jpg", LoopbackResponse(body: .bytes(try sampleJPEG(width: 120, height: 90)), gate: gate))
            let fixture = try ManagerFixture()
            let url = server.url("/b.jpg")
            let small = ImageRequest(url: url, rendering: Self.thumbnail)
            let other = ImageRequest(url: url, rendering: TransformAndEncode(format: .jpeg))
            let loads = (0..<4).map { index in
                Task { try await fixture.manager.encodedImage(for: index == 3 ? other : small) }
            }
            await server.waitForRequests(1, path: "/b.jpg")
            gate.open()
            var origins: [ImageManager.EncodedResult.Origin] = []
            for load in loads { origins.append(try await load.value.origin) }
            #expect(server.requestCount(for: "/b.jpg") == 1)
            // The three of one output: one render, two joined (or a memory hit, for one that came late).
            #expect(origins.prefix(3).filter { $0 == .rendered }.count == 1)
            #expect(origins.prefix(3).allSatisfy { [.rendered, .joined, .memory].contains($0) })
            #expect(origins[3] == .rendered)
        }
    }

    @Test func theRemoteTierAnswersBeforeARenderAndIsWrittenAfterOne() async throws {
        try await withServer { server in
            server.route("/c.jpg", .image(try sampleJPEG(), contentType: "image/jpeg"))
            let fixture = try ManagerFixture()
            let store = MemoryStore()
            let manager = ImageManager(cache: fixture.cache, loader: fixture.downloader, coders: .shared,
                                       dataCache: ImageDataCache(memoryBytes: 1 << 20, disk: nil), remoteStore: store)
            let request = ImageRequest(url: server.url("/c.jpg"), rendering: Self.thumbnail)
            let rendered = try await manager.encodedImage(for: request)
            #expect(rendered.origin == .rendered)
            #expect(store.count == 1)
            let other = ImageManager(cache: fixture.cache, loader: fixture.downloader, coders: .shared,
                                     dataCache: ImageDataCache(memoryBytes: 1 << 20, disk: nil), remoteStore: store)
            let shared = try await other.encodedImage(for: request)
            #expect(shared.origin == .remote)
            #expect(shared.image == rendered.image)
            #expect(server.requestCount(for: "/c.jpg") == 1)
        }
    }

    @Test func aManagerForEncodedLoadsOnlyKeepsNoDecodedImages() async throws {
        try await withServer { server in
            server.route("/e.jpg", .image(try sampleJPEG(), contentType: "image/jpeg"))
            let directory = try TemporaryDirectory()
            let manager = ImageManager(dataCache: ImageDataCache(memoryBytes: 1 << 20, directory: directory.url),
                                       loader: ImageDownloader(configuration: ImageDownloaderConfiguration(timeout: .seconds(5))))
            let url = server.url("/e.jpg")
            let decoded = try await manager.loadImage(with: url)
            #expect(decoded.image.width == 64)
            #expect(await manager.cachedImageExists(for: url) == false)
            // A decoded load keeps nothing: the next one fetches again; an encoded one is kept.
            _ = try await manager.loadImage(with: url)
            #expect(server.requestCount(for: "/e.jpg") == 2)
            let encoded = try await manager.encodedImage(for: ImageRequest(url: url, rendering: Self.thumbnail))
            #expect(encoded.origin == .rendered)
            #expect(try await manager.encodedImage(for: ImageRequest(url: url, rendering: Self.thumbnail)).origin == .memory)
        }
    }

    @Test func callersThatJoinARemoteHitAreToldTheyJoined() async throws {
        try await withServer { server in
            server.route("/f.jpg", .image(try sampleJPEG(), contentType: "image/jpeg"))
            let fixture = try ManagerFixture()
            let url = server.url("/f.jpg")
            let rendered = try await fixture.manager.encodedImage(for: ImageRequest(url: url, rendering: Self.thumbnail))
            let gate = LoopbackGate()
            let store = MemoryStore(gate: gate)
            store.store(rendered.image, forKey: Self.thumbnail.outputKey(sourceKey: url.absoluteString))
            let manager = ImageManager(dataCache: ImageDataCache(memoryBytes: 1 << 20, disk: nil), remoteStore: store,
                                       loader: fixture.downloader)
            let loads = (0..<3).map { _ in Task { try await manager.encodedImage(for: ImageRequest(url: url, rendering: Self.thumbnail)) } }
            // Every load joined the stage before the store answers: the three share one.
            let key = PipelineStageKey.encode(EncodeStageKey(dataCache: ObjectIdentifier(manager.dataCache),
                                                             outputKey: Self.thumbnail.outputKey(sourceKey: url.absoluteString)))
            await waitUntil("the three loads joined one stage") {
                manager.stages.pool.waiterCount(key: key, of: ImageManager.EncodedResult.self) == 3
            }
            gate.open()
            var origins: [ImageManager.EncodedResult.Origin] = []
            for load in loads { origins.append(try await load.value.origin) }
            #expect(origins.filter { $0 == .remote }.count == 1, "\(origins)")
            #expect(origins.filter { $0 == .joined }.count == 2, "\(origins)")
        }
    }

    /// A cache directory may hold anything: an output entry whose ETag or type would put a line
    /// break into a response is a miss, rendered again.
    @Test func aDiskEntryThatCouldNotBeSentIsAMiss() async throws {
        try await withServer { server in
            server.route("/g.jpg", .image(try sampleJPEG(), contentType: "image/jpeg"))
            let directory = try TemporaryDirectory()
            let url = server.url("/g.jpg")
            let key = Self.thumbnail.outputKey(sourceKey: url.absoluteString)
            let disk = DiskCache(configuration: DiskCacheConfiguration(directory: directory.url))
            for (type, etag) in [("image/png", "\"a\"\r\nSet-Cookie: x=1"), ("image/png\r\nX: y", "\"a\""), ("image/png", "unquoted")] {
                try disk.storeSynchronously(Data("planted".utf8), metadata: ImageCacheMetadata(contentType: type, etag: etag), forKey: key)
                let manager = ImageManager(dataCache: ImageDataCache(memoryBytes: 1 << 20, disk: disk),
                                           loader: ImageDownloader(configuration: ImageDownloaderConfiguration(timeout: .seconds(5))))
                let result = try await manager.encodedImage(for: ImageRequest(url: url, rendering: Self.thumbnail))
                #expect(result.origin == .rendered, "\(type) \(etag)")
                #expect(result.image.body != Data("planted".utf8))
                await manager.waitForPendingStores()
            }
            #expect(EncodedImage.isSendable(contentType: "image/webp", etag: "\"sha256:ab\""))
        }
    }

    @Test func theStageLimitsRefuseWhatTheyMust() async throws {
        try await withServer { server in
            server.route("/d.jpg", .image(try sampleJPEG(width: 100, height: 100), contentType: "image/jpeg"))
            let gate = LoopbackGate()
            server.route("/slow.jpg", LoopbackResponse(body: .bytes(try sampleJPEG()), gate: gate))
            // No admission slot: refused at once.
            let closed = try ManagerFixture(manager: ImageManagerConfiguration(encodeStage: .init(maxAdmitted: 0)))
            await #expect(throws: WebImageError.overloaded) {
                try await closed.manager.encodedImage(for: ImageRequest(url: server.url("/d.jpg"), rendering: Self.thumbnail))
            }
            // A render larger than the whole memory budget: too large, before it decodes.
            let small = try ManagerFixture(manager: ImageManagerConfiguration(encodeStage: .init(memoryBudget: 1_000)))
            let error = await #expect(throws: WebImageError.self) {
                try await small.manager.encodedImage(for: ImageRequest(url: server.url("/d.jpg"), rendering: Self.thumbnail))
            }
            #expect(error?.code == "tooLarge")
            // Past the deadline (the source never comes): the waiter hears at once, and the hook ran first.
            let deadlines = Counter()
            let timed = try ManagerFixture(manager: ImageManagerConfiguration(
                encodeStage: .init(deadline: .milliseconds(200), onDeadline: { deadlines.increment() })))
            await #expect(throws: WebImageError.deadlineExceeded(.milliseconds(200))) {
                try await timed.manager.encodedImage(for: ImageRequest(url: server.url("/slow.jpg"), rendering: Self.thumbnail))
            }
            #expect(deadlines.count == 1)
            gate.open()
        }
    }
}

/// A shared store in memory: the remote tier's contract, without S3 (the service's
/// `ResultStore` over moto's S3 server has its own suite).
private final class MemoryStore: ImageDataCache.SharedStore {
    private let stored = Locked<[String: EncodedImage]>([:])
    /// Reads wait for it, when given.
    let gate: LoopbackGate?
    init(gate: LoopbackGate? = nil) { self.gate = gate }
    var count: Int { stored.withLock { $0.count } }
    func value(forKey key: String) async -> EncodedImage? {
        await gate?.wait()
        return stored.withLock { $0[key] }
    }

    func store(_ image: EncodedImage, forKey key: String) { stored.withLock { $0[key] = image } }
    func waitForPendingStores() async {}
}
