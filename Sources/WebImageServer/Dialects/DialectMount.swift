/// One `--dialect NAME[=PREFIX]`: which URL grammar is served, and below which path.
public struct DialectMount: Sendable, Hashable, CustomStringConvertible {
    /// The dialects `webimage serve` speaks.
    public enum Name: String, Sendable, Hashable, CaseIterable {
        /// imgproxy's `/%signature/%options/plain/%url@%ext` and `/%signature/%options/%base64url.%ext`.
        case imgproxy
        /// thumbor's `/%hash|unsafe/[meta/][trim/][AxB:CxD/][fit-in/][-]Wx[-]H/[halign/][valign/][smart/][filters:.../]IMAGE`.
        case thumbor
    }

    /// The grammar.
    public var name: Name
    /// The path it is mounted at: `/` or `/segment[/segment...]`, without a trailing `/`.
    public var prefix: String

    /// A mount from its parts; `prefix` is normalised (a leading `/`, no trailing one).
    public init(name: Name, prefix: String = "/") {
        self.name = name
        let trimmed = prefix.split(separator: "/", omittingEmptySubsequences: true).joined(separator: "/")
        self.prefix = "/" + trimmed
    }

    /// Parses `imgproxy`, `thumbor=/thumbs`.
    /// - Throws: ``ServiceError`` 400 naming the value.
    public init(parsing text: String) throws {
        let parts = text.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
        guard let name = Name(rawValue: String(parts[0]).lowercased()) else {
            throw ServiceError.badParameter("dialect '\(text)': the name must be one of \(Name.allCases.map(\.rawValue).joined(separator: ", ")), as NAME[=PREFIX]")
        }
        let prefix = parts.count > 1 ? String(parts[1]) : "/"
        guard prefix.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "/-_.~".contains($0)) }) else {
            throw ServiceError.badParameter("dialect '\(text)': the prefix may hold letters, digits and / - _ . ~ only")
        }
        self.init(name: name, prefix: prefix)
    }

    /// `thumbor=/thumbs`, as the flag takes it.
    public var description: String { "\(name.rawValue)=\(prefix)" }

    /// The part of `path` (starting with `/`) below this mount, without its leading `/`, or
    /// `nil` when `path` is not below it.
    func relativePath(of path: String) -> Substring? {
        if prefix == "/" { return path.hasPrefix("/") ? path.dropFirst() : Substring(path) }
        guard path.hasPrefix(prefix) else { return nil }
        let rest = path.dropFirst(prefix.count)
        if rest.isEmpty { return rest }
        return rest.hasPrefix("/") ? rest.dropFirst() : nil
    }

    /// Refuses two dialects at one prefix.
    /// - Throws: ``ServiceError`` 400 naming them.
    static func checkDistinct(_ mounts: [DialectMount]) throws {
        var seen: [String: DialectMount] = [:]
        for mount in mounts {
            if let other = seen[mount.prefix] {
                throw ServiceError.badParameter("dialects \(other) and \(mount) are mounted at the same prefix \(mount.prefix)")
            }
            seen[mount.prefix] = mount
        }
    }
}
