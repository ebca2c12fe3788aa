import CGIF
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Feeds giflib from memory. giflib pulls bytes through a C callback that gets the file handle;
/// the handle's `UserData` points at this reader for the length of one decode.
final class GIFReader {
    private let data: Data
    private var offset: Int
    /// Set when giflib asked for bytes past the end: the file is truncated.
    private(set) var hitEnd = false
    /// The size of the whole file.
    var byteCount: Int { data.count }

    init(data: Data) {
        self.data = data
        self.offset = data.startIndex
    }

    /// Moves to `offset` bytes from the start: giflib reads records straight from this reader,
    /// so between records this is how a decode jumps to another frame.
    func seek(to offset: Int) {
        self.offset = data.startIndex + max(0, min(offset, data.count))
    }

    /// The `InputFunc` giflib calls.
    static let read: InputFunc = { file, buffer, count in
        guard let file, let buffer, count > 0, let user = file.pointee.UserData else { return 0 }
        let reader = Unmanaged<GIFReader>.fromOpaque(user).takeUnretainedValue()
        let available = reader.data.endIndex - reader.offset
        let length = min(Int(count), available)
        if length < Int(count) { reader.hitEnd = true }
        guard length > 0 else { return 0 }
        reader.data.copyBytes(to: buffer, from: reader.offset..<(reader.offset + length))
        reader.offset += length
        return Int32(length)
    }
}
