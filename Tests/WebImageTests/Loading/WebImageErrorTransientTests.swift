import Testing
import WebImage

@Suite("WebImageError transient classification")
struct WebImageErrorTransientTests {
    @Test(arguments: [
        (WebImageError.cancelled, true), (.timedOut, true), (.connectionFailed("reset"), true),
        (.httpStatus(500), true), (.httpStatus(503), true), (.httpStatus(429), true), (.httpStatus(408), true),
        (.httpStatus(404), false), (.httpStatus(403), false), (.httpStatus(410), false),
        (.tooManyRedirects, false), (.rejected("no"), false), (.tooLarge("big"), false), (.emptyData, false),
        (.truncatedData("short"), false), (.invalidURL("x"), false),
        (.invalidRequest("bad header"), false), (.insecureRedirect("http://x/"), false),
    ])
    func classification(error: WebImageError, transient: Bool) {
        #expect(error.isTransient == transient)
    }

    @Test func theNetworkHardeningCodesAreStable() {
        #expect(WebImageError.invalidRequest("x").code == "invalidRequest")
        #expect(WebImageError.insecureRedirect("x").code == "insecureRedirect")
    }
}
