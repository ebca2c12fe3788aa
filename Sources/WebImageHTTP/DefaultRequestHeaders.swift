import NIOHTTP1

/// Headers sent with every request, merged and put in order once rather than for each request.
package struct DefaultRequestHeaders: Sendable {
    /// By lowercased name: the name as given, and the value.
    let byName: [String: (String, String)]
    /// All of them, in the order a request sends them: what a request that adds nothing sends.
    let fields: HTTPHeaders
    /// Why one of them cannot be sent (checked once here): every load fails with it.
    let problem: String?

    package init(_ headers: [String: String]) {
        problem = headers.lazy.compactMap { RequestValidation.headerProblem(name: $0.key, value: $0.value) }.first
        var byName: [String: (String, String)] = [:]
        for (name, value) in headers { byName[name.lowercased()] = (name, value) }
        self.byName = byName
        fields = Self.ordered(byName)
    }

    /// Header fields by lowercased name, as a request sends them (sorted by name, so requests
    /// are reproducible).
    static func ordered(_ byName: [String: (String, String)]) -> HTTPHeaders {
        var headers = HTTPHeaders()
        for (_, pair) in byName.sorted(by: { $0.key < $1.key }) { headers.add(name: pair.0, value: pair.1) }
        return headers
    }
}
