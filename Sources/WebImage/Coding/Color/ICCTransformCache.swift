import CLCMS2
#if canImport(Glibc)
import Glibc
#endif
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The transforms made so far, keyed by the profile's bytes (hashed by the dictionary, compared
/// in full) and the input pixel layout, so a profile is parsed and its transform built once.
///
/// Bounded: past ``capacity`` entries the oldest one goes. A profile that is sRGB, unreadable or
/// of the wrong colour space is remembered as "no conversion", so those cost one lookup too.
final class ICCTransformCache: Sendable {
    /// What a profile needs: nothing (sRGB or unusable), or a transform.
    enum Entry: Sendable {
        case none
        case transform(ICCTransform)
    }

    /// The profile's bytes as an array: a copy the size of the profile, never a slice that keeps
    /// a whole source file alive in the cache (and a plain heap pointer that LeakSanitizer sees,
    /// where `Data`'s enum-packed storage pointer looked leaked to it).
    private struct Key: Hashable, Sendable {
        var profile: [UInt8]
        var input: ICCTransform.Input
    }

    /// The cache every coder uses.
    static let shared = ICCTransformCache(capacity: 16)

    /// Profiles larger than this are ignored (left unconverted): real ones are under 1 MB, and
    /// building a transform from a huge hostile one would cost time on every new file.
    static let maximumProfileSize = 4 << 20

    let capacity: Int
    private let entries = Locked<(map: [Key: Entry], order: [Key])>(([:], []))

    init(capacity: Int) {
        self.capacity = max(1, capacity)
    }

    /// The transform for `profile` read as `input`, made on first use; `nil` when no conversion is
    /// needed or possible.
    // Not inlined: part of the workaround for Swift 6.3's optimizer crash (see ICCTransform.run).
    @inline(never)
    func transform(for profile: Data, input: ICCTransform.Input) -> ICCTransform? {
        guard !profile.isEmpty, profile.count <= Self.maximumProfileSize else { return nil }
        let key = Key(profile: [UInt8](profile), input: input)
        if let entry = entries.withLock({ $0.map[key] }) { return entry.transform }
        // Built outside the lock: two threads meeting a new profile at once both build one, and
        // the second to finish is dropped; no thread waits on another's lcms2 work.
        let made: Entry
        if input == .rgba, SRGBProfileDetection.isSRGB(profile) {
            made = .none
        } else if let transform = ICCTransform(profile: profile, input: input) {
            made = .transform(transform)
        } else {
            made = .none
        }
        let capacity = self.capacity
        return entries.withLock { state -> Entry in
            if let existing = state.map[key] { return existing }
            state.map[key] = made
            state.order.append(key)
            if state.order.count > capacity {
                state.map[state.order.removeFirst()] = nil
            }
            return made
        }.transform
    }

    /// How many profiles are remembered (for tests).
    var count: Int { entries.withLock { $0.map.count } }
}

extension ICCTransformCache.Entry {
    var transform: ICCTransform? {
        if case .transform(let transform) = self { return transform }
        return nil
    }
}

/// Whether a profile is sRGB in effect, so its pixels need no conversion: an RGB matrix/TRC
/// profile whose colorants are sRGB's (D50-adapted, as profiles store them) and whose red, green
/// and blue curves follow sRGB's within a fraction of a code value.
enum SRGBProfileDetection {
    private static let colorants: [(cmsTagSignature, (Double, Double, Double))] = [
        (cmsSigRedColorantTag, (0.4361, 0.2225, 0.0139)),
        (cmsSigGreenColorantTag, (0.3851, 0.7169, 0.0971)),
        (cmsSigBlueColorantTag, (0.1431, 0.0606, 0.7141)),
    ]

    static func isSRGB(_ profile: Data) -> Bool {
        profile.withUnsafeBytes { (raw: UnsafeRawBufferPointer) -> Bool in
            guard let base = raw.baseAddress,
                  let handle = cmsOpenProfileFromMem(base, cmsUInt32Number(raw.count)) else { return false }
            defer { cmsCloseProfile(handle) }
            guard cmsGetColorSpace(handle) == cmsSigRgbData, cmsIsMatrixShaper(handle) != 0 else { return false }
            for (tag, expected) in colorants {
                guard let xyz = cmsReadTag(handle, tag)?.assumingMemoryBound(to: cmsCIEXYZ.self).pointee,
                      abs(xyz.X - expected.0) < 0.003, abs(xyz.Y - expected.1) < 0.003, abs(xyz.Z - expected.2) < 0.003
                else { return false }
            }
            for tag in [cmsSigRedTRCTag, cmsSigGreenTRCTag, cmsSigBlueTRCTag] {
                guard let curve = cmsReadTag(handle, tag) else { return false }
                let tone = OpaquePointer(curve)
                for step in 1...16 {
                    let x = Float(step) / 16
                    let encoded = Double(x)
                    let linear = encoded <= 0.04045 ? encoded / 12.92 : pow((encoded + 0.055) / 1.055, 2.4)
                    if abs(Double(cmsEvalToneCurveFloat(tone, x)) - linear) > 0.001 { return false }
                }
            }
            return true
        }
    }
}
