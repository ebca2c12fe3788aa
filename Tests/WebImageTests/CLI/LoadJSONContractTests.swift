import Foundation
import Testing
import WebImageTestSupport
@testable import WebImage

/// `webimage load --json` read the way a script reads it: every stdout line is one JSON object
/// with the contract's fields, and nothing else is on stdout.
@Suite("webimage load --json contract", .enabled(if: CrashSafetyTests.binary != nil, "the webimage binary is not built"),
       .serialized, .timeLimit(.minutes(2)))
struct LoadJSONContractTests {
    /// Every stdout line parsed as a JSON object; a line that is not one fails the test.
    static func records(_ run: CLIRun) throws -> [[String: Any]] {
        try run.stdout.split(separator: "\n", omittingEmptySubsequences: false).dropLast().map { line in
            let object = try JSONSerialization.jsonObject(with: Data(line.utf8))
            return try #require(object as? [String: Any], "not a JSON object: \(line)")
        }
    }

    /// The fields every record has, of the contract's types.
    static func checkCommonFields(_ record: [String: Any], url: String) {
        #expect(record["url"] as? String == url)
        #expect(["ok", "error"].contains(record["status"] as? String))
        #expect(["none", "memory", "disk"].contains(record["cacheType"] as? String))
        #expect((record["ms"] as? NSNumber).map { $0.doubleValue >= 0 } == true, "ms is a number: \(record)")
        for key in ["format", "width", "height", "frames", "bytes", "rgbaSHA256"] {
            #expect(record.keys.contains(key), "\(key) is present in \(record)")
        }
    }

    static func checkFailure(_ record: [String: Any], url: String, code: String, transient: Bool) throws {
        checkCommonFields(record, url: url)
        #expect(record["status"] as? String == "error")
        #expect(record["cacheType"] as? String == "none")
        let error = try #require(record["error"] as? [String: Any], "error is an object: \(record)")
        #expect(error["code"] as? String == code)
        #expect((error["message"] as? String)?.isEmpty == false)
        #expect(error["transient"] as? Bool == transient)
        for key in ["format", "width", "height", "frames", "bytes", "rgbaSHA256"] {
            #expect(record[key] is NSNull, "\(key) is null on a failed load")
        }
    }

    @Test func okRecordsHaveEveryFieldAndTheSummaryGoesToStderr() async throws {
        try await withServer { server in
            let jpeg = try sampleJPEG(width: 90, height: 60)
            server.route("/a.jpg", .image(jpeg, contentType: "image/jpeg"))
            let url = server.url("/a.jpg").absoluteString
            let directory = try TemporaryDirectory()
            let file = directory.url.appendingPathComponent("a.jpg")
            try jpeg.write(to: file)
            let decoded = try await runCLI(["decode", file.path, "--json"])
            let expectedHash = try #require(try decoded.json()["rgbaSHA256"] as? String)

            let run = try await runCLI(["load", url, "--cache-dir", directory.url.path, "--json", "--passes", "2"])
            #expect(run.status == 0, "\(run.stderr)")
            let records = try Self.records(run)
            #expect(records.count == 2, "one line per load and nothing else: \(run.stdout)")
            for (index, record) in records.enumerated() {
                Self.checkCommonFields(record, url: url)
                #expect(record["status"] as? String == "ok")
                #expect(record["cacheType"] as? String == (index == 0 ? "none" : "memory"))
                #expect(record["format"] as? String == "jpeg")
                #expect(record["width"] as? Int == 90 && record["height"] as? Int == 60)
                #expect(record["frames"] as? Int == 1)
                #expect(record["bytes"] as? Int == jpeg.count, "the original data's size, memory hits too")
                #expect(record["rgbaSHA256"] as? String == expectedHash, "the same hash as decode --json")
                #expect(record["error"] == nil)
                #expect(record["pass"] as? Int == index + 1)
            }
            #expect(run.stderr.contains("pass 1: 1 loaded (network 1, disk 0, memory 0)"))
            #expect(run.stderr.contains("pass 2: 1 loaded (network 0, disk 0, memory 1)"))

            let warm = try await runCLI(["load", url, "--cache-dir", directory.url.path, "--json"])
            let warmRecord = try #require(try Self.records(warm).first)
            #expect(warmRecord["cacheType"] as? String == "disk" && warmRecord["bytes"] as? Int == jpeg.count)

            let summaries = try await runCLI(["load", url, url, "--cache-dir", directory.url.path, "--json", "--summary-only"])
            let summary = try #require(try Self.records(summaries).first)
            #expect(try Self.records(summaries).count == 1, "only the pass summary")
            #expect(summary["loaded"] as? Int == 2 && summary["failed"] as? Int == 0)
            // Both from the cache: disk, or memory when the other load stored it there first.
            let counts = try #require(summary["cacheTypes"] as? [String: Int])
            #expect(counts["none"] == 0 && counts["disk"].map { $0 >= 1 } == true && (counts["disk"] ?? 0) + (counts["memory"] ?? 0) == 2)
        }
    }

    @Test func failedRecordsCarryATypedError() async throws {
        try await withServer { server in
            server.route("/missing.jpg", .status(404))
            server.route("/busy.jpg", .status(503))
            server.route("/slow.jpg", LoopbackResponse(headers: ["Content-Type": "image/jpeg"], body: .bytes(try sampleJPEG()),
                                                       delayBeforeHead: .seconds(60)))
            // A JPEG signature followed by a marker no JPEG has: libjpeg's fatal "unsupported marker".
            var corrupt = try sampleJPEG(width: 64, height: 48)
            corrupt.replaceSubrange(3..<600, with: Data(repeating: 0x5A, count: 597))
            server.route("/corrupt.jpg", .image(corrupt, contentType: "image/jpeg"))
            server.route("/text.jpg", .image(Data("<html>not an image</html>".utf8), contentType: "image/jpeg"))
            let urls = ["/missing.jpg", "/busy.jpg", "/slow.jpg", "/corrupt.jpg", "/text.jpg"].map { server.url($0).absoluteString }
            // An idle timeout the other loads never come near, even with the whole suite running on two cores.
            let run = try await runCLI(["load"] + urls + ["--no-cache", "--json", "--timeout", "2"])
            #expect(run.status == 1)
            let records = try Self.records(run)
            #expect(records.count == urls.count, "\(run.stdout)")
            guard records.count == urls.count else { return }
            try Self.checkFailure(records[0], url: urls[0], code: "httpStatus", transient: false)
            try Self.checkFailure(records[1], url: urls[1], code: "httpStatus", transient: true)
            try Self.checkFailure(records[2], url: urls[2], code: "timedOut", transient: true)
            try Self.checkFailure(records[3], url: urls[3], code: "corruptData", transient: false)
            try Self.checkFailure(records[4], url: urls[4], code: "unsupportedFormat", transient: false)
            #expect(run.stderr.contains("0 loaded"), "the summary is on stderr")
        }
    }
}
