/// The names a ``DiskCache`` gives files, and the test of whether a name is one of them.
///
/// A cache directory may hold files the cache did not make (a user's notes, a cache directory
/// pointed at the wrong place): the cache indexes, counts, trims, expires and clears only names
/// it makes, so it never deletes anything else.
enum DiskCacheFileNames {
    /// Image extensions kept in entry names.
    static let imageExtensions: Set = ["jpg", "jpeg", "png", "gif", "webp", "heic", "heif", "avif", "bmp", "ico"]

    /// The prefix of temporary files (a write in progress, renamed into place when complete).
    static let temporaryPrefix = ".tmp-"

    /// The shared size journal (see ``DiskCacheJournal``).
    static let journal = ".webimage-size"

    /// Whether `name` is an entry name: 64 lowercase hex digits (a SHA-256), then optionally `.`
    /// and one of ``imageExtensions``.
    static func isEntryName(_ name: String) -> Bool {
        let bytes = Array(name.utf8)
        guard bytes.count >= 64, bytes[..<64].allSatisfy(Hex.isLowercaseDigit) else { return false }
        if bytes.count == 64 { return true }
        guard bytes[64] == UInt8(ascii: "."), bytes.count <= 70 else { return false }
        return imageExtensions.contains(String(decoding: bytes[65...], as: UTF8.self))
    }

    /// Whether `name` is a temporary name: the prefix, then 1 to 40 ASCII letters, digits or
    /// dashes (this version writes 16 hex digits; earlier ones wrote `<pid>-<serial>`).
    static func isTemporaryName(_ name: String) -> Bool {
        let bytes = Array(name.utf8)
        let prefix = Array(temporaryPrefix.utf8)
        guard bytes.count > prefix.count, bytes.count <= prefix.count + 40, bytes.starts(with: prefix) else { return false }
        return bytes[prefix.count...].allSatisfy { byte in
            Hex.isLowercaseDigit(byte) || (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z"))
                || (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z")) || byte == UInt8(ascii: "-")
        }
    }

    /// A fresh temporary name. Random rather than pid-based: pids repeat across PID namespaces
    /// (containers sharing a volume), and liveness is told by a lock, not by the name.
    static func temporaryName() -> String {
        let random = UInt64.random(in: 0...UInt64.max)
        return temporaryPrefix + withUnsafeBytes(of: random.bigEndian) { Hex.lowercase($0) }
    }
}
