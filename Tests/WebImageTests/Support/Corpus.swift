import Foundation
import Testing

/// One file's entry in `../shared/corpus/manifest.json`: what Pillow decoded.
struct CorpusEntry: Decodable, Sendable {
    var bytes: Int
    var format: String?
    var mode: String?
    var width: Int?
    var height: Int?
    var has_alpha: Bool?
    var exif_orientation: Int?
    var rgba_sha256: String?
    var frame_count: Int?
    var loop: Int?
    var frame_durations_ms: [Double?]?
    var frame_sha256: [String]?
    var expect_error: Bool?
    var oracle_unsupported: String?
    var error: String?
    var flags: [String]?

    var expectsError: Bool { expect_error == true }
}

/// The shared test corpus beside the repository (`../shared/corpus`, or `$WEBIMAGE_CORPUS`).
/// It is never copied into the repository; tests that need it are skipped when it is absent.
enum Corpus {
    private struct Manifest: Decodable { var files: [String: CorpusEntry] }

    static let root: URL? = {
        let environment = ProcessInfo.processInfo.environment["WEBIMAGE_CORPUS"]
        let packageRoot = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
        let candidate = environment.map { URL(fileURLWithPath: $0) }
            ?? packageRoot.deletingLastPathComponent().appendingPathComponent("shared/corpus")
        let manifest = candidate.appendingPathComponent("manifest.json")
        return FileManager.default.fileExists(atPath: manifest.path) ? candidate : nil
    }()

    /// Whether the corpus is there; use as `.enabled(if: Corpus.isAvailable, Corpus.absentReason)`.
    static var isAvailable: Bool { root != nil }
    static let absentReason: Comment = "the shared corpus (../shared/corpus/manifest.json) is absent"

    static let entries: [String: CorpusEntry] = {
        guard let root,
              let data = try? Data(contentsOf: root.appendingPathComponent("manifest.json")),
              let manifest = try? JSONDecoder().decode(Manifest.self, from: data)
        else { return [:] }
        return manifest.files
    }()

    /// Relative paths of corpus files, sorted, that pass `filter`.
    static func names(where filter: (String, CorpusEntry) -> Bool = { _, _ in true }) -> [String] {
        entries.filter { filter($0.key, $0.value) }.map(\.key).sorted()
    }

    static func url(_ name: String) -> URL? { root?.appendingPathComponent(name) }

    static func data(_ name: String) throws -> Data {
        guard let url = url(name) else { throw CocoaError(.fileNoSuchFile) }
        return try Data(contentsOf: url)
    }
}
