#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import WebImage

/// The CLI's `--json` lines: every record is an `Encodable` value printed as one line by the
/// package's ``JSONWriter``, keys sorted, slashes unescaped (URLs stay readable).
enum JSONOutput {
    /// `value` as one line of JSON.
    static func line(_ value: some Encodable) -> String {
        // The CLI's records hold strings, numbers and booleans only, which always encode.
        JSONWriter.data(value, escapingSlashes: false).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
    }
}
