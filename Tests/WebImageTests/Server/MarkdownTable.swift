import Foundation

/// A GitHub-flavoured Markdown table: its header cells and its rows' cells, trimmed.
struct MarkdownTable {
    var header: [String]
    var rows: [[String]]

    /// Every table of `text`: runs of lines starting with `|`, the second one the delimiter row.
    static func all(in text: String) -> [MarkdownTable] {
        var tables: [MarkdownTable] = []
        var block: [[String]] = []
        func close() {
            if block.count >= 2 { tables.append(MarkdownTable(header: block[0], rows: Array(block.dropFirst(2)))) }
            block = []
        }
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            guard trimmed.hasPrefix("|") else { close(); continue }
            block.append(cells(trimmed))
        }
        close()
        return tables
    }

    /// The cells of one row; `\|` is a pipe inside a cell.
    static func cells(_ line: String) -> [String] {
        var inner = Substring(line).dropFirst()
        if inner.hasSuffix("|") { inner = inner.dropLast() }
        return inner.replacingOccurrences(of: "\\|", with: "\u{0}").split(separator: "|", omittingEmptySubsequences: false)
            .map { $0.replacingOccurrences(of: "\u{0}", with: "|").trimmingCharacters(in: .whitespaces) }
    }
}
