import Foundation
import Testing
import WebImage

/// The release number lives in one place (`WebImageVersion.current`); what users read it from
/// (`webimage --version`, the changelog's top entry) must say the same.
@Suite("Version agreement")
struct VersionAgreementTests {
    static let root = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The version of `CHANGELOG.md`'s first released entry (`## [X.Y.Z] - DATE`), passing over
    /// `## [Unreleased]`.
    static func changelogVersion() throws -> String? {
        let text = try String(contentsOf: root.appendingPathComponent("CHANGELOG.md"), encoding: .utf8)
        for line in text.split(separator: "\n") where line.hasPrefix("## [") {
            let name = line.dropFirst(4).prefix { $0 != "]" }
            if name.lowercased() != "unreleased" { return String(name) }
        }
        return nil
    }

    @Test func theVersionIsSemanticPreOne() throws {
        let parts = WebImageVersion.current.split(separator: ".", omittingEmptySubsequences: false)
        #expect(parts.count == 3 && parts.allSatisfy { !$0.isEmpty && $0.allSatisfy(\.isNumber) }, "\(WebImageVersion.current)")
        #expect(parts.first == "0", "pre-1.0 until the API is declared stable")
    }

    @Test func theChangelogsTopEntryIsThisVersion() throws {
        let top = try #require(try Self.changelogVersion(), "CHANGELOG.md has no released entry")
        #expect(top == WebImageVersion.current)
        let text = try String(contentsOf: Self.root.appendingPathComponent("CHANGELOG.md"), encoding: .utf8)
        #expect(text.contains("\n[\(WebImageVersion.current)]: "), "the entry's link to its tag is missing")
    }

    @Test(.enabled(if: CrashSafetyTests.binary != nil, "the webimage binary is not built"))
    func theCLIPrintsTheSameVersion() async throws {
        let run = try await runCLI(["--version"])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == WebImageVersion.current)
        #expect(try Self.changelogVersion() == run.stdout.trimmingCharacters(in: .whitespacesAndNewlines))
    }
}
