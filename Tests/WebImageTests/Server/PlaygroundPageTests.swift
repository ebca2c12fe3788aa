import Foundation
import Testing
import WebImageTestSupport
@testable import WebImage
import WebImageServer

/// `GET /`: the playground page, read over HTTP and rendered by a real headless Chromium against a
/// running service and a loopback origin.
@Suite("playground page (GET /)", .serialized, .timeLimit(.minutes(5)))
struct PlaygroundPageTests {
    /// One `<figure>` of the page's gallery after Chromium ran its script.
    struct Figure {
        var attributes: [String: String]
        var text: String
        var status: String { attributes["data-status"] ?? "" }
        var naturalWidth: Int { Int(attributes["data-natural-width"] ?? "") ?? -1 }
    }

    /// The DOM Chromium serialized once the page (and its fetches) settled.
    struct RenderedPage {
        var state: String
        var figures: [Figure]
        var html: String
    }

    static var chromiumAvailable: Bool { ExternalTool.chromium != nil }

    /// A running service whose origin serves a 800x600 JPEG at /photo.jpg (and 404 elsewhere).
    private static func service(_ configure: (inout ServerConfiguration, LoopbackServer) -> Void = { _, _ in }) async throws -> ServerHarness {
        let harness = try await ServerHarness.start(configure)
        harness.origin.route("/photo.jpg", .image(try SampleImages.encoded(.jpeg, width: 800, height: 600), contentType: "image/jpeg"))
        return harness
    }

    /// Loads `url` in headless Chromium and returns the DOM after the page's script has run.
    /// Virtual time only advances while nothing is loading, so the fetches the page makes finish
    /// before the budget runs out; the budget bounds a page that never settles.
    private static func render(_ url: String) async throws -> RenderedPage {
        let chromium = try #require(ExternalTool.chromium)
        let profile = try TemporaryDirectory()
        let run = try await ChildProcess.run(chromium, [
            "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
            "--user-data-dir=\(profile.url.path)", "--virtual-time-budget=30000", "--dump-dom", url,
        ])
        let html = String(decoding: run.stdout, as: UTF8.self)
        try #require(run.status == 0 && html.contains("<body"), "chromium exited \(run.status): \(run.stderr.suffix(2000))")
        let state = html.firstMatch(of: /<body[^>]*data-state="([a-z]+)"/).map { String($0.1) } ?? ""
        var figures: [Figure] = []
        for match in html.matches(of: /<figure([^>]*)>(.*?)<\/figure>/.dotMatchesNewlines()) {
            var attributes: [String: String] = [:]
            for attribute in match.1.matches(of: /([a-z-]+)="([^"]*)"/) { attributes[String(attribute.1)] = String(attribute.2) }
            figures.append(Figure(attributes: attributes, text: String(match.2)))
        }
        return RenderedPage(state: state, figures: figures, html: html)
    }

    private static func pageURL(_ harness: ServerHarness, source: String, query: String) -> String {
        "http://127.0.0.1:\(harness.port)/?url=\(harness.source(source))&\(query)"
    }

    @Test func servesTheSelfContainedPage() async throws {
        let harness = try await Self.service()
        let response = try await ServerTestClient.send(port: harness.port, "/")
        #expect(response.status == 200)
        #expect(response.header("Content-Type") == "text/html; charset=utf-8")
        // Only the inline script, and requests back to the service itself.
        let policy = try #require(response.header("Content-Security-Policy"))
        #expect(policy.contains("default-src 'none'") && policy.contains("connect-src 'self'"))
        let page = String(decoding: response.body, as: UTF8.self)
        let controls = ["url", "w", "h", "fit", "format", "q", "gravity", "focus", "dpr", "crop", "rotate", "flip", "blur", "sharpen",
                        "bg", "progressive", "wm"].map { #"name=""# + $0 + #"""# }
        for control in controls {
            #expect(page.contains(control), "no \(control) control")
        }
        // No third-party assets: every URL the page names is relative to the service.
        #expect(!page.contains("src=\"http") && !page.contains("href=\"http"))
        let head = try await ServerTestClient.send(port: harness.port, "/", method: .HEAD)
        #expect(head.status == 200 && head.body.isEmpty)
        try await harness.stop()
    }

    @Test(.enabled(if: chromiumAvailable, "chromium is not installed (scripts/install-deps.sh installs it)"))
    func chromiumLoadsEveryImageOfTheGallery() async throws {
        let harness = try await Self.service()
        let page = try await Self.render(Self.pageURL(harness, source: "/photo.jpg", query: "w=240&fit=contain&format=jpeg&q=80"))
        #expect(page.state == "done", "the page never settled:\n\(page.html.suffix(3000))")
        // The chosen settings, then the presets: 150x150 cover, 300 wide, 200x200 fill.
        try #require(page.figures.count == 4, "\(page.html.suffix(3000))")
        #expect(page.figures.map(\.naturalWidth) == [240, 150, 300, 200], "\(page.figures.map(\.attributes))")
        #expect(page.figures.allSatisfy { $0.status == "200" })
        #expect(page.figures.map { $0.attributes["data-natural-height"] } == ["180", "150", "225", "200"])
        // The caption reports type and timing from the response.
        #expect(page.figures.allSatisfy { $0.text.contains("image/jpeg") && $0.text.contains(" ms") })
        #expect(harness.origin.requestCount(for: "/photo.jpg") >= 1)
        try await harness.stop()
    }

    /// The new controls reach `GET /image`, and `format=auto` negotiates from the `Accept` a
    /// browser sends for images (a plain `fetch` sends `*/*`, which always gave JPEG). WebP only
    /// (`--auto-formats webp`): AVIF decodes in headless Chromium can outlast its virtual time.
    @Test(.enabled(if: chromiumAvailable, "chromium is not installed (scripts/install-deps.sh installs it)"))
    func chromiumSendsTheImageAcceptAndTheNewControls() async throws {
        let harness = try await Self.service { configuration, _ in configuration.autoFormats = [.webp] }
        let page = try await Self.render(Self.pageURL(harness, source: "/photo.jpg", query: "w=240&format=auto&rotate=90&sharpen=1"))
        #expect(page.state == "done", "the page never settled:\n\(page.html.suffix(3000))")
        try #require(page.figures.count == 4, "\(page.html.suffix(3000))")
        // Turned a quarter before the resize: 600x800 into 240 wide.
        #expect(page.figures[0].naturalWidth == 240 && page.figures[0].attributes["data-natural-height"] == "320")
        #expect(page.figures.allSatisfy { $0.status == "200" && $0.text.contains("image/webp") },
                "\(page.figures.map(\.text))")
        try await harness.stop()
    }

    @Test(.enabled(if: chromiumAvailable, "chromium is not installed (scripts/install-deps.sh installs it)"))
    func chromiumShowsAMissingSourceAsAnErrorWithNoImage() async throws {
        let harness = try await Self.service()
        let page = try await Self.render(Self.pageURL(harness, source: "/missing.jpg", query: "w=100"))
        #expect(page.state == "done")
        try #require(page.figures.count == 4)
        #expect(page.figures.allSatisfy { $0.status == "404" && $0.naturalWidth == 0 }, "\(page.figures.map(\.attributes))")
        #expect(page.figures.allSatisfy { $0.text.contains("class=\"error\"") && $0.text.contains("404") })
        try await harness.stop()
    }
}
