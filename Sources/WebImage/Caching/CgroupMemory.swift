#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The memory limit and use of this process's Linux control group, read from the cgroup file
/// system, so that a process in a container sizes its caches from the container's limit rather
/// than the host's memory.
///
/// The group comes from the membership file (`/proc/self/cgroup`): the cgroup v1 `memory`
/// hierarchy when it is mounted (`<root>/memory/<group>`, `memory.limit_in_bytes`,
/// `memory.usage_in_bytes`), else the cgroup v2 unified one (`<root>/<group>`, `memory.max`,
/// `memory.current`). The limit is the smallest of the group's and its ancestors'. When the
/// group's directory is not visible (a container whose cgroup namespace shows its own group as
/// the root), the root's files are read. Both locations are parameters, so tests pass a fake tree.
public struct CgroupMemory: Sendable, Hashable {
    /// Where the cgroup file system is mounted (default `/sys/fs/cgroup`).
    public var root: URL
    /// The file naming the process's groups (default `/proc/self/cgroup`).
    public var membership: URL

    /// What the group's files say at one moment.
    public struct Reading: Sendable, Hashable {
        /// The smallest limit of the group and its ancestors, in bytes.
        public var limit: Int
        /// Bytes charged to the group with that limit (`memory.current` / `memory.usage_in_bytes`).
        public var usage: Int
        /// Page cache the kernel can drop at no cost (`inactive_file` in `memory.stat`).
        public var inactiveFile: Int

        /// Usage without the inactive page cache: what the kernel cannot reclaim cheaply, the
        /// figure container runtimes (Kubernetes' kubelet) compare with the limit.
        public var workingSet: Int { max(0, usage - inactiveFile) }
    }

    /// The process's own control group.
    public static let current = CgroupMemory()

    /// Reads the group named in `membership` under `root`.
    public init(root: URL = URL(fileURLWithPath: "/sys/fs/cgroup", isDirectory: true),
                membership: URL = URL(fileURLWithPath: "/proc/self/cgroup", isDirectory: false)) {
        self.root = root
        self.membership = membership
    }

    /// The group's memory limit in bytes, or `nil` when it has none (or there is no cgroup).
    public var limit: Int? { reading()?.limit }

    /// The limit, usage and inactive page cache now, or `nil` when the group has no limit.
    public func reading() -> Reading? {
        guard let text = Self.readSmallFile(membership.path) else { return nil }
        var version1: String?
        var version2: String?
        for line in text.split(separator: "\n") {
            let fields = line.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false)
            guard fields.count == 3 else { continue }
            if fields[0] == "0", fields[1].isEmpty { version2 = String(fields[2]) }
            if fields[1].split(separator: ",").contains("memory") { version1 = String(fields[2]) }
        }
        let memoryRoot = root.path.hasSuffix("/") ? root.path + "memory" : root.path + "/memory"
        if let version1, FileManager.default.fileExists(atPath: memoryRoot) {
            return read(root: memoryRoot, group: version1, limitFile: "memory.limit_in_bytes",
                        usageFile: "memory.usage_in_bytes", inactiveKeys: ["total_inactive_file", "inactive_file"])
        }
        if let version2 {
            return read(root: root.path, group: version2, limitFile: "memory.max",
                        usageFile: "memory.current", inactiveKeys: ["inactive_file"])
        }
        return nil
    }

    /// Walks from the group's directory up to the root and reads the tightest limit's files.
    private func read(root: String, group: String, limitFile: String, usageFile: String, inactiveKeys: [String]) -> Reading? {
        let base = root.hasSuffix("/") ? String(root.dropLast()) : root
        // Groups never contain "..", but the membership file is input: stay under the root.
        let components = group.split(separator: "/").filter { $0 != "." && $0 != ".." }
        var directories: [String] = []
        for depth in stride(from: components.count, through: 0, by: -1) {
            let path = ([base] + components.prefix(depth).map(String.init)).joined(separator: "/")
            if FileManager.default.fileExists(atPath: path + "/" + limitFile) { directories.append(path) }
        }
        var tightest: (directory: String, limit: Int)?
        for directory in directories {
            guard let limit = Self.readLimit(directory + "/" + limitFile) else { continue }
            if tightest.map({ limit < $0.limit }) ?? true { tightest = (directory, limit) }
        }
        guard let tightest else { return nil }
        let usage = Self.readSmallFile(tightest.directory + "/" + usageFile).flatMap(Self.parseCount) ?? 0
        var inactive = 0
        if let stat = Self.readSmallFile(tightest.directory + "/memory.stat") {
            var values: [String: Int] = [:]
            for line in stat.split(separator: "\n") {
                let pair = line.split(separator: " ")
                if pair.count == 2, let value = Self.parseCount(pair[1]) { values[String(pair[0])] = value }
            }
            inactive = inactiveKeys.lazy.compactMap { values[$0] }.first ?? 0
        }
        return Reading(limit: tightest.limit, usage: usage, inactiveFile: inactive)
    }

    /// A limit file's value; `nil` for "max" and for v1's "unlimited" (about 2^63, rounded to a page).
    private static func readLimit(_ path: String) -> Int? {
        guard let text = readSmallFile(path), let value = parseCount(text), value > 0, value < 1 << 62 else { return nil }
        return value
    }

    private static func parseCount(_ text: some StringProtocol) -> Int? {
        text.split(whereSeparator: \.isWhitespace).first.flatMap { Int($0) }
    }

    /// The text of a small file (cgroup and proc files are a few hundred bytes; at most 64 KiB is read).
    private static func readSmallFile(_ path: String) -> String? {
        guard let file = try? OpenFile(path: path) else { return nil }
        var bytes = [UInt8](repeating: 0, count: 65_536)
        var count = 0
        while count < bytes.count {
            let read = bytes.withUnsafeMutableBytes { raw in
                (try? file.read(into: UnsafeMutableRawBufferPointer(rebasing: raw[count...]))) ?? 0
            }
            if read <= 0 { break }
            count += read
        }
        return String(decoding: bytes[..<count], as: UTF8.self)
    }
}
