import Foundation

// PLACEHOLDER: replaced by the real coder (owned by the codec work).
public struct GIFCoder: ImageCoder {
    public init() {}
    public func canDecode(_ data: Data) -> Bool { ImageFormat.detect(data) == .gif }
    public func decode(_ data: Data, options: DecodeOptions) throws -> DecodedImage {
        throw WebImageError.unsupportedFormat("gif decoding not built yet")
    }
}
