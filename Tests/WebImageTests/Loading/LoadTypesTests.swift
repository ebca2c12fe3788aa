import Foundation
import Testing
import WebImage

/// A load's request, response, events, priority and validators are declared once, in the HTTP
/// stack; WebImage's names are those types, with the initialisers, members and encodings they had
/// when they were declared here.
@Suite("Load types")
struct LoadTypesTests {
    @Test func webImageNamesAreTheHTTPStacksTypes() {
        #expect(ImageLoadRequest.self == HTTPLoadRequest.self)
        #expect(ImageLoadResponse.self == HTTPLoadResponse.self)
        #expect(ImageLoadEvent.self == HTTPLoadEvent.self)
        #expect(LoadPriority.self == HTTPLoadRequest.Priority.self)
        #expect(HTTPLoadRequest.Validators.self == HTTPLoadRequest.Validators.self)
    }

    @Test func theRequestKeepsItsInitialiserAndDefaults() throws {
        let url = try #require(URL(string: "https://example.com/a.png"))
        let plain = ImageLoadRequest(url: url)
        #expect(plain.headers.isEmpty && plain.priority == .normal && plain.timeout == nil)
        #expect(plain.resourceTimeout == nil && plain.validators == nil && !plain.wantsPartialData)
        let full = ImageLoadRequest(url: url, headers: ["X-A": "1"], priority: .veryHigh, timeout: .seconds(2),
                                    resourceTimeout: .seconds(9), validators: HTTPLoadRequest.Validators(etag: "\"v\""),
                                    wantsPartialData: true)
        #expect(full.priority == .veryHigh && full.validators?.etag == "\"v\"" && full.wantsPartialData)
    }

    @Test func priorityAndValidatorsKeepTheirShape() throws {
        #expect(LoadPriority.allCases.map(\.rawValue) == [-2, -1, 0, 1, 2])
        #expect(LoadPriority.low < .high && LoadPriority(rawValue: 1) == .high)
        #expect(HTTPLoadRequest.Validators().isEmpty && !HTTPLoadRequest.Validators(lastModified: "x").isEmpty)
        let encoded = try JSONEncoder().encode(HTTPLoadRequest.Validators(etag: "e", lastModified: "m"))
        let keys = try #require(JSONSerialization.jsonObject(with: encoded) as? [String: String])
        #expect(keys == ["etag": "e", "lastModified": "m"])
        #expect(try JSONDecoder().decode(HTTPLoadRequest.Validators.self, from: encoded) == HTTPLoadRequest.Validators(etag: "e", lastModified: "m"))
    }

    @Test func theResponseKeepsItsOptionalStatusAndDerivedMembers() throws {
        let url = try #require(URL(string: "file:///tmp/a.png"))
        let file = ImageLoadResponse(url: url)
        #expect(file.statusCode == nil && file.headers.isEmpty && file.expectedContentLength == nil)
        let http = ImageLoadResponse(url: url, statusCode: 200,
                                     headers: ["content-type": "image/png", "etag": "\"1\"", "last-modified": "d"],
                                     expectedContentLength: 4)
        #expect(http.mimeType == "image/png")
        #expect(http.validators == HTTPLoadRequest.Validators(etag: "\"1\"", lastModified: "d"))
        #expect(Set([http, http, file]).count == 2)
    }
}
