#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The kernel a ``Resampler`` weighs source pixels with.
public enum ResamplingFilter: String, Sendable, Hashable, CaseIterable {
    /// Area average: fast, soft, no ringing.
    case box
    /// Linear interpolation (bilinear), widened when shrinking.
    case triangle
    /// Catmull-Rom bicubic: sharp, slight ringing (Pillow's `BICUBIC`).
    case cubic
    /// Lanczos with 3 lobes: the sharpest, for high-quality thumbnails.
    case lanczos3

    /// Half-width of the kernel in source pixels at scale 1.
    var support: Double {
        switch self {
        case .box: 0.5
        case .triangle: 1
        case .cubic: 2
        case .lanczos3: 3
        }
    }

    func weight(_ x: Double) -> Double {
        let x = abs(x)
        switch self {
        case .box:
            return x <= 0.5 ? 1 : 0
        case .triangle:
            return x < 1 ? 1 - x : 0
        case .cubic:
            let a = -0.5
            if x < 1 { return ((a + 2) * x - (a + 3)) * x * x + 1 }
            if x < 2 { return (((x - 5) * x + 8) * x - 4) * a }
            return 0
        case .lanczos3:
            guard x < 3 else { return 0 }
            guard x > 1e-8 else { return 1 }
            let px = Double.pi * x
            return 3 * sin(px) * sin(px / 3) / (px * px)
        }
    }
}
