import Foundation

// PLACEHOLDER: replaced by the real coder (owned by the codec work).
public struct PNGCoder: ImageCoder {
    public init() {}
    public func canDecode(_ data: Data) -> Bool { ImageFormat.detect(data) == .png }
    public func decode(_ data: Data, options: DecodeOptions) throws -> DecodedImage {
        throw WebImageError.unsupportedFormat("png decoding not built yet")
    }
}
