import Foundation
import Testing
@testable import WebImageHTTP

/// The downloader's cookie jar is bounded: a server cannot grow it (or the `Cookie` header)
/// without limit.
@Suite("Cookie jar bounds")
struct CookieJarTests {
    let url = URL(string: "http://127.0.0.1:8080/a")!

    @Test func manyCookiesAreCapped() {
        let jar = CookieJar()
        for index in 0..<5_000 { jar.store(setCookies: ["c\(index)=v"], from: url) }
        let header = jar.header(for: url) ?? ""
        #expect(header.split(separator: ";").count <= CookieJar.maxCookiesPerOrigin)
        #expect(header.utf8.count <= CookieJar.maxHeaderBytes)
    }

    @Test func anOversizedCookieIsDropped() {
        let jar = CookieJar()
        jar.store(setCookies: ["big=" + String(repeating: "x", count: 10_000), "small=1"], from: url)
        #expect(jar.header(for: url) == "small=1")
    }

    @Test func manyOriginsAreCapped() {
        let jar = CookieJar()
        for port in 1..<3_000 { jar.store(setCookies: ["c=v"], from: URL(string: "http://127.0.0.1:\(port)/")!) }
        #expect(jar.originCount <= CookieJar.maxOrigins)
    }

    @Test func maxAgeZeroDeletes() {
        let jar = CookieJar()
        jar.store(setCookies: ["a=1", "b=2"], from: url)
        jar.store(setCookies: ["a=1; Max-Age=0"], from: url)
        #expect(jar.header(for: url) == "b=2")
    }
}

extension CookieJarTests {
    @Test func negativeMaxAgeDeletesAndOtherAttributesAreIgnored() {
        let jar = CookieJar()
        jar.store(setCookies: ["a=1; Path=/x; Expires=Wed, 21 Oct 2015 07:28:00 GMT", "b=2; Max-Age=3600"], from: url)
        #expect(jar.header(for: url) == "a=1; b=2")
        jar.store(setCookies: ["b=2; Max-Age=-1"], from: url)
        #expect(jar.header(for: url) == "a=1")
    }

    @Test func theOldestOriginIsEvictedFirst() {
        let jar = CookieJar()
        let first = URL(string: "http://127.0.0.1:1/")!
        for port in 1...CookieJar.maxOrigins { jar.store(setCookies: ["c=v"], from: URL(string: "http://127.0.0.1:\(port)/")!) }
        #expect(jar.header(for: first) == "c=v")
        jar.store(setCookies: ["c=v"], from: URL(string: "http://127.0.0.1:60000/")!)
        #expect(jar.header(for: first) == nil)
        #expect(jar.originCount == CookieJar.maxOrigins)
    }
}
