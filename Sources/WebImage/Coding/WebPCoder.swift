import Foundation

// PLACEHOLDER: replaced by the real coder (owned by the codec work).
public struct WebPCoder: ImageCoder {
    public init() {}
    public func canDecode(_ data: Data) -> Bool { ImageFormat.detect(data) == .webp }
    public func decode(_ data: Data, options: DecodeOptions) throws -> DecodedImage {
        throw WebImageError.unsupportedFormat("webp decoding not built yet")
    }
}
