import CLCMS2
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The human-readable name an ICC profile gives itself: its description tag (`desc`), read by
/// Little CMS in English (US) as ASCII, the name Pillow's `ImageCms.getProfileDescription` and
/// colour-managed viewers show ("Display P3", "sRGB IEC61966-2.1"...).
enum ICCProfileDescription {
    /// The longest description kept, in bytes: real ones are a few dozen.
    static let maximumLength = 1 << 12

    /// The description of `profile`; `""` for a profile without a description tag; `nil` when
    /// Little CMS cannot parse it (not a profile at all, as Pillow does not take it for one either)
    /// or it is over ``ICCTransformCache/maximumProfileSize``.
    static func description(of profile: Data) -> String? {
        guard !profile.isEmpty, profile.count <= ICCTransformCache.maximumProfileSize else { return nil }
        return profile.withUnsafeBytes { raw -> String? in
            guard let base = raw.baseAddress,
                  let handle = cmsOpenProfileFromMem(base, cmsUInt32Number(raw.count)) else { return nil }
            defer { cmsCloseProfile(handle) }
            let size = cmsGetProfileInfoASCII(handle, cmsInfoDescription, "en", "US", nil, 0)
            guard size > 1 else { return "" }
            var buffer = [CChar](repeating: 0, count: Int(min(size, cmsUInt32Number(maximumLength))) + 1)
            let written = cmsGetProfileInfoASCII(handle, cmsInfoDescription, "en", "US", &buffer, cmsUInt32Number(buffer.count - 1))
            guard written > 0 else { return "" }
            let characters = buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }
            return String(decoding: characters, as: UTF8.self)
        }
    }
}
