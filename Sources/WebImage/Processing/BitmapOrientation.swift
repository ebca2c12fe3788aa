extension Bitmap {
    /// The bitmap turned and mirrored so that, shown as is, it looks as `orientation` says the
    /// stored pixels should be shown.
    public func applying(_ orientation: ImageOrientation) throws -> Bitmap {
        if orientation == .up { return self }
        let w = width, h = height
        let (outWidth, outHeight) = orientation.swapsDimensions ? (h, w) : (w, h)
        return try withUnsafeBytes { sourceBytes in
            let source = sourceBytes.bindMemory(to: UInt32.self).baseAddress!
            return try Bitmap(width: outWidth, height: outHeight) { targetBytes in
                let target = targetBytes.bindMemory(to: UInt32.self).baseAddress!
                for y in 0..<outHeight {
                    let row = target + y * outWidth
                    for x in 0..<outWidth {
                        let (sx, sy): (Int, Int) = switch orientation {
                        case .up: (x, y)
                        case .upMirrored: (w - 1 - x, y)
                        case .down: (w - 1 - x, h - 1 - y)
                        case .downMirrored: (x, h - 1 - y)
                        case .leftMirrored: (y, x)
                        case .right: (y, h - 1 - x)
                        case .rightMirrored: (w - 1 - y, h - 1 - x)
                        case .left: (w - 1 - y, x)
                        }
                        row[x] = source[sy * w + sx]
                    }
                }
            }
        }
    }
}

extension DecodedImage {
    /// The image with every frame turned upright by its EXIF orientation, reported as ``ImageOrientation/up``.
    public func applyingOrientation() throws -> DecodedImage {
        guard orientation != .up else { return self }
        let turned = try frames.map { ImageFrame(bitmap: try $0.bitmap.applying(orientation), duration: $0.duration) }
        var copy = try replacingFrames(turned)
        copy.orientation = .up
        return copy
    }
}
