import Foundation
import Testing
@testable import WebImage

/// The pipeline's stages are keyed by typed `Hashable` keys (issue #30), not joined strings.
@Suite("Pipeline stage keys")
struct PipelineStageKeyTests {
    /// Loads of a URL share a decode when the downloader would send the same request (and
    /// decode the same way); the download itself is keyed by the downloader (``DownloadKey``).
    @Test func decodeKeysOfDownloadsMatchForTheSameRequestOnly() throws {
        let fixture = try ManagerFixture()
        let url = URL(string: "https://example.com/a.jpg")!
        func key(_ context: ImageLoadContext, _ options: ImageLoadOptions = [], validators: HTTPLoadRequest.Validators? = nil) throws -> DecodeStageKey {
            let plan = LoadPlan(url: url, options: options, context: context, manager: fixture.manager)
            let download = try plan.download(validators: validators, priority: .normal)
            return PipelineStages.decodeKey(plan, source: .download(download, plan.downloader))
        }
        #expect(try key(ImageLoadContext(headers: ["A": "1", "B": "2"])) == key(ImageLoadContext(headers: ["B": "2", "A": "1"])))
        #expect(try key(ImageLoadContext()) != key(ImageLoadContext(headers: ["A": "1"])))
        #expect(try key(ImageLoadContext()) == key(ImageLoadContext(timeout: .seconds(3))), "a timeout does not change the request's bytes")
        #expect(try key(ImageLoadContext()) != key(ImageLoadContext(), .progressiveLoad))
        #expect(try key(ImageLoadContext()) != key(ImageLoadContext(), validators: HTTPLoadRequest.Validators(etag: "\"1\"")))
        #expect(try key(ImageLoadContext()) != key(ImageLoadContext(loader: ImageDownloader())), "another downloader")
        #expect(try key(ImageLoadContext()) == key(ImageLoadContext(requestModifier: { $0 })), "a modifier that yields the same request")
        #expect(try key(ImageLoadContext()) != key(ImageLoadContext(requestModifier: { var r = $0; r.headers["X"] = "1"; return r })))
        let screened = ImageLoadContext(responseModifier: { _ in true })
        #expect(try key(screened) != key(screened), "a load that screens the response decodes alone")
    }

    @Test func transformStagesShareTheirDecodeKeyAndDifferByPrefix() {
        let decode = Self.decodeKey
        let a = ResizeTransformer(width: 100, height: 100, mode: .fill), b = ImageTransformers.Sharpen(sigma: 1)
        func key(_ steps: [any ImageTransformer]) -> PipelineStageKey { .transform(TransformStageKey(decode: decode, steps: steps)) }
        #expect(key([a]) == key([a]))
        #expect(key([a]) != key([a, b]))
        #expect(key([]) != .decode(decode))
        var thumbnail = decode
        thumbnail.options.maxPixelSize = 100
        #expect(PipelineStageKey.decode(decode) != .decode(thumbnail))
        #expect(PipelineStageKey.transform(TransformStageKey(decode: thumbnail, steps: [a])) != key([a]))
    }

    /// The library's transformers are keyed by their values (every parameter the output depends
    /// on), a transformer of one's own by its identifier unless it gives a `hashableIdentifier`.
    @Test func transformStepsAreKeyedByTheirHashableIdentifiers() {
        func key(_ steps: [any ImageTransformer]) -> TransformStageKey { TransformStageKey(decode: Self.decodeKey, steps: steps) }
        var twoThreads = ResizeTransformer(width: 100, height: 100, mode: .fill)
        twoThreads.resamplesOnTwoThreads = false
        #expect(key([ResizeTransformer(width: 100, height: 100, mode: .fill)]) == key([twoThreads]), "how it runs is not what it makes")
        #expect(key([ResizeTransformer(width: 100, height: 100, mode: .fill)]) != key([ResizeTransformer(width: 100, height: 100, mode: .fill, gravity: .top)]))
        #expect(key([ResizeTransformer(width: 100, height: 100, mode: .fill)]).steps == [.init(identity: ResizeTransformer(width: 100, height: 100, mode: .fill))])
        #expect(key([ResizeTransformer(width: 100, height: 100, mode: .fill)]) != key([Named(identifier: ResizeTransformer(width: 100, height: 100, mode: .fill).identifier, value: 0)]),
                "a value is not its identifier string")
        #expect(key([Named(identifier: "x", value: 1)]) == key([Named(identifier: "x", value: 2)]), "the identifier, by default")
        #expect(key([Named(identifier: "x", value: 1)]) != key([Named(identifier: "y", value: 1)]))
        #expect(key([Valued(identifier: "x", value: 1)]) != key([Valued(identifier: "x", value: 2)]), "its own hashableIdentifier")
        #expect(key([Valued(identifier: "x", value: 1)]) == key([Valued(identifier: "y", value: 1)]))
    }

    /// A transformer of one's own that names itself by its identifier alone.
    private struct Named: ImageTransformer {
        var identifier: String
        var value: Int
        func transform(_ image: DecodedImage) throws -> DecodedImage { image }
    }

    /// One that gives its own `hashableIdentifier`.
    private struct Valued: ImageTransformer {
        var identifier: String
        var value: Int
        var hashableIdentifier: any Hashable & Sendable { value }
        func transform(_ image: DecodedImage) throws -> DecodedImage { image }
    }

    private static var decodeKey: DecodeStageKey {
        DecodeStageKey(coders: ObjectIdentifier(ImageCodersManager.shared), options: DecodeOptions(), progressive: false,
                       source: .cache(InstanceIdentity(of: ImageCache.shared), key: "k", memoryImage: false))
    }

    /// The request's priority is set in one place: setting it overrides the options' flags, and a
    /// load made from the request starts at it.
    @Test func aRequestsPriorityIsSetInOnePlace() throws {
        let fixture = try ManagerFixture()
        var request = ImageRequest(url: URL(string: "https://example.com/a.jpg")!, options: .lowPriority)
        #expect(request.priority == .low)
        request.priority = .high
        #expect(request.priority == .high)
        #expect(request.options.contains(.lowPriority), "the options are left as given")
        let task = fixture.manager.imageTask(with: request)
        task.cancel()
        #expect(task.priority == .high)
    }
}
