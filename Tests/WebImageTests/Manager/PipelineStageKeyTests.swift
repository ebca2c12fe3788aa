import Foundation
import Testing
@testable import WebImage

/// The pipeline's stages are keyed by typed `Hashable` keys (issue #30), not joined strings.
@Suite("Pipeline stage keys")
struct PipelineStageKeyTests {
    @Test func fetchKeysMatchForTheSameRequestShapeOnly() throws {
        let fixture = try ManagerFixture()
        let url = URL(string: "https://example.com/a.jpg")!
        func key(_ context: ImageLoadContext, _ options: ImageLoadOptions = [], validators: CacheValidators? = nil) -> FetchStageKey {
            PipelineStages.fetchKey(LoadPlan(url: url, options: options, context: context, manager: fixture.manager), validators: validators)
        }
        #expect(key(ImageLoadContext(headers: ["A": "1", "B": "2"])) == key(ImageLoadContext(headers: ["B": "2", "A": "1"])))
        #expect(key(ImageLoadContext()) != key(ImageLoadContext(headers: ["A": "1"])))
        #expect(key(ImageLoadContext()) != key(ImageLoadContext(timeout: .seconds(3))))
        #expect(key(ImageLoadContext()) != key(ImageLoadContext(), .progressiveLoad))
        #expect(key(ImageLoadContext()) != key(ImageLoadContext(), validators: CacheValidators(etag: "\"1\"")))
        #expect(key(ImageLoadContext()) != key(ImageLoadContext(loader: ImageDownloader())), "another loader instance")
        let modified = ImageLoadContext(requestModifier: { $0 })
        #expect(key(modified) != key(modified), "a load with its own modifier shares with no one")
    }

    @Test func transformStagesShareTheirDecodeKeyAndDifferByPrefix() {
        let decode = DecodeStageKey(coders: ObjectIdentifier(ImageCodersManager.shared), options: DecodeOptions(),
                                    source: .cache(InstanceIdentity(of: ImageCache.shared), key: "k", memoryImage: false))
        #expect(PipelineStageKey.transform(decode, prefix: ["a"]) == .transform(decode, prefix: ["a"]))
        #expect(PipelineStageKey.transform(decode, prefix: ["a"]) != .transform(decode, prefix: ["a", "b"]))
        #expect(PipelineStageKey.transform(decode, prefix: []) != .decode(decode))
        var thumbnail = decode
        thumbnail.options.maxPixelSize = 100
        #expect(PipelineStageKey.decode(decode) != .decode(thumbnail))
    }
}
