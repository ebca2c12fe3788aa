/// Helpers shared by the built-in transformers.
enum TransformSupport {
    /// The most pixels a transformer may produce: the decoders' default limit, so that no
    /// parameter (an upscale to 10⁹ pixels, a rotation of a huge canvas) can take unbounded memory.
    static let pixelLimit = DecodeOptions.defaultPixelLimit

    /// Throws ``WebImageError/tooLarge(_:)`` when a `width` × `height` result would pass ``pixelLimit``.
    static func checkSize(width: Int, height: Int, _ what: @autoclosure () -> String) throws {
        let (pixels, overflow) = width.multipliedReportingOverflow(by: height)
        if overflow || pixels > pixelLimit {
            throw WebImageError.tooLarge("\(what()) would make \(width)×\(height) pixels")
        }
    }

    /// The error for parameters that cannot produce an image (a crop outside the image, a size
    /// that is not positive, an angle that is not finite).
    ///
    /// `WebImageError` has no case for this yet; ``WebImageError/corruptData(_:)`` is what
    /// ``Bitmap`` and ``Resampler`` already throw for sizes that are not positive, so the
    /// transformers match them. Kept in one place so a dedicated case can replace it.
    static func invalid(_ reason: String) -> WebImageError {
        .corruptData("invalid transform: \(reason)")
    }

    /// `value` written the same way in every process: integers without a fraction, others in
    /// Swift's shortest round-tripping form.
    static func format(_ value: Double) -> String {
        if value.isFinite, value == value.rounded(), abs(value) < 1e15 { return String(Int(value)) }
        return String(value)
    }
}

extension DecodedImage {
    /// The image with `body` applied to every frame's bitmap; durations, loop count, format,
    /// orientation and scale are kept.
    func mappingFrames(_ body: (Bitmap) throws -> Bitmap) throws -> DecodedImage {
        try replacingFrames(frames.map { ImageFrame(bitmap: try body($0.bitmap), duration: $0.duration) })
    }
}

extension Bitmap {
    /// A same-sized bitmap made pixel by pixel: `transform` reads one source pixel (RGBA at
    /// `source[offset...]`) and writes the target pixel at the same offset. The one loop every
    /// per-pixel transformer shares.
    func mappingPixels(
        _ transform: (_ source: UnsafeBufferPointer<UInt8>, _ target: UnsafeMutableBufferPointer<UInt8>, _ offset: Int) -> Void
    ) throws -> Bitmap {
        try withUnsafeBytes { source in
            try Bitmap(width: width, height: height) { target in
                let from = source.bindMemory(to: UInt8.self)
                let to = target.bindMemory(to: UInt8.self)
                var offset = 0
                while offset < from.count {
                    transform(from, to, offset)
                    offset += 4
                }
            }
        }
    }
}
