import Foundation
import Testing
import WebImageTestSupport
@testable import WebImage

/// A target with every hook: it records images, transitions, progress and players, and owns an
/// indicator that records its calls.
@MainActor
final class HookedTarget: AnimatedImageTarget {
    private(set) var shown: [String] = []
    private(set) var transitions: [ImageTransition?] = []
    private(set) var progress: [ImageLoadProgress] = []
    private(set) var players: [AnimatedImagePlayer?] = []
    let indicator = RecordingIndicator()
    var imageTransition: ImageTransition?
    var imageIndicator: (any ImageActivityIndicator)? { indicator }

    func setImage(_ image: DecodedImage?) { setImage(image, transition: nil) }
    func setImage(_ image: DecodedImage?, transition: ImageTransition?) {
        shown.append(image.map { "\($0.width)x\($0.height)" } ?? "nil")
        transitions.append(transition)
    }
    func imageProgressDidChange(_ progress: ImageLoadProgress) { self.progress.append(progress) }
    func setAnimationPlayer(_ player: AnimatedImagePlayer?) { players.append(player) }
}

@MainActor
final class RecordingIndicator: ImageActivityIndicator {
    private(set) var calls: [String] = []
    func startAnimatingIndicator() { calls.append("start") }
    func stopAnimatingIndicator() { calls.append("stop") }
    func updateIndicatorProgress(_ fraction: Double) { if calls.last != "progress" { calls.append("progress") } }
}

/// Hands out a marker partial image (1 pixel high, as wide as the bytes so far in KiB) for
/// every update, so a test sees partial images reach a target whatever the real coders can do
/// incrementally; decodes with the built-in coders.
final class MarkerPartialCoder: ImageCoder {
    private let real = ImageCodersManager(coders: ImageCodersManager.defaultCoders)
    func canDecode(_ data: Data) -> Bool { real.canDecode(data) }
    func decode(_ data: Data, options: DecodeOptions) throws -> DecodedImage { try real.decode(data, options: options) }
    func makeIncrementalDecoder(for format: ImageFormat, options: DecodeOptions) -> (any IncrementalImageDecoder)? { Marker() }

    final class Marker: IncrementalImageDecoder {
        func update(with data: Data, isComplete: Bool) throws -> DecodedImage? {
            DecodedImage(bitmap: try Bitmap(width: max(1, data.count / 1024), height: 1, filledWith: (9, 9, 9, 255)), hasAlpha: false)
        }
    }
}

@Suite("Image binding hooks", .timeLimit(.minutes(1)))
struct ImageBindingHooksTests {
    @MainActor @Test func aFailedLoadShowsTheFailureImage() async throws {
        try await withServer { server in
            let fixture = try ManagerFixture()
            let binding = ImageBinding()
            let target = HookedTarget()
            let failure = await bindingLoad(target, server.url("/missing.jpg"), failureImage: blackSquare(3), binding: binding, manager: fixture.manager)
            #expect(throws: WebImageError.httpStatus(404)) { try failure.get() }
            #expect(target.shown == ["2x2", "3x3"])
            let avoiding = HookedTarget()
            _ = await bindingLoad(avoiding, server.url("/missing.jpg"), failureImage: blackSquare(3), options: [.avoidAutoSetImage, .retryFailed],
                           binding: binding, manager: fixture.manager)
            #expect(avoiding.shown == ["2x2"], "avoidAutoSetImage leaves the failure to the completion")
            let nilURL = HookedTarget()
            _ = await bindingLoad(nilURL, nil, failureImage: blackSquare(3), binding: binding, manager: fixture.manager)
            #expect(nilURL.shown == ["2x2", "3x3"])
        }
    }

    @MainActor @Test func theTransitionComesWithLoadedImagesNotMemoryHits() async throws {
        try await withServer { server in
            server.route("/t.jpg", .image(try sampleJPEG(width: 30, height: 20), contentType: "image/jpeg"))
            let fixture = try ManagerFixture()
            let binding = ImageBinding()
            let target = HookedTarget()
            target.imageTransition = .fade(duration: 0.3)
            _ = await bindingLoad(target, server.url("/t.jpg"), options: .waitStoreCache, binding: binding, manager: fixture.manager)
            #expect(target.shown == ["2x2", "30x20"])
            #expect(target.transitions == [nil, ImageTransition(kind: .fade, duration: 0.3)])
            _ = await bindingLoad(target, server.url("/t.jpg"), binding: binding, manager: fixture.manager)
            #expect(target.shown.last == "30x20")
            #expect(target.transitions.last == .some(nil), "a memory hit shows at once")
        }
    }

    @MainActor @Test func theIndicatorRunsAroundEveryLoad() async throws {
        try await withServer { server in
            let gate = LoopbackGate()
            server.route("/slow.jpg", LoopbackResponse(body: .bytes(try sampleJPEG(width: 50, height: 50)), gate: gate))
            server.route("/i.jpg", .image(try sampleJPEG(width: 30, height: 20), contentType: "image/jpeg"))
            let fixture = try ManagerFixture()
            let binding = ImageBinding()
            let target = HookedTarget()
            _ = await bindingLoad(target, server.url("/i.jpg"), binding: binding, manager: fixture.manager)
            #expect(target.indicator.calls.first == "start" && target.indicator.calls.last == "stop")
            #expect(target.indicator.calls.filter { $0 != "progress" } == ["start", "stop"])
            // Replaced and failed loads stop it too.
            binding.setImage(on: target, with: server.url("/slow.jpg"), manager: fixture.manager)
            await server.waitForRequests(1, path: "/slow.jpg")
            _ = await bindingLoad(target, server.url("/missing.jpg"), binding: binding, manager: fixture.manager)
            gate.open()
            #expect(target.indicator.calls.filter { $0 != "progress" } == ["start", "stop", "start", "stop", "start", "stop"])
        }
    }

