import Foundation

/// Where the tests find a reference tool's Python (thumbor, imgproxy's URL builder):
/// the environment variable's path, else the virtualenv `scripts/test.sh` makes under `.build/`.
enum ReferenceVirtualenv {
    /// The package's root directory (this file is `Tests/WebImageTests/Support/...`).
    static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()

    /// The first executable of `$variable` and `.build/DIRECTORY/bin/python`, or `nil`.
    static func python(variable: String, directory: String) -> String? {
        let candidates: [String?] = [ProcessInfo.processInfo.environment[variable],
                                     packageRoot.appendingPathComponent(".build/\(directory)/bin/python").path]
        return candidates.compactMap { $0 }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }
}
