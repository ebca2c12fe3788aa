/// The one reader of fixed-width unsigned integers stored in bytes: the container walkers (PNG
/// chunk lengths, JPEG segment lengths, ISOBMFF box sizes, RIFF chunk sizes), the header readers
/// (PNG, GIF, WebP, APNG and TIFF/EXIF fields), the disk cache's entry trailer and journal, and
/// the service's IPv6 address checks all read their big- and little-endian fields here.
///
/// Each read takes the index of the field's first byte in the collection's own indices (what the
/// collection's subscript takes: a `Data` or `ArraySlice` slice keeps its parent's indices, so
/// its first byte is at `startIndex`, not 0) and returns `nil` when the field does not lie wholly
/// inside `startIndex..<endIndex`: a hostile length or offset never traps. Works for `[UInt8]`,
/// `ArraySlice<UInt8>`, `Data`, `UnsafeRawBufferPointer` and its slices alike.
///
/// `@inlinable` so that a caller in another module gets a copy specialized for its collection
/// (a few loads and shifts) rather than a generic call per byte; these reads sit in header paths.
extension RandomAccessCollection where Element == UInt8, Index == Int {
    /// The big-endian (network order) `UInt16` at `index`, or `nil` when fewer than 2 bytes are there.
    @inlinable package func bigEndianUInt16(at index: Int) -> UInt16? {
        unsignedInteger(UInt16.self, byteCount: 2, at: index, bigEndian: true)
    }

    /// The big-endian `UInt32` at `index`, or `nil` when fewer than 4 bytes are there.
    @inlinable package func bigEndianUInt32(at index: Int) -> UInt32? {
        unsignedInteger(UInt32.self, byteCount: 4, at: index, bigEndian: true)
    }

    /// The big-endian `UInt64` at `index`, or `nil` when fewer than 8 bytes are there.
    @inlinable package func bigEndianUInt64(at index: Int) -> UInt64? {
        unsignedInteger(UInt64.self, byteCount: 8, at: index, bigEndian: true)
    }

    /// The little-endian `UInt16` at `index`, or `nil` when fewer than 2 bytes are there.
    @inlinable package func littleEndianUInt16(at index: Int) -> UInt16? {
        unsignedInteger(UInt16.self, byteCount: 2, at: index, bigEndian: false)
    }

    /// The little-endian 24-bit unsigned integer at `index` (WebP's `VP8X` canvas and `ANMF`
    /// fields), or `nil` when fewer than 3 bytes are there.
    @inlinable package func littleEndianUInt24(at index: Int) -> UInt32? {
        unsignedInteger(UInt32.self, byteCount: 3, at: index, bigEndian: false)
    }

    /// The little-endian `UInt32` at `index`, or `nil` when fewer than 4 bytes are there.
    @inlinable package func littleEndianUInt32(at index: Int) -> UInt32? {
        unsignedInteger(UInt32.self, byteCount: 4, at: index, bigEndian: false)
    }

    /// The little-endian `UInt64` at `index`, or `nil` when fewer than 8 bytes are there.
    @inlinable package func littleEndianUInt64(at index: Int) -> UInt64? {
        unsignedInteger(UInt64.self, byteCount: 8, at: index, bigEndian: false)
    }

    /// The `UInt16` at `index` in the given order (a TIFF header's `II`/`MM` decides it at run time).
    @inlinable package func uint16(at index: Int, bigEndian: Bool) -> UInt16? {
        unsignedInteger(UInt16.self, byteCount: 2, at: index, bigEndian: bigEndian)
    }

    /// The `UInt32` at `index` in the given order.
    @inlinable package func uint32(at index: Int, bigEndian: Bool) -> UInt32? {
        unsignedInteger(UInt32.self, byteCount: 4, at: index, bigEndian: bigEndian)
    }

    /// `byteCount` bytes (at most `T`'s size) from `index` as one `T`, most significant byte first
    /// when `bigEndian`; `nil` unless `index..<index + byteCount` lies inside the collection.
    @inlinable func unsignedInteger<T: FixedWidthInteger & UnsignedInteger>(
        _: T.Type, byteCount: Int, at index: Int, bigEndian: Bool
    ) -> T? {
        // `index` is checked against both ends before the subtraction, so it cannot overflow.
        guard index >= startIndex, index <= endIndex, endIndex - index >= byteCount else { return nil }
        var value: T = 0
        if bigEndian {
            for position in index..<index + byteCount { value = value &<< 8 | T(self[position]) }
        } else {
            for position in (index..<index + byteCount).reversed() { value = value &<< 8 | T(self[position]) }
        }
        return value
    }
}
