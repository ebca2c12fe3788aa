#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Loads `data:` URLs (RFC 2397), base64 or percent-encoded, without any I/O.
package struct DataURLLoader: ImageLoader {
    /// Creates a data URL loader.
    package init() {}

    /// Whether `url` is a data URL.
    package func canLoad(_ url: URL) -> Bool { url.scheme?.lowercased() == "data" }

    /// Decodes the URL's payload and delivers it as one completed event.
    package func load(_ request: ImageLoadRequest) -> AsyncThrowingStream<ImageLoadEvent, any Error> {
        AsyncThrowingStream { continuation in
            do {
                let (data, mimeType) = try Self.decode(request.url)
                let response = ImageLoadResponse(url: request.url, statusCode: nil,
                                                 headers: ["content-type": mimeType, "content-length": String(data.count)],
                                                 expectedContentLength: Int64(data.count))
                continuation.yield(.response(response))
                continuation.yield(.progress(received: Int64(data.count), expected: Int64(data.count)))
                continuation.yield(.completed(data, response))
                continuation.finish()
            } catch {
                continuation.finish(throwing: error)
            }
        }
    }

    /// Splits a data URL into its bytes and media type.
    static func decode(_ url: URL) throws -> (Data, String) {
        let string = url.absoluteString
        guard string.lowercased().hasPrefix("data:"), let comma = string.firstIndex(of: ",") else {
            throw WebImageError.invalidURL(string)
        }
        let meta = string[string.index(string.startIndex, offsetBy: 5)..<comma]
        let payload = String(string[string.index(after: comma)...])
        var parameters = meta.split(separator: ";").map { String($0) }
        let isBase64 = parameters.last?.lowercased() == "base64"
        if isBase64 { parameters.removeLast() }
        let mimeType = parameters.first.flatMap { $0.isEmpty ? nil : (try? Self.percentDecodedBytes($0)).map { String(decoding: $0, as: UTF8.self) } } ?? "text/plain;charset=US-ASCII"
        // Percent-decoding works on bytes, not on a String, to keep binary payloads intact.
        let raw = try Self.percentDecodedBytes(payload)
        let data: Data
        if isBase64 {
            let text = String(decoding: raw, as: UTF8.self).filter { !$0.isWhitespace }
            guard let bytes = Data(base64Encoded: text) else {
                throw WebImageError.corruptData("bad base64 in data URL")
            }
            data = bytes
        } else {
            data = raw
        }
        if data.isEmpty { throw WebImageError.emptyData }
        return (data, mimeType)
    }

    /// The bytes `string` percent-encodes (data URLs, `local:` paths).
    /// - Throws: ``WebImageError/corruptData(_:)`` for a `%` not followed by two hex digits.
    package static func percentDecodedBytes(_ string: String) throws -> Data {
        guard let bytes = Hex.percentDecoded(string) else { throw WebImageError.corruptData("bad percent-encoding in data URL") }
        return Data(bytes)
    }
}
