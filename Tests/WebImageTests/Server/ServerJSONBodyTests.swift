import Foundation
import Testing
import WebImage
@testable import WebImageServer

/// The service's JSON bodies pinned to the byte: key order, which characters are escaped and how
/// (`/` as `\/`, controls as `\u00XX`, non-ASCII as UTF-8), `null` for an absent profile.
@Suite("Service JSON bodies")
struct ServerJSONBodyTests {
    /// Quotes, a slash, a backslash, controls, DEL and non-ASCII up to four UTF-8 bytes.
    static let awkward = "a \"q\" /s\\ \n\t\r\u{1}\u{1f}\u{7f}é€😀"
    /// ``awkward`` as the service writes it.
    static let awkwardJSON = #"a \"q\" \/s\\ \n\t\r\u0001\u001f"# + "\u{7f}é€😀"

    @Test func errorBodiesAreSortedAndEscaped() {
        let body = ServiceError(status: 400, code: "badParameter", message: Self.awkward).jsonBody
        #expect(String(decoding: body, as: UTF8.self) == #"{"error":{"code":"badParameter","message":""# + Self.awkwardJSON + #""}}"#)
        #expect(String(decoding: ServiceError.notFound("").jsonBody, as: UTF8.self) == #"{"error":{"code":"notFound","message":""}}"#)
    }

    @Test func infoBodiesAreSortedWithEveryField() {
        let bare = InfoBody(ImageInfo(format: .png, width: 3, height: 2, orientation: .right, hasAlpha: true, bytes: 99)).json
        #expect(String(decoding: bare, as: UTF8.self)
            == #"{"bytes":99,"colorProfile":null,"format":"png","frames":1,"hasAlpha":true,"height":2,"orientation":6,"width":3}"#)
        let profiled = InfoBody(ImageInfo(format: .jpeg, width: 4000, height: 3000, frames: 1, bytes: 1_234_567, colorProfile: Self.awkward)).json
        #expect(String(decoding: profiled, as: UTF8.self)
            == #"{"bytes":1234567,"colorProfile":""# + Self.awkwardJSON + #"","format":"jpeg","frames":1,"hasAlpha":false,"height":3000,"orientation":1,"width":4000}"#)
    }
}
