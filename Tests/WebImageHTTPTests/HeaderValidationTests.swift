import Testing
@testable import WebImageHTTP

/// The HTTP stack's own checks of what goes on the wire, before any connection is touched.
@Suite("HTTP header and timeout validation")
struct HeaderValidationTests {
    @Test(arguments: [
        ("X-Bad", "a\r\nInjected: 1"), ("X-Bad", "a\nb"), ("X-Bad", "a\u{0}b"), ("X-Bad", "a\u{7F}b"),
        ("Bad Name", "v"), ("X\r\nInjected", "v"), ("", "v"), ("X:Y", "v"),
    ])
    func aFieldHTTPCannotCarryIsRefused(name: String, value: String) {
        #expect(RequestValidation.headerProblem(name: name, value: value) != nil)
        #expect(throws: HTTPLoadError.self) { try RequestValidation.validate([name: value]) }
    }

    @Test func tabsAndNonASCIIValuesAreFine() throws {
        #expect(RequestValidation.headerProblem(name: "X-Ok", value: "a\tb é") == nil)
        try RequestValidation.validate(["X-Ok": "a\tb é", "Accept": "image/*"])
    }

    @Test func aBadDefaultHeaderIsFoundOnceWhenTheDefaultsAreMade() {
        #expect(DefaultRequestHeaders(["Accept": "image/*"]).problem == nil)
        #expect(DefaultRequestHeaders(["Accept": "image/*", "X-Key": "k\r\nX: y"]).problem != nil)
    }

    @Test func timeoutsMustBePositiveAndAreClampedToAYear() throws {
        #expect(throws: HTTPLoadError.self) { try RequestValidation.timeAmount(.zero, "the timeout") }
        #expect(throws: HTTPLoadError.self) { try RequestValidation.timeAmount(.seconds(-1), "the timeout") }
        let year = try RequestValidation.timeAmount(RequestValidation.longestTimeout, "the timeout")
        #expect(try RequestValidation.timeAmount(.seconds(Int64.max), "the timeout") == year)
        #expect(try RequestValidation.timeAmount(.milliseconds(1500), "the timeout") == .milliseconds(1500))
    }
}
