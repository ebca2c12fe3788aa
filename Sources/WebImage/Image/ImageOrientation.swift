/// The EXIF orientation of an image: how its stored pixels must be turned to show upright.
///
/// Decoders report it and leave the pixels as stored; ``DecodeOptions/applyOrientation`` or
/// ``ImageTransformers/Orientation`` turn them.
public enum ImageOrientation: Int, Sendable, Hashable, CaseIterable, Codable {
    /// Stored upright (EXIF 1).
    case up = 1
    /// Mirrored left to right (EXIF 2).
    case upMirrored = 2
    /// Turned 180° (EXIF 3).
    case down = 3
    /// Mirrored top to bottom (EXIF 4).
    case downMirrored = 4
    /// Mirrored along the top-left to bottom-right diagonal (EXIF 5).
    case leftMirrored = 5
    /// Must be turned 90° clockwise to show upright (EXIF 6).
    case right = 6
    /// Mirrored along the top-right to bottom-left diagonal (EXIF 7).
    case rightMirrored = 7
    /// Must be turned 90° counter-clockwise to show upright (EXIF 8).
    case left = 8

    /// The EXIF tag value, 1 to 8.
    public var exifValue: Int { rawValue }

    /// Whether showing upright swaps width and height.
    public var swapsDimensions: Bool { rawValue >= 5 }

    /// The orientation for an EXIF value; values outside 1...8 read as ``up``.
    public init(exifValue: Int) {
        self = ImageOrientation(rawValue: exifValue) ?? .up
    }
}
