#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A copy of a file's bytes at an address that stays put for as long as this object lives,
/// for C decoders that keep the input pointer between calls (libavif reads the file whenever it
/// decodes a frame; libjxl reads from the input set once): `Data.withUnsafeBytes` promises its
/// pointer only inside its closure. Made once per animation source and shared by its readers'
/// decoders, each of which holds this object so the bytes outlive the decoder.
///
/// `Sendable` (checked, but for the one `nonisolated(unsafe)` property): the bytes are written
/// once, in `init`, before the object can be shared, and only read after; they are freed in
/// `deinit`, when no one holds the object any more. An unsafe buffer pointer is not `Sendable`
/// by itself, hence the marker on that property alone.
final class PinnedBytes: Sendable {
    nonisolated(unsafe) private let storage: UnsafeMutableBufferPointer<UInt8>
    /// How many bytes the file has (the allocation has at least one, so `start` is never nil).
    let count: Int

    /// Copies `data`.
    init(copying data: Data) {
        storage = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: max(1, data.count))
        _ = data.copyBytes(to: storage)
        count = data.count
    }

    deinit {
        storage.deallocate()
    }

    /// The first byte; valid while this object lives.
    var start: UnsafePointer<UInt8> {
        // `allocate` never returns an empty buffer for a capacity of at least one.
        UnsafePointer(storage.baseAddress.unsafelyUnwrapped)
    }
}
