#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import WebImage

/// `--signing-key-file FILE`: signing keys one a line, so they stay out of the process's
/// arguments (which every local user can read) and can be rotated by editing one file.
///
/// Spaces and tabs around a line are not part of its key (nor a CR of a CRLF file); blank lines
/// and lines starting with `#` are ignored. The keys are never printed, not even in an error.
enum SigningKeyFile {
    /// The keys in the file at `path`.
    /// - Throws: ``ServiceError`` when it cannot be read or holds no key.
    static func keys(in path: String) throws -> [String] {
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw ServiceError.badParameter("signing-key-file \(path) cannot be read")
        }
        let keys = keys(inText: String(decoding: data, as: UTF8.self))
        guard !keys.isEmpty else { throw ServiceError.badParameter("signing-key-file \(path) holds no key") }
        return keys
    }

    /// The keys in a file's text.
    static func keys(inText text: String) -> [String] {
        text.split(omittingEmptySubsequences: true) { $0 == "\n" || $0 == "\r\n" || $0 == "\r" }
            .map { $0.trimmingSpacesAndTabs }
            .filter { !$0.isEmpty && !$0.hasPrefix("#") }
    }
}
