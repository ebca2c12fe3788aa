import Foundation
import Testing
import WebImageTestSupport
@testable import WebImage

/// `webimage load --progressive --json` read the way a script reads it: one JSON line per partial
/// image, exactly `url`, `event`, `width`, `height`, `bytesReceived` and `ms`, all before the
/// load's own record, which stays the normal one.
@Suite("webimage load --progressive", .enabled(if: CrashSafetyTests.binary != nil, "the webimage binary is not built"),
       .serialized, .timeLimit(.minutes(2)))
struct LoadProgressiveCLITests {
    @Test func partialLinesComeBeforeTheLoadsRecord() async throws {
        let jpeg = try ProgressiveSamples.progressiveJPEG(width: 640, height: 480)
        try await withServer { server in
            server.route("/p.jpg", LoopbackResponse.image(jpeg, contentType: "image/jpeg").throttled(bytesPerSecond: 200_000))
            let url = server.url("/p.jpg").absoluteString
            let run = try await runCLI(["load", url, "--progressive", "--json", "--no-cache"])
            #expect(run.status == 0, "\(run.stderr)")
            let lines = try LoadJSONContractTests.records(run)
            let record = try #require(lines.last)
            LoadJSONContractTests.checkCommonFields(record, url: url)
            #expect(record["status"] as? String == "ok" && record["width"] as? Int == 640 && record["height"] as? Int == 480)
            #expect(record["event"] == nil, "the load's record is the normal one")
            let partials = lines.dropLast()
            #expect(partials.count >= 2, "\(run.stdout)")
            var previous: (bytes: Int, ms: Double) = (0, 0)
            for partial in partials {
                #expect(Set(partial.keys) == ["url", "event", "width", "height", "bytesReceived", "ms"], "exactly the contract's keys: \(partial)")
                #expect(partial["url"] as? String == url)
                #expect(partial["event"] as? String == "partial")
                #expect(partial["width"] as? Int == 640 && partial["height"] as? Int == 480)
                let bytes = try #require(partial["bytesReceived"] as? Int)
                let ms = try #require((partial["ms"] as? NSNumber)?.doubleValue)
                #expect(bytes > 0 && bytes <= jpeg.count && bytes >= previous.bytes)
                #expect(ms >= previous.ms)
                previous = (bytes, ms)
            }
            #expect(try #require(partials.first?["bytesReceived"] as? Int) < jpeg.count / 2)

            let plain = try await runCLI(["load", url, "--json", "--no-cache"])
            let plainRecords = try LoadJSONContractTests.records(plain)
            #expect(plainRecords.count == 1, "no partial lines without --progressive")
            #expect(plainRecords.first?["rgbaSHA256"] as? String == record["rgbaSHA256"] as? String, "the same final image")
        }
    }
}
