extension DecodedImage {
    /// Why a decoded animation holds fewer frames than its file: the decode stopped at a limit of
    /// ``DecodeOptions`` instead of taking more memory or time (see ``DecodedImage/truncation``).
    public enum AnimationTruncation: String, Sendable, Hashable {
        /// The file has more frames than ``DecodeOptions/maxFrameCount``.
        case frameCount
        /// One more frame would have taken the decoded frames past ``DecodeOptions/animationByteLimit``
        /// (or, for a thumbnail, the full-size frames composed past the work bound described there).
        case byteLimit
    }
}

/// The name this had before it was grouped under ``DecodedImage``.
package typealias AnimationTruncation = DecodedImage.AnimationTruncation
