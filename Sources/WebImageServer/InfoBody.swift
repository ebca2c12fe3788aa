#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import WebImage

/// `GET /info`'s JSON: every field always present (`colorProfile` as `null` when the source has
/// none), the orientation as its EXIF number.
struct InfoBody: Encodable {
    let info: ImageInfo

    init(_ info: ImageInfo) { self.info = info }

    private enum Key: String, CodingKey { case format, width, height, frames, orientation, hasAlpha, bytes, colorProfile }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Key.self)
        try container.encode(info.format.rawValue, forKey: .format)
        try container.encode(info.width, forKey: .width)
        try container.encode(info.height, forKey: .height)
        try container.encode(info.frames, forKey: .frames)
        try container.encode(info.orientation.rawValue, forKey: .orientation)
        try container.encode(info.hasAlpha, forKey: .hasAlpha)
        try container.encode(info.bytes, forKey: .bytes)
        if let profile = info.colorProfile { try container.encode(profile, forKey: .colorProfile) } else { try container.encodeNil(forKey: .colorProfile) }
    }

    /// The body, keys sorted.
    var json: Data {
        JSONWriter.data(self) ?? Data("{}".utf8)
    }
}