    @MainActor @Test func theTargetFollowsTheProgress() async throws {
        try await withServer { server in
            let jpeg = try sampleJPEG(width: 300, height: 200)
            server.route("/p.jpg", LoopbackResponse(headers: ["Content-Type": "image/jpeg"], body: .bytes(jpeg),
                                                    drip: (chunkSize: 1024, interval: .milliseconds(1))))
            let fixture = try ManagerFixture()
            let binding = ImageBinding()
            let target = HookedTarget()
            #expect(binding.progress(on: target) == nil)
            _ = await bindingLoad(target, server.url("/p.jpg"), binding: binding, manager: fixture.manager)
            let received = target.progress.map(\.received)
            #expect(received.first == 0)
            #expect(received == received.sorted(), "progress only grows")
            #expect(target.progress.dropLast().contains { ($0.fractionCompleted ?? 0) > 0 && ($0.fractionCompleted ?? 1) < 1 })
            let final = try #require(binding.progress(on: target))
            #expect(final.isFinished && final.fractionCompleted == 1 && final.received == Int64(jpeg.count))
        }
    }

    @MainActor @Test func partialImagesReachTheTargetAndARebindCancelsThem() async throws {
        try await withServer { server in
            let jpeg = try sampleJPEG(width: 800, height: 600, seed: 3)
            #expect(jpeg.count > 40_000)
            let gate = LoopbackGate()
            server.route("/progressive.jpg", LoopbackResponse(headers: ["Content-Type": "image/jpeg"], body: .bytes(jpeg),
                                                              gate: gate, gatePoint: .afterBodyBytes(jpeg.count / 2)))
            server.route("/other.jpg", .image(try sampleJPEG(width: 30, height: 20), contentType: "image/jpeg"))
            let directory = try TemporaryDirectory()
            let coders = ImageCodersManager(coders: [MarkerPartialCoder()])
            let manager = ImageManager(cache: ImageCache(diskCache: DiskCache(configuration: DiskCacheConfiguration(directory: directory.url)),
                                                         coders: coders, memoryPressure: nil),
                                       loader: ImageDownloader(configuration: ImageDownloaderConfiguration(timeout: .seconds(5))), coders: coders)
            let binding = ImageBinding()
            let target = HookedTarget()
            let old = binding.setImage(on: target, with: server.url("/progressive.jpg"), placeholder: blackSquare(2),
                                       options: .progressiveLoad, manager: manager)
            // Polls the main-actor target until the condition holds (bounded), as `waitUntil` does.
            let deadline = ContinuousClock.now + .seconds(10)
            while !target.shown.contains(where: { $0.hasSuffix("x1") }), ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(1))
            }
            #expect(target.shown.contains { $0.hasSuffix("x1") }, "a partial image shows")
            let partials = target.shown.filter { $0.hasSuffix("x1") }.count
            _ = await bindingLoad(target, server.url("/other.jpg"), binding: binding, manager: manager)
            #expect(old?.isCancelled == true)
            gate.open()
            _ = try? await old?.result
            #expect(target.shown.filter { $0.hasSuffix("x1") }.count == partials, "no partial after the rebind")
            #expect(target.shown.last == "30x20")
            #expect(!target.shown.contains("800x600"))
        }
    }

    @MainActor @Test func animationsGetAPlayerThatARebindStops() async throws {
        try await withServer { server in
            let apng = try AnimationSamples.movingSquareAPNG(width: 80, height: 60, frames: 10)
            server.route("/a.png", .image(apng, contentType: "image/png"))
            server.route("/still.jpg", .image(try sampleJPEG(width: 30, height: 20), contentType: "image/jpeg"))
            let directory = try TemporaryDirectory()
            let manager = ImageManager(cache: ImageCache(diskCache: DiskCache(configuration: DiskCacheConfiguration(directory: directory.url)),
                                                         memoryPressure: nil),
                                       loader: ImageDownloader(configuration: ImageDownloaderConfiguration(timeout: .seconds(5))))
            let binding = ImageBinding()
            let target = HookedTarget()
            let result = try await bindingLoad(target, server.url("/a.png"), binding: binding, manager: manager).get()
            let animation = try #require(result.image.animation, "an animated result is a lazy animation")
            #expect(animation.frameCount == 10)
            let player = try #require(target.players.last ?? nil)
            #expect(player.animation === animation && player.isPlaying)
            #expect(binding.animationPlayer(on: target) === player)
            _ = await bindingLoad(target, server.url("/still.jpg"), binding: binding, manager: manager)
            #expect(!player.isPlaying, "the old animation stopped")
            #expect(target.players.count == 2 && target.players.last! == nil)
            #expect(binding.animationPlayer(on: target) == nil)
            #expect(target.shown.last == "30x20")
        }
    }
}
