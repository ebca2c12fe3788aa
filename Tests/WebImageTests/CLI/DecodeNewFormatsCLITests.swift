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

    /// libheif, libavif and libjxl are opened on first use: a process without them starts, and a
    /// decode that needs one fails with a typed error naming why (here: turned off by
    /// WEBIMAGE_DISABLED_CODECS), not a crash; the other codecs work on.
    @Test(arguments: [("other/libavif/colors-animated-8bpc.avif", "AVIF: libavif"),
                      ("other/kingfisher/gradient-10b-displayp3-alpha.heic", "HEIF: libheif"),
                      ("other/sdwebimage/TestHDR.jxl", "JPEG XL: libjxl")])
    func aCodecLibraryThatCannotBeOpenedIsATypedError(_ name: String, _ message: String) async throws {
        var environment = ProcessInfo.processInfo.environment
        environment["WEBIMAGE_DISABLED_CODECS"] = "heif, avif,jxl"
        let run = try await runCLI(["decode", try #require(Corpus.url(name)).path, "--json"], environment: environment)
        #expect(run.status == 1, "\(run.stderr)")
        let error = try #require(try run.json()["error"] as? [String: Any])
        #expect(error["code"] as? String == "unsupportedFormat")
        let text = try #require(error["message"] as? String)
        #expect(text.contains("\(message) is not available (disabled by WEBIMAGE_DISABLED_CODECS)"), "\(text)")
        let png = try await runCLI(["decode", try #require(Corpus.url("png/pngsuite/basn0g04.png")).path, "--json"], environment: environment)
        #expect(png.status == 0, "\(png.stderr)")
    }

    /// A library of another version than the build's headers is never called (WebImage reads the
    /// fields of libavif's structs, so a mismatch could read garbage): it is passed over for the
    /// next name, and when no name holds the right version the decode is a typed error.
    @Test(.enabled(if: Self.compiler != nil, "no C compiler (cc or clang) to build the impostor libraries"))
    func aLibraryOfAnotherVersionIsNeverUsed() async throws {
        let directory = try TemporaryDirectory()
        let source = directory.url.appendingPathComponent("impostor.c")
        try Data("""
            const char *avifVersion(void) { return "99.0.0"; }
            unsigned heif_get_version_number(void) { return 99u << 24; }
            """.utf8).write(to: source)
        // libavif: the impostor takes the development name, so the loader goes on to the sonames
        // and finds the system's. libheif: it takes both names, so there is no right one.
        for name in ["libavif.so", "libheif.so.1", "libheif.so"] {
            let built = try await ChildProcess.run(try #require(Self.compiler), ["-shared", "-fPIC", "-o", directory.url.appendingPathComponent(name).path, source.path])
            try #require(built.status == 0, "\(built.stderr)")
        }
        var environment = ProcessInfo.processInfo.environment
        environment["LD_LIBRARY_PATH"] = directory.url.path
        let avif = try await runCLI(["decode", try #require(Corpus.url("other/libavif/colors-animated-8bpc.avif")).path, "--json"],
                                    environment: environment)
        #expect(avif.status == 0, "\(avif.stdout) \(avif.stderr)")
        let heif = try await runCLI(["decode", try #require(Corpus.url("other/kingfisher/gradient-10b-displayp3-alpha.heic")).path, "--json"],
                                    environment: environment)
        #expect(heif.status == 1)
        let error = try #require(try heif.json()["error"] as? [String: Any])
        #expect(error["code"] as? String == "unsupportedFormat")
        #expect((error["message"] as? String)?.contains("is not the version WebImage was built with") == true, "\(error)")
    }

    private static let compiler = ["/usr/bin/cc", "/usr/bin/clang", "/opt/swift/usr/bin/clang"]
        .first { FileManager.default.isExecutableFile(atPath: $0) }
}
