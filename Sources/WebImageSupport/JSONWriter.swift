#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The package's one JSON writer: the CLI's `--json` lines and the service's `/info`, error and
/// thumbor `meta/` bodies. Compact (no spaces or newlines); strings escaped as Foundation's
/// `JSONEncoder` does (`"` and `\` with a backslash, controls as `\n`, `\t`... or `\u00XX`,
/// non-ASCII as UTF-8).
package enum JSONWriter {
    /// `value` as JSON, or `nil` when its `encode(to:)` throws (or it holds a number JSON cannot
    /// write, such as infinity).
    /// - Parameters:
    ///   - sortingKeys: each object's keys in ascending order; without it, in Foundation's order
    ///     (on Linux, one that may vary from run to run).
    ///   - escapingSlashes: `/` written `\/` (Foundation's default); without it, as itself, so
    ///     URLs and paths stay readable.
    package static func data(_ value: some Encodable, sortingKeys: Bool = true, escapingSlashes: Bool = true) -> Data? {
        let encoder = JSONEncoder()
        var formatting: JSONEncoder.OutputFormatting = []
        if sortingKeys { formatting.insert(.sortedKeys) }
        if !escapingSlashes { formatting.insert(.withoutEscapingSlashes) }
        encoder.outputFormatting = formatting
        return try? encoder.encode(value)
    }
}
