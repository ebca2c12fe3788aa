import Foundation
import Testing
import WebImageTestSupport
@testable import WebImage

/// Animated images through the manager and caches: lazy unless the first frame only is asked
/// for, counted in memory by their buffer budget, transformed frame by frame as frames decode.
@Suite("Animated loads", .timeLimit(.minutes(1)))
struct AnimatedLoadTests {
    private func withManager(_ body: (LoopbackServer, ImageManager, ImageCache) async throws -> Void) async throws {
        let server = try await LoopbackServer.start()
        let directory = try TemporaryDirectory()
        let cache = ImageCache(memoryCache: MemoryCache(costLimit: 1 << 30),
                               diskCache: DiskCache(configuration: DiskCacheConfiguration(directory: directory.url)), memoryPressure: nil)
        let manager = ImageManager(cache: cache, loader: ImageDownloader(configuration: ImageDownloaderConfiguration(timeout: .seconds(5))))
        do {
            try await body(server, manager, cache)
            try await server.shutdown()
        } catch {
            try? await server.shutdown()
            throw error
        }
    }

    @Test func anAnimatedResultIsLazyAndCostsItsBufferBudget() async throws {
        try await withManager { server, manager, cache in
            let apng = try AnimationSamples.movingSquareAPNG(width: 400, height: 300, frames: 120)
            server.route("/a.png", .image(apng, contentType: "image/png"))
            let result = try await manager.loadImage(with: server.url("/a.png"), options: .waitStoreCache)
            let animation = try #require(result.image.animation)
            #expect(animation.frameCount == 120 && result.image.frames.count == 1)
            let frameBytes = 400 * 300 * 4
            #expect(animation.bufferBudget < 120 * frameBytes || animation.bufferBudget <= AnimationBufferBudget.maxDefaultBytes)
            #expect(cache.memoryCache.totalCost == frameBytes + animation.bufferBudget, "the poster and the buffer budget, not 120 frames")
            let memoryHit = try await manager.loadImage(with: server.url("/a.png"))
            #expect(memoryHit.cacheType == .memory && memoryHit.image.animation === animation)

            let first = try await manager.loadImage(with: server.url("/a.png"), options: [.decodeFirstFrameOnly, .fromLoaderOnly])
            #expect(first.image.animation == nil && first.image.frames.count == 1)
        }
    }

    @Test func transformersApplyToEachFrameAsItDecodes() async throws {
        try await withManager { server, manager, _ in
            let apng = try AnimationSamples.movingSquareAPNG(width: 160, height: 100, frames: 10)
            server.route("/t.png", .image(apng, contentType: "image/png"))
            var context = ImageLoadContext()
            context.transformer = ResizeTransformer(width: 80, height: 50, mode: .fill)
            let result = try await manager.loadImage(with: server.url("/t.png"), options: [.transformAnimatedImage, .waitStoreCache],
                                                     context: context)
            let animation = try #require(result.image.animation)
            #expect(result.image.width == 80 && animation.transformers.count == 1)
            #expect(try animation.frame(at: 9).bitmap.width == 80)
            let whole = try ImageCodersManager.shared.decode(apng, options: DecodeOptions())
            let expected = try ResizeTransformer(width: 80, height: 50, mode: .fill).transform(try whole.replacingFrames([whole.frames[9]]))
            #expect(try animation.frame(at: 9).bitmap.canonicalSHA256() == expected.bitmap.canonicalSHA256())
        }
    }
}
