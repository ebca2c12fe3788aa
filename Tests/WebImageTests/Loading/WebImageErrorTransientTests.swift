import Testing
import WebImageHTTP
@testable import WebImage

@Suite("WebImageError transient classification")
struct WebImageErrorTransientTests {
    @Test(arguments: [
        (WebImageError.cancelled, true), (.timedOut, true), (.connectionFailed("reset"), true),
        (.httpStatus(500), true), (.httpStatus(503), true), (.httpStatus(429), true), (.httpStatus(408), true),
        (.httpStatus(404), false), (.httpStatus(403), false), (.httpStatus(410), false),
        (.tooManyRedirects, false), (.rejected("no"), false), (.tooLarge("big"), false), (.emptyData, false),
        (.truncatedData("short"), true), (.invalidURL("x"), false),
        (.httpStatus(502), true), (.httpStatus(504), true), (.httpStatus(501), false), (.httpStatus(505), false),
        (.invalidRequest("bad header"), false), (.insecureRedirect("http://x/"), false),
    ])
    func classification(error: WebImageError, transient: Bool) {
        #expect(error.isTransient == transient)
    }

    /// One meaning of "transient": what the downloader's retry rule sends again is what the
    /// manager keeps off its failed-URL list. Before they were one definition, a 501 counted as
    /// transient but was never retried, and a body cut short was retried, then recorded as a bad URL.
    @Test func theRetryRuleAndTheFailedURLListAgree() {
        var errors: [HTTPLoadError] = [
            .invalidURL("x"), .invalidRequest("x"), .tooManyRedirects, .insecureRedirect("http://x/"), .rejected("x"),
            .tooLarge("x"), .truncatedData("received 10 of 20 bytes"), .emptyData, .connectionFailed("reset"),
            .untrustedCertificate("x"), .proxyAuthenticationRequired("proxy:3128"), .timedOut,
        ]
        errors += (100...599).map { HTTPLoadError.httpStatus($0) }
        for error in errors {
            #expect(HTTPRetryPolicy.retries(error) == WebImageError(error).isTransient, "\(error)")
            // A URL the retries gave up on is not a bad URL; one never retried for its own fault is.
            let vetoed = if case .rejected = error { true } else { false }
            #expect(FailedURLList.records(WebImageError(error)) == !(HTTPRetryPolicy.retries(error) || vetoed), "\(error)")
        }
        // The one difference: a cancelled load is not retried (its caller left), nor is its URL bad.
        #expect(!HTTPRetryPolicy.retries(.cancelled) && WebImageError(HTTPLoadError.cancelled).isTransient)
        #expect(!FailedURLList.records(.cancelled))
    }

    /// The rule is the HTTP stack's: a load's failure reaches it through the inverse of the
    /// mapping the loader applies, case for case.
    @Test func aLoadsFailureMapsBackToTheHTTPStacksError() {
        let errors: [HTTPLoadError] = [
            .invalidURL("x"), .invalidRequest("x"), .httpStatus(503), .tooManyRedirects, .insecureRedirect("http://x/"),
            .rejected("x"), .tooLarge("x"), .truncatedData("x"), .emptyData, .connectionFailed("x"),
            .untrustedCertificate("x"), .proxyAuthenticationRequired("p:1"), .timedOut, .cancelled,
        ]
        for error in errors {
            let mapped = WebImageError(error)
            #expect(mapped.transportError.map(WebImageError.init) == mapped, "\(error)")
            #expect(mapped.isTransient == error.isTransient, "\(error)")
        }
        for error: WebImageError in [.unsupportedFormat("x"), .corruptData("x"), .encodingFailed("x"), .blockedFailedURL,
                                     .invalidNamespace("x")] {
            #expect(error.transportError == nil && !error.isTransient, "\(error)")
        }
        #expect(WebImageError.notCached.isTransient && WebImageError.fileSystem("x").isTransient)
        #expect(!FailedURLList.records(.notCached) && !FailedURLList.records(.rejected("x")) && !FailedURLList.records(.blockedFailedURL))
        #expect(FailedURLList.records(.httpStatus(404)) && FailedURLList.records(.corruptData("x")))
    }

    @Test func theNetworkHardeningCodesAreStable() {
        #expect(WebImageError.invalidRequest("x").code == "invalidRequest")
        #expect(WebImageError.insecureRedirect("x").code == "insecureRedirect")
    }
}
