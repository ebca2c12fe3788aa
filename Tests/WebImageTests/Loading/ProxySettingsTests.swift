import Foundation
import Testing
import WebImage
import WebImageHTTP

/// Which proxy a URL goes through: the environment's variables and curl's NO_PROXY rules,
/// without a network.
@Suite("Proxy settings")
struct ProxySettingsTests {
    private func routed(_ url: String, noProxy: String?, proxy: String = "http://proxy.test:3128") throws -> String? {
        let settings = HTTPProxySettings(httpProxy: proxy, httpsProxy: proxy, noProxy: noProxy)
        return try settings.proxy(for: try #require(URL(string: url)))?.displayName
    }

    @Test func noProxyMatchesLikeCurl() throws {
        // Host names: the name and the names under it, a leading dot ignored, case-insensitive.
        for entry in ["example.com", ".example.com", "EXAMPLE.com", "other.org, example.com", " example.com "] {
            #expect(try routed("http://example.com/a", noProxy: entry) == nil, "\(entry)")
            #expect(try routed("https://img.Example.com/a", noProxy: entry) == nil, "\(entry)")
            #expect(try routed("http://badexample.com/a", noProxy: entry) == "proxy.test:3128", "\(entry)")
        }
        #expect(try routed("http://anything.test/a", noProxy: "*") == nil)
        #expect(try routed("http://anything.test/a", noProxy: "*.test") == "proxy.test:3128")
        // A port narrows the entry.
        #expect(try routed("http://example.com:8080/a", noProxy: "example.com:8080") == nil)
        #expect(try routed("http://example.com/a", noProxy: "example.com:8080") == "proxy.test:3128")
        #expect(try routed("https://example.com/a", noProxy: "example.com:443") == nil)
        // Addresses: exactly, or in a prefix; never by name suffix.
        #expect(try routed("http://10.1.2.3/a", noProxy: "10.1.2.3") == nil)
        #expect(try routed("http://10.1.2.3/a", noProxy: "10.0.0.0/8") == nil)
        #expect(try routed("http://11.1.2.3/a", noProxy: "10.0.0.0/8") == "proxy.test:3128")
        #expect(try routed("http://110.1.2.3/a", noProxy: "10.1.2.3") == "proxy.test:3128")
        #expect(try routed("http://[::1]:8080/a", noProxy: "::1") == nil)
        #expect(try routed("http://[::1]:8080/a", noProxy: "[::1]:8080") == nil)
        #expect(try routed("http://[fd00::5]/a", noProxy: "fd00::/8") == nil)
        // As in curl, loopback goes through the proxy unless listed.
        #expect(try routed("http://127.0.0.1/a", noProxy: nil) == "proxy.test:3128")
        #expect(try routed("http://localhost/a", noProxy: "") == "proxy.test:3128")
    }

    @Test func theEnvironmentGivesOneProxyPerScheme() throws {
        let environment = ["http_proxy": "http://lower:1", "HTTP_PROXY": "http://upper:2", "HTTPS_PROXY": "secure:3",
                           "NO_PROXY": "direct.test"]
        let settings = HTTPProxySettings.fromEnvironment(environment)
        #expect(try settings.proxy(for: URL(string: "http://a.test/")!)?.displayName == "lower:1")
        #expect(try settings.proxy(for: URL(string: "https://a.test/")!)?.displayName == "secure:3")
        #expect(try settings.proxy(for: URL(string: "https://direct.test/")!) == nil)
        #expect(!HTTPProxySettings.fromEnvironment(["http_proxy": "", "HTTPS_PROXY": " "]).usesProxy)
        let public_ = HTTPProxySettings.environment(environment)
        #expect(public_ == HTTPProxySettings(httpProxy: "http://lower:1", httpsProxy: "secure:3", noProxy: "direct.test"))
    }

    @Test func proxyURLsAreParsedWithTheirCredentials() throws {
        let proxy = try HTTPProxy(parsing: "http://al%40ice:p%3Ass@Proxy.Test")
        #expect(proxy.host == "proxy.test")
        #expect(proxy.port == 1080)
        #expect(proxy.authorization == "Basic " + Data("al@ice:p:ss".utf8).base64EncodedString())
        #expect(!proxy.displayName.contains("al"))
        #expect(try HTTPProxy(parsing: "proxy.test:3128").port == 3128)
        #expect(try HTTPProxy(parsing: "http://[::1]:3128").displayName == "[::1]:3128")
        for bad in ["socks5://proxy.test", "https://proxy.test", "http://", "http://proxy.test:99999"] {
            #expect(throws: HTTPLoadError.self, "\(bad)") { try HTTPProxy(parsing: bad) }
        }
        // The refusal names the proxy without its password.
        do {
            _ = try HTTPProxy(parsing: "socks5://user:hunter2@proxy.test")
        } catch {
            #expect(!String(describing: error).contains("hunter2"))
        }
    }
}
