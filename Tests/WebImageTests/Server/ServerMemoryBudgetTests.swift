#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Testing
import WebImage
@testable import WebImageServer
import WebImageTestSupport

/// The memory budget: renders are admitted by an estimate read from the source's header before
/// anything is decoded, wait when it does not fit, and are refused (413) when it never could.
@Suite("webimage serve: memory budget")
struct ServerMemoryBudgetTests {
    /// A `width` × `height` JPEG of one colour: the size of a photo, quick to make and to decode.
    static func plainJPEG(width: Int, height: Int) throws -> Data {
        let image = DecodedImage(bitmap: try Bitmap(width: width, height: height, filledWith: (90, 140, 200, 255)), hasAlpha: false)
        return try ImageCodersManager.shared.encode(image, format: .jpeg, options: EncodeOptions(quality: 0.8))
    }

    @Test func declaredSizesOfTheHeadersTheEstimateReads() throws {
        let coders = ImageCodersManager.shared
        let bitmap = try Bitmap(width: 300, height: 200, filledWith: (1, 2, 3, 255))
        let image = DecodedImage(bitmap: bitmap, hasAlpha: false)
        for (format, options) in [(ImageFormat.jpeg, EncodeOptions()), (.png, EncodeOptions()),
                                  (.webp, EncodeOptions()), (.webp, EncodeOptions(lossless: true))] {
            let data = try coders.encode(image, format: format, options: options)
            let size = try #require(FormatDetection.declaredSize(of: data), "\(format) \(options.lossless)")
            #expect(size.width == 300 && size.height == 200, "\(format) \(options.lossless)")
        }
        let gif = Data("GIF89a".utf8) + Data([0x2C, 0x01, 0xC8, 0x00, 0x00, 0x00, 0x00])
        #expect(FormatDetection.declaredSize(of: gif).map { [$0.width, $0.height] } == [300, 200])
        let animated = try #require(FormatDetection.declaredSize(of: ServerTestImages.animation))
        #expect(animated.width == 40 && animated.height == 20)
        #expect(FormatDetection.declaredSize(of: Data([0xFF, 0xD8, 0xFF, 0xC0, 0x00])) == nil)
        #expect(FormatDetection.declaredSize(of: Data("not an image".utf8)) == nil)
    }

    @Test func estimateCountsTheBitmapTheResizeAndTheOutput() throws {
        let source = try Self.plainJPEG(width: 400, height: 300)
        let full = try ImageParameters(query: "url=http%3A%2F%2Fa.example%2Fa.jpg&format=jpeg")
        #expect(RenderEstimate.bytes(source: source, parameters: full, choice: .jpeg, animationByteLimit: 1 << 20)
                == source.count + 4 * 120_000 + 2 * 120_000)
        let small = try ImageParameters(query: "url=http%3A%2F%2Fa.example%2Fa.jpg&w=100&h=100&format=jpeg")
        #expect(RenderEstimate.bytes(source: source, parameters: small, choice: .jpeg, animationByteLimit: 1 << 20)
                == source.count + 4 * 120_000 + 6 * 10_000)
        // An animation kept animated as GIF may hold every frame the decode keeps.
        let animation = ServerTestImages.animation
        let gif = try ImageParameters(query: "url=http%3A%2F%2Fa.example%2Fa.webp&format=gif")
        #expect(RenderEstimate.bytes(source: animation, parameters: gif, choice: .gif, animationByteLimit: 1 << 20)
                == animation.count + 6 * 800 + (1 << 20))
        // As WebP its frames stream: the lazy decoder's snapshot beside its canvas, not the frames
        // (and at most four output frames, the encoder's canvases).
        let webp = try ImageParameters(query: "url=http%3A%2F%2Fa.example%2Fa.webp&format=webp")
        #expect(RenderEstimate.bytes(source: animation, parameters: webp, choice: .webp, animationByteLimit: 1 << 20)
                == animation.count + 10 * 800)
        #expect(RenderEstimate.bytes(source: animation, parameters: webp, choice: .webp, animationByteLimit: 1 << 20, frames: 150)
                == animation.count + 8 * 800 + 2 * 800 * RenderEstimate.streamedFramesHeld)
        #expect(RenderEstimate.bytes(source: Data("?".utf8), parameters: full, choice: .jpeg, animationByteLimit: 0) == nil)
    }

    @Test func aRenderThatDoesNotFitWaitsFirstComeFirstServed() async throws {
        let budget = MemoryBudget(capacity: 100)
        try await budget.acquire(60)
        let order = Locked<[String]>([])
        let large = Task {
            try await budget.acquire(70)
            order.withLock { $0.append("large") }
        }
        while budget.waiting < 1 { await Task.yield() }
        // 30 bytes would fit beside the 60 taken, but the large one came first.
        let small = Task {
            try await budget.acquire(30)
            order.withLock { $0.append("small") }
        }
        while budget.waiting < 2 { await Task.yield() }
        #expect(order.withLock { $0 }.isEmpty && budget.inUse == 60)
        budget.release(60)
        try await large.value
        try await small.value
        #expect(order.withLock { $0 } == ["large", "small"] && budget.inUse == 100)
        budget.release(70)
        budget.release(30)
        #expect(budget.inUse == 0)
        await #expect(throws: WebImageError.self) { try await budget.acquire(101) }
    }

    @Test func aSourceThatCouldNeverFitTheBudgetIs413() async throws {
        let server = try await ServerHarness.start { configuration, _ in configuration.memoryBudgetBytes = 32 << 20 }
        // 24 MiB of the 32 are for renders: 3000 × 2000 needs 24 MB of bitmap and 12 MB of output.
        server.origin.route("/big.jpg", .image(try Self.plainJPEG(width: 3000, height: 2000), contentType: "image/jpeg"))
        server.origin.route("/fits.jpg", .image(try Self.plainJPEG(width: 1500, height: 1000), contentType: "image/jpeg"))
        let refused = try await server.get("url=" + server.source("/big.jpg") + "&format=jpeg")
        #expect(refused.status == 413)
        #expect(String(decoding: refused.body, as: UTF8.self).contains("\"sourceTooLarge\""))
        #expect(try await server.get("url=" + server.source("/fits.jpg") + "&format=jpeg").status == 200)
        try await server.stop()
    }
}

