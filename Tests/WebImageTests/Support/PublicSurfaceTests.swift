import Foundation
import Testing

/// The library's public surface stays small enough to learn: the top-level public declarations
/// of the WebImage module (types and typealiases) are counted from the sources, by the same rule
/// as `scripts/public-types.sh`. A new one fails this test until the ceiling is raised on purpose
/// (internals are `package`; related types nest, as `ImageTransformers.Resize` or `ImageDownloader.Token` do).
@Suite("Public surface")
struct PublicSurfaceTests {
    /// The most top-level public declarations allowed (issue #18 asked for at most 55; issue #29
    /// added `WebImageVersion`, the release a user's code can read; issue #31 `S3Configuration`,
    /// for `s3://` loads, its credentials nested in it; issue #32 `ImageInfo`, what `/info` answers;
    /// issue #44 the encoded loads: `EncodedImage`, `ImageRendering`, `TransformAndEncode`, `ImageRequest`,
    /// `ImageDataCache`, `SourceImage`, and `DecodeCancellation` (a rendering's stop flag), the rest nested).
    static let ceiling = 65

    static let sources = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Sources/WebImage")

    /// The name a line declares when it is a top-level public type or typealias (it starts the
    /// line, after any attributes), else `nil`.
    static func publicTopLevelName(_ line: Substring) -> String? {
        var words = line.split(separator: " ", omittingEmptySubsequences: false)[...]
        while let first = words.first, first.hasPrefix("@") { words = words.dropFirst() }
        guard words.first == "public" else { return nil }
        words = words.dropFirst()
        if words.first == "final" || words.first == "indirect" { words = words.dropFirst() }
        guard let kind = words.first, ["class", "struct", "enum", "protocol", "actor", "typealias"].contains(kind),
              let name = words.dropFirst().first else { return nil }
        return String(name.prefix { $0.isLetter || $0.isNumber || $0 == "_" })
    }

    static func publicTopLevelNames() throws -> [String] {
        let files = FileManager.default.enumerator(at: sources, includingPropertiesForKeys: nil)?
            .compactMap { $0 as? URL }.filter { $0.pathExtension == "swift" } ?? []
        var names: [String] = []
        for file in files {
            let text = try String(contentsOf: file, encoding: .utf8)
            names += text.split(separator: "\n").compactMap(publicTopLevelName)
        }
        return names.sorted()
    }

    @Test func theRuleSeesTopLevelDeclarationsOnly() {
        #expect(Self.publicTopLevelName("public final class ImageManager: Sendable {") == "ImageManager")
        #expect(Self.publicTopLevelName("@preconcurrency public protocol ImageTarget: AnyObject {") == "ImageTarget")
        #expect(Self.publicTopLevelName("public typealias CacheKeyFilter = @Sendable (URL) -> String?") == "CacheKeyFilter")
        #expect(Self.publicTopLevelName("    public struct Resize: ImageTransformer, Hashable {") == nil)
        #expect(Self.publicTopLevelName("package struct SHA256: Sendable {") == nil)
        #expect(Self.publicTopLevelName("public func cacheKey(for key: String) -> String {") == nil)
    }

    @Test func theSurfaceDoesNotRegrowSilently() throws {
        let names = try Self.publicTopLevelNames()
        #expect(names.count > 40, "the scan found too little: \(Self.sources.path)")
        #expect(names.count <= Self.ceiling, "\(names.count) top-level public declarations: \(names.joined(separator: ", "))")
    }

    @Test func nothingClashesWithCryptoNames() throws {
        // CryptoKit and swift-crypto: a user importing both must not have to qualify these.
        let crypto: Set = ["SHA256", "SHA384", "SHA512", "Insecure", "HMAC", "SymmetricKey", "AES", "ChaChaPoly", "P256", "Curve25519"]
        #expect(Set(try Self.publicTopLevelNames()).isDisjoint(with: crypto))
    }
}
