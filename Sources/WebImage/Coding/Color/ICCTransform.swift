import CLCMS2
import Dispatch
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// One lcms2 transform from an embedded profile to sRGB, made once and shared by every decode
/// that meets the same profile.
///
/// Made with `cmsFLAGS_NOCACHE`: lcms2's only mutable state in a transform is its one-pixel
/// cache, so without it `cmsDoTransform` only reads the transform and may run on many threads at
/// once. The handle is kept as an integer (as ``PixelBuffer`` keeps its address) because nothing
/// writes through it after `init`.
///
/// RGB matrix/TRC profiles (most photos' Display P3 or Adobe RGB) skip lcms2's per-pixel
/// machinery: ``MatrixShaperTransform`` runs the same arithmetic lcms2 would, about ten times
/// faster.
final class ICCTransform: Sendable {
    /// The pixels a transform reads: RGBA8 (alpha copied through) or CMYK8, plain or inverted
    /// (Adobe's CMYK JPEGs store 255 for no ink).
    enum Input: Hashable, Sendable {
        case rgba, cmyk, invertedCMYK

        var lcmsFormat: cmsUInt32Number {
            switch self {
            case .rgba: webimage_TYPE_RGBA_8
            case .cmyk: webimage_TYPE_CMYK_8
            case .invertedCMYK: webimage_TYPE_CMYK_8_REV
            }
        }

        var colorSpace: cmsColorSpaceSignature { self == .rgba ? cmsSigRgbData : cmsSigCmykData }
    }

    private let address: UInt
    /// Set for RGB matrix/TRC profiles; then `address` is 0.
    private let matrixShaper: MatrixShaperTransform?
    let input: Input

    /// Whether this transform runs through ``MatrixShaperTransform`` (for tests).
    var isMatrixShaper: Bool { matrixShaper != nil }

    /// A transform from `profile` to sRGB, or `nil` when lcms2 cannot read the profile, the
    /// profile's colour space does not match `input`, or no transform can be made from it.
    /// The intent is perceptual, or relative colorimetric when the profile has no perceptual
    /// table (what browsers do); no black point compensation.
    /// - Parameter matrixShaper: whether a matrix/TRC profile may use ``MatrixShaperTransform``
    ///   (tests turn it off to compare with lcms2).
    init?(profile bytes: Data, input: Input, matrixShaper allowsMatrixShaper: Bool = true) {
        var matrixShaper: MatrixShaperTransform?
        let handle: cmsHTRANSFORM? = bytes.withUnsafeBytes { raw -> cmsHTRANSFORM? in
            guard let base = raw.baseAddress, raw.count > 0,
                  let source = cmsOpenProfileFromMem(base, cmsUInt32Number(raw.count)) else { return nil }
            defer { cmsCloseProfile(source) }
            guard cmsGetColorSpace(source) == input.colorSpace else { return nil }
            if input == .rgba, allowsMatrixShaper, let fast = MatrixShaperTransform(profile: source) {
                matrixShaper = fast
                return nil
            }
            guard let sRGB = cmsCreate_sRGBProfile() else { return nil }
            defer { cmsCloseProfile(sRGB) }
            let intent: cmsUInt32Number = cmsIsIntentSupported(source, cmsUInt32Number(INTENT_PERCEPTUAL), cmsUInt32Number(LCMS_USED_AS_INPUT)) != 0
                ? cmsUInt32Number(INTENT_PERCEPTUAL) : cmsUInt32Number(INTENT_RELATIVE_COLORIMETRIC)
            var flags = cmsUInt32Number(cmsFLAGS_NOCACHE)
            if input == .rgba { flags |= cmsUInt32Number(cmsFLAGS_COPY_ALPHA) }
            return cmsCreateTransformTHR(nil, source, input.lcmsFormat, sRGB, webimage_TYPE_RGBA_8, intent, flags)
        }
        if let matrixShaper {
            self.address = 0
            self.matrixShaper = matrixShaper
        } else {
            guard let handle else { return nil }
            self.address = UInt(bitPattern: handle)
            self.matrixShaper = nil
        }
        self.input = input
    }

    deinit {
        if let handle = UnsafeMutableRawPointer(bitPattern: address) { cmsDeleteTransform(handle) }
    }

    /// Converts `pixelCount` pixels (4 bytes each) from `source` to `target`, which may be the
    /// same memory: lcms2 reads a pixel before it writes it. A CMYK input leaves alpha to the
    /// caller.
    func run(_ source: UnsafeRawPointer, _ target: UnsafeMutableRawPointer, pixelCount: Int) {
        if let matrixShaper {
            matrixShaper.run(source, target, pixelCount: pixelCount)
            return
        }
        cmsDoTransform(UnsafeMutableRawPointer(bitPattern: address), source, target, cmsUInt32Number(pixelCount))
    }

    /// Converts `pixelCount` pixels, split in two halves on two threads when `parallel` and the
    /// image is large enough to gain from it (the transform is shared read-only, see the type).
    @inline(never) // Swift 6.3's optimizer fails its ownership check when this is inlined.
    func run(_ source: UnsafeRawPointer, _ target: UnsafeMutableRawPointer, pixelCount: Int, parallel: Bool) {
        guard parallel, pixelCount >= 1 << 20, Bitmap.hasSecondCore else {
            run(source, target, pixelCount: pixelCount)
            return
        }
        let half = pixelCount / 2
        let from = UInt(bitPattern: source), to = UInt(bitPattern: target)
        DispatchQueue.concurrentPerform(iterations: 2) { part in
            let start = part == 0 ? 0 : half
            let count = part == 0 ? half : pixelCount - half
            guard let s = UnsafeRawPointer(bitPattern: from + UInt(start * 4)),
                  let t = UnsafeMutableRawPointer(bitPattern: to + UInt(start * 4)) else { return }
            self.run(s, t, pixelCount: count)
        }
    }
}
