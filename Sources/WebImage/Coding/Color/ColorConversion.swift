#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Converts decoded pixels from the colour space their file declares to sRGB, with Little CMS.
///
/// Decoders call it on their RGBA rows after decoding (for thumbnails, after the resample, so the
/// conversion touches only the pixels that are returned); CMYK JPEGs go through it before the
/// resample, since their samples are not RGB yet. The rendering intent is perceptual, or relative
/// colorimetric when the profile has no perceptual table, as browsers do; matrix/TRC profiles
/// (Display P3, Adobe RGB) behave the same under both. Alpha is copied untouched.
///
/// Transforms are cached per profile (``ICCTransformCache``), so only the first image with a
/// given profile pays for building one. An image without a profile, or with an sRGB one, is
/// returned as it is at the cost of one lookup. Profiles lcms2 cannot read, or whose colour
/// space is not the pixels' (a grey profile on a colour JPEG), are ignored, as browsers ignore them.
///
/// AVIF, HEIF and JPEG XL convert with the profile from their `colr` box or colour encoding, or
/// with one made by ``ColorProfileBuilder`` from nclx values; full-size decodes convert their
/// rows in place while making the bitmap, thumbnails after the resample. Matrix/TRC profiles run
/// on ``MatrixShaperTransform`` instead of lcms2's per-pixel loop.
package enum ColorConversion {
    /// `bitmap` converted from `iccProfile` to sRGB, or `bitmap` itself when there is nothing to
    /// convert (no usable profile, or an sRGB one).
    /// - Parameter parallel: split a large image over two threads (``DecodeOptions/parallelDecoding``).
    /// - Throws: ``WebImageError/tooLarge(_:)`` when the converted bitmap's memory cannot be had.
    package static func convertToSRGB(_ bitmap: Bitmap, iccProfile: Data?, parallel: Bool = true) throws -> Bitmap {
        guard let iccProfile, let transform = ICCTransformCache.shared.transform(for: iccProfile, input: .rgba) else {
            return bitmap
        }
        return try convert(bitmap, with: transform, parallel: parallel)
    }

    /// `bitmap` converted by `transform` into a new bitmap.
    static func convert(_ bitmap: Bitmap, with transform: ICCTransform, parallel: Bool) throws -> Bitmap {
        try bitmap.withUnsafeBytes { source in
            try Bitmap(width: bitmap.width, height: bitmap.height) { target in
                guard let from = source.baseAddress, let to = target.baseAddress else { return }
                transform.run(from, to, pixelCount: bitmap.width * bitmap.height, parallel: parallel)
            }
        }
    }

    /// The transform from `iccProfile` to sRGB for RGBA8 pixels, or `nil` when there is nothing
    /// to convert; for decoders that convert their rows in place as they decode them
    /// (``RowConversionPipeline``).
    static func rgbaTransform(for iccProfile: Data?) -> ICCTransform? {
        guard let iccProfile else { return nil }
        return ICCTransformCache.shared.transform(for: iccProfile, input: .rgba)
    }

    /// Converts RGBA8 pixels in place from `iccProfile` to sRGB (nothing when there is nothing to
    /// convert), for decoders that own the bytes of a bitmap still being made.
    static func convertInPlace(_ buffer: UnsafeMutableRawBufferPointer, iccProfile: Data?, parallel: Bool) {
        guard let transform = rgbaTransform(for: iccProfile), let base = buffer.baseAddress else { return }
        transform.run(UnsafeRawPointer(base), base, pixelCount: buffer.count / 4, parallel: parallel)
    }

    /// `profile` when it describes RGB pixels (its header says `RGB `), the only profiles a
    /// decoded image can carry: a grey or CMYK profile does not describe RGBA output.
    static func keptProfile(_ profile: Data?) -> Data? {
        guard let profile, profile.count >= 128,
              profile[profile.startIndex + 16..<profile.startIndex + 20].elementsEqual("RGB ".utf8) else { return nil }
        return profile
    }

    /// Whether `iccProfile` asks for a conversion of RGB pixels (it is readable, RGB and not sRGB).
    package static func needsConversion(iccProfile: Data?) -> Bool {
        guard let iccProfile else { return false }
        return ICCTransformCache.shared.transform(for: iccProfile, input: .rgba) != nil
    }

    /// Converts CMYK8 pixels (4 bytes each, `inverted` for Adobe's files) to opaque sRGB RGBA8 in
    /// place through `iccProfile`. Returns `false`, leaving the pixels untouched, when the profile
    /// is not a usable CMYK profile; the caller then falls back to the plain formula.
    @inline(never) // Part of the workaround for Swift 6.3's optimizer crash (see ICCTransform.run).
    static func convertCMYKInPlace(_ buffer: UnsafeMutableRawBufferPointer, iccProfile: Data?, inverted: Bool,
                                   parallel: Bool) -> Bool {
        guard let iccProfile else { return false }
        let input: ICCTransform.Input = inverted ? .invertedCMYK : .cmyk
        guard let transform = ICCTransformCache.shared.transform(for: iccProfile, input: input) else { return false }
        guard let base = buffer.baseAddress else { return true }
        transform.run(UnsafeRawPointer(base), base, pixelCount: buffer.count / 4, parallel: parallel)
        // The output's alpha byte still holds K: CMYK has no alpha, so the image is opaque.
        let bytes = buffer.bindMemory(to: UInt8.self)
        var index = 3
        while index < bytes.count {
            bytes[index] = 255
            index += 4
        }
        return true
    }
}

extension ColorConversion {
    /// `image` (decoded with its colours kept) with every frame converted from `profile` to sRGB,
    /// or, under ``DecodeOptions/keepsColors``, unchanged with `profile` recorded in
    /// ``DecodedImage/iccProfile``. For coders that convert a whole decoded image at once.
    /// - Throws: ``WebImageError/tooLarge(_:)`` when a converted frame's memory cannot be had.
    package static func applying(_ profile: Data?, to image: DecodedImage, options: DecodeOptions) throws -> DecodedImage {
        guard let profile else { return image }
        if options.keepsColors {
            var kept = image
            kept.iccProfile = keptProfile(profile)
            return kept
        }
        guard needsConversion(iccProfile: profile) else { return image }
        let frames = try image.frames.map { frame in
            var converted = frame
            converted.bitmap = try convertToSRGB(frame.bitmap, iccProfile: profile, parallel: options.parallelDecoding)
            return converted
        }
        return try image.replacingFrames(frames)
    }
}