/// `webimage serve` as a process under 64 concurrent requests for distinct 12 MP sources: its
/// peak RSS (VmHWM) stays within the budget above its baseline.
@Suite("webimage serve: peak RSS under the memory budget",
       .enabled(if: ServeInstance.isAvailable, "the webimage binary is not built"),
       .enabled(if: FileManager.default.fileExists(atPath: "/proc/self/status"), "no /proc (not Linux)"),
       .timeLimit(.minutes(5)))
struct ServerPeakMemoryTests {
    /// A field of /proc/PID/status, in bytes.
    static func status(_ field: String, pid: Int32) throws -> Int {
        let text = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
        let line = try #require(text.split(separator: "\n").first { $0.hasPrefix(field + ":") })
        let fields = line.split { $0 == " " || $0 == "\t" }
        let kilobytes = try #require(fields.count >= 2 ? Int(fields[1]) : nil, "\(line)")
        return kilobytes * 1024
    }

    @Test func peakRSSUnder64ConcurrentLargeSourcesStaysWithinTheBudget() async throws {
        // 96 MiB: 24 for the memory cache, 72 for renders, one full-size 12 MP render at a time
        // (its estimate is 72 MB); without the budget two render at once (one per core here) and
        // the peak was 125 MiB over the baseline, with it 77-80 MiB (2 cores, loaded machine).
        let budgetMiB = 96
        // Besides the budget: up to 64 fetched sources waiting for their turn (64 × 0.1 MB here),
        // thread stacks and the allocator's slack.
        let marginMiB = 16
        let origin = try await LoopbackServer.start()
        let large = try ServerMemoryBudgetTests.plainJPEG(width: 4000, height: 3000)
        for index in 0..<64 { origin.route("/large-\(index).jpg", .image(large, contentType: "image/jpeg")) }
        origin.route("/warm.jpg", .image(ServerTestImages.photo, contentType: "image/jpeg"))
        let instance = try await ServeInstance.start(["--allow-source", "127.0.0.1:\(origin.port)",
                                                      "--memory-budget-mib", "\(budgetMiB)"])
        func query(_ path: String) -> String {
            "/image?url=" + (origin.url(path).absoluteString.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "") + "&format=jpeg"
        }
        // The baseline: started, codecs loaded, one render done.
        #expect(try await ServerTestClient.send(port: instance.port, query("/warm.jpg")).status == 200)
        let pid = instance.child.process.processIdentifier
        let baseline = try Self.status("VmRSS", pid: pid)

        let statuses = try await withThrowingTaskGroup(of: Int.self, returning: [Int].self) { group in
            for index in 0..<64 {
                group.addTask { try await ServerTestClient.send(port: instance.port, query("/large-\(index).jpg")).status }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        let peak = try Self.status("VmHWM", pid: pid)
        await instance.stop()
        try await origin.shutdown()
        #expect(statuses.allSatisfy { $0 == 200 }, "\(statuses)")
        let mib = { (bytes: Int) in Double(bytes) / Double(1 << 20) }
        print("peak RSS under 64 concurrent 12 MP renders: \(Int(mib(peak))) MiB (baseline \(Int(mib(baseline))) MiB, +\(Int(mib(peak - baseline))) MiB; budget \(budgetMiB) MiB)")
        #expect(peak - baseline <= (budgetMiB + marginMiB) << 20,
                "peak \(mib(peak)) MiB over baseline \(mib(baseline)) MiB: more than the budget \(budgetMiB) + \(marginMiB) MiB")
    }
}
