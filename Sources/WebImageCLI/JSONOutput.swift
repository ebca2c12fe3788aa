#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The CLI's one JSON writer: every `--json` record is an `Encodable` value printed as one line,
/// keys sorted, slashes unescaped (URLs stay readable).
enum JSONOutput {
    /// `value` as one line of JSON.
    static func line(_ value: some Encodable) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // The CLI's records hold strings, numbers and booleans only, which always encode.
        return (try? String(decoding: encoder.encode(value), as: UTF8.self)) ?? "{}"
    }
}
