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
        let decode = DecodeStageKey(coders: ObjectIdentifier(ImageCodersManager.shared), options: DecodeOptions(), progressive: false,
                                    source: .cache(InstanceIdentity(of: ImageCache.shared), key: "k", memoryImage: false))
        #expect(PipelineStageKey.transform(decode, prefix: ["a"]) == .transform(decode, prefix: ["a"]))
        #expect(PipelineStageKey.transform(decode, prefix: ["a"]) != .transform(decode, prefix: ["a", "b"]))
        #expect(PipelineStageKey.transform(decode, prefix: []) != .decode(decode))
        var thumbnail = decode
        thumbnail.options.maxPixelSize = 100
        #expect(PipelineStageKey.decode(decode) != .decode(thumbnail))
    }
}
