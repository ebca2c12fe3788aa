import CGIF
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Collects what giflib's encoder writes, in memory. giflib pushes bytes through a C callback
/// that gets the file handle; the handle's `UserData` points at this writer for one encode.
final class GIFWriter {
    /// The bytes written so far.
    private(set) var data = Data()

    /// The `OutputFunc` giflib calls.
    static let write: OutputFunc = { file, buffer, count in
        guard let file, let user = file.pointee.UserData, count >= 0 else { return 0 }
        guard count > 0, let buffer else { return count }
        let writer = Unmanaged<GIFWriter>.fromOpaque(user).takeUnretainedValue()
        writer.data.append(buffer, count: Int(count))
        return count
    }
}
