import Foundation
import Testing
@testable import WebImage

/// `webimage decode --json` reports AVIF, HEIC and JPEG XL files with their format names.
@Suite(.enabled(if: CrashSafetyTests.binary != nil, "the webimage binary is not built"),
       .enabled(if: Corpus.isAvailable, Corpus.absentReason), .timeLimit(.minutes(1)))
struct DecodeNewFormatsCLITests {
    @Test(arguments: [("other/libavif/colors-animated-8bpc.avif", "avif", 150, 5),
                      ("other/kingfisher/gradient-10b-displayp3-alpha.heic", "heic", 64, 1),
                      ("other/sdwebimage/TestHDR.jxl", "jxl", 600, 1)])
    func decodeReportsTheFormat(_ name: String, _ format: String, _ width: Int, _ frames: Int) async throws {
        let run = try await runCLI(["decode", try #require(Corpus.url(name)).path, "--json"])
        #expect(run.status == 0, "\(run.stderr)")
        let json = try run.json()
        #expect(json["format"] as? String == format)
        #expect(json["width"] as? Int == width && json["frames"] as? Int == frames)
    }
}
