import Foundation
import Testing
import WebImageTestSupport
@testable import WebImage

/// `s3://BUCKET/KEY` through the library: the downloader routes the scheme when
/// ``ImageDownloaderConfiguration/s3`` is set (queued, coalesced, signed as it goes out), so an
/// ``ImageManager`` and `webimage load` read objects from moto's S3 server like any other URL.
@Suite("S3 loads through the manager and the CLI", .enabled(if: MotoS3.available, "python3 with moto[server] and boto3 is not installed"),
       .serialized, .timeLimit(.minutes(2)))
struct S3LoaderTests {
    private let credentials = S3Configuration.Credentials(accessKeyID: "testing", secretAccessKey: "testing")

    @Test func theManagerLoadsAnObjectOnceForConcurrentCallersAndAMissingOneFails() async throws {
        let moto = try await MotoS3.start()
        try await moto.put(bucket: "photos", ["2026/a photo.jpg": try sampleJPEG(width: 90, height: 60)])
        var configuration = ImageDownloaderConfiguration(timeout: .seconds(10))
        configuration.s3 = S3Configuration(endpoint: URL(string: moto.endpoint), credentials: credentials)
        let fixture = try ManagerFixture(downloader: configuration)
        let url = try #require(URL(string: "s3://photos/2026/a%20photo.jpg"))
        #expect(fixture.downloader.canLoad(url))
        let loads = try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<4 { group.addTask { try await fixture.manager.loadImage(with: url, options: [.fromLoaderOnly]).image.width } }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(loads == [90, 90, 90, 90])
        await #expect(throws: WebImageError.httpStatus(404)) {
            try await fixture.manager.loadImage(with: URL(string: "s3://photos/2026/missing.jpg")!, options: [.fromLoaderOnly])
        }
        // Without the setting the scheme is not the downloader's.
        #expect(!ImageDownloader(configuration: ImageDownloaderConfiguration()).canLoad(url))
        await moto.stop()
    }

    @Test func webimageLoadReadsAnS3Object() async throws {
        let moto = try await MotoS3.start()
        try await moto.put(bucket: "photos", ["a.png": try SampleImages.encoded(.png, width: 33, height: 21)])
        let cache = try TemporaryDirectory()
        let run = try await runCLI(["load", "s3://photos/a.png", "--s3-endpoint", moto.endpoint, "--json", "--cache-dir", cache.url.path],
                                   environment: ProcessInfo.processInfo.environment.merging(
                                       ["AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing"]) { _, new in new })
        #expect(run.status == 0, "\(run.stderr)")
        let records = try LoadJSONContractTests.records(run)
        #expect(records.first?["status"] as? String == "ok" && records.first?["width"] as? Int == 33, "\(run.stdout)")
        await moto.stop()
    }
}
