#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
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
///
/// The file must not be readable by other users nor writable by any but its owner (as `ssh`
/// asks of a private key: `chmod 600`, or 640 for a group that runs the service), and every key
/// must be at least ``minimumKeyBytes`` long; otherwise the service does not start.
enum SigningKeyFile {
    /// 32 bytes: HMAC-SHA256's full strength (a key shorter than its output weakens it).
    static let minimumKeyBytes = 32

    /// The keys in the file at `path`.
    /// - Throws: ``ServiceError`` when it cannot be read, is open to other users, holds no key
    ///   or a key shorter than ``minimumKeyBytes``.
    static func keys(in path: String) throws -> [String] {
        var info = stat()
        guard stat(path, &info) == 0 else { throw ServiceError.badParameter("signing-key-file \(path) cannot be read") }
        let mode = Int(info.st_mode) & 0o777
        // Others may not read it; nobody but the owner may write it.
        guard mode & 0o026 == 0 else {
            throw ServiceError.badParameter("signing-key-file \(path) is open to other users (mode \(String(mode, radix: 8))): "
                + "chmod 600 it (640 for the service's group)")
        }
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw ServiceError.badParameter("signing-key-file \(path) cannot be read")
        }
        let keys = keys(inText: String(decoding: data, as: UTF8.self))
        guard !keys.isEmpty else { throw ServiceError.badParameter("signing-key-file \(path) holds no key") }
        // Which line is told, never the key.
        if let short = keys.firstIndex(where: { $0.utf8.count < minimumKeyBytes }) {
            throw ServiceError.badParameter("signing-key-file \(path): key \(short + 1) is shorter than \(minimumKeyBytes) bytes")
        }
        return keys
    }

    /// The keys in a file's text.
    static func keys(inText text: String) -> [String] {
        text.split(omittingEmptySubsequences: true) { $0 == "\n" || $0 == "\r\n" || $0 == "\r" }
            .map { $0.trimmingSpacesAndTabs }
            .filter { !$0.isEmpty && !$0.hasPrefix("#") }
    }
}
