import Foundation
import Testing
import WebImageTestSupport
@testable import WebImage

/// A target that records what it was asked to show.
@MainActor
final class RecordingTarget: ImageTarget {
    private(set) var shown: [String] = []
    private(set) var image: DecodedImage?

    func setImage(_ image: DecodedImage?) {
        self.image = image
        shown.append(image.map { "\($0.width)x\($0.height)" } ?? "nil")
    }
}

@Suite("Image binding", .timeLimit(.minutes(1)))
struct ImageBindingTests {
    @MainActor @Test func showsThePlaceholderThenTheImage() async throws {
        try await withServer { server in
            server.route("/v.jpg", .image(try sampleJPEG(width: 30, height: 20), contentType: "image/jpeg"))
            let fixture = try ManagerFixture()
            let target = RecordingTarget()
            let result = await bindingLoad(target, server.url("/v.jpg"), binding: ImageBinding(), manager: fixture.manager)
            #expect((try? result.get())?.image.width == 30)
            #expect(target.shown == ["2x2", "30x20"])
        }
    }

    @MainActor @Test func delayPlaceholderShowsItOnlyAfterAFailure() async throws {
        try await withServer { server in
            server.route("/ok.jpg", .image(try sampleJPEG(width: 30, height: 20), contentType: "image/jpeg"))
            let fixture = try ManagerFixture()
            let binding = ImageBinding()
            let target = RecordingTarget()
            _ = await bindingLoad(target, server.url("/ok.jpg"), options: .delayPlaceholder, binding: binding, manager: fixture.manager)
            #expect(target.shown == ["30x20"])
            let failing = RecordingTarget()
            let failure = await bindingLoad(failing, server.url("/missing.jpg"), options: .delayPlaceholder, binding: binding, manager: fixture.manager)
            #expect(throws: WebImageError.httpStatus(404)) { try failure.get() }
            #expect(failing.shown == ["2x2"])
            let nilURL = RecordingTarget()
            _ = await bindingLoad(nilURL, nil, options: .delayPlaceholder, binding: binding, manager: fixture.manager)
            #expect(nilURL.shown == ["2x2"])
        }
    }

    @MainActor @Test func avoidAutoSetImageLeavesTheTargetToTheCompletion() async throws {
        try await withServer { server in
            server.route("/a.jpg", .image(try sampleJPEG(width: 30, height: 20), contentType: "image/jpeg"))
            let fixture = try ManagerFixture()
            let target = RecordingTarget()
            let result = await bindingLoad(target, server.url("/a.jpg"), options: .avoidAutoSetImage, binding: ImageBinding(), manager: fixture.manager)
            #expect((try? result.get())?.image.height == 20)
            #expect(target.shown == ["2x2"], "only the placeholder; the image went to the completion")
        }
    }

    @MainActor @Test func aNewLoadOnTheSameTargetCancelsTheOldOne() async throws {
        try await withServer { server in
            let gate = LoopbackGate()
            server.route("/old.jpg", LoopbackResponse(body: .bytes(try sampleJPEG(width: 50, height: 50)), gate: gate))
            server.route("/new.jpg", .image(try sampleJPEG(width: 30, height: 20), contentType: "image/jpeg"))
            let fixture = try ManagerFixture()
            let binding = ImageBinding()
            let target = RecordingTarget()
            var oldCompleted = false
            let old = binding.setImage(on: target, with: server.url("/old.jpg"), manager: fixture.manager, completion: { _ in oldCompleted = true })
            await server.waitForRequests(1, path: "/old.jpg")
            _ = await bindingLoad(target, server.url("/new.jpg"), binding: binding, manager: fixture.manager)
            #expect(old?.isCancelled == true)
            await server.waitForAborted(1, path: "/old.jpg")
            gate.open()
            _ = try? await old?.result
            #expect(!oldCompleted, "a replaced load never calls back")
            #expect(target.image?.width == 30)
            #expect(binding.runningTask(on: target) == nil)
        }
    }

    @MainActor @Test func operationKeysAreIndependentAndCancellable() async throws {
        try await withServer { server in
            let gate = LoopbackGate()
            server.route("/bg.jpg", LoopbackResponse(body: .bytes(try sampleJPEG(width: 50, height: 50)), gate: gate))
            server.route("/fg.jpg", .image(try sampleJPEG(width: 30, height: 20), contentType: "image/jpeg"))
            let fixture = try ManagerFixture()
            let binding = ImageBinding()
            let target = RecordingTarget()
            let background = binding.setImage(on: target, with: server.url("/bg.jpg"), operationKey: "background", manager: fixture.manager)
            _ = await bindingLoad(target, server.url("/fg.jpg"), binding: binding, manager: fixture.manager)
            #expect(background?.isCancelled == false, "another key is another operation")
            #expect(binding.runningTask(on: target, operationKey: "background") === background)
            binding.cancelImageLoad(on: target, operationKey: "background")
            #expect(background?.isCancelled == true)
            gate.open()
        }
    }
}
