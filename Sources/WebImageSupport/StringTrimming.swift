extension StringProtocol {
    /// The text without leading and trailing spaces and tabs (HTTP's optional whitespace),
    /// without Foundation's `CharacterSet`, which FoundationEssentials lacks.
    package var trimmingSpacesAndTabs: String {
        let isBlank: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        guard let first = firstIndex(where: { !isBlank($0) }), let last = lastIndex(where: { !isBlank($0) }) else { return "" }
        return String(self[first...last])
    }
}
