import Foundation

// PLACEHOLDER: replaced by the real coder (owned by the codec work).
public struct JPEGCoder: ImageCoder {
    public init() {}
    public func canDecode(_ data: Data) -> Bool { ImageFormat.detect(data) == .jpeg }
    public func decode(_ data: Data, options: DecodeOptions) throws -> DecodedImage {
        throw WebImageError.unsupportedFormat("jpeg decoding not built yet")
    }
}
