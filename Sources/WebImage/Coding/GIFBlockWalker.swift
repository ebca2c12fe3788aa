/// The blocks of a GIF after its logical screen descriptor and global colour table, in file
/// order, walked by their sub-block lengths only: no LZW data is decompressed. The one walker
/// behind ``GIFAnimationSource``'s frame list, ``GIFICCProfile`` and ``ImageInfo``'s GIF reader.
///
/// The walk ends at the trailer (`0x3B`), at a byte that starts no block (``isMalformed``), or
/// where a block runs past the end of the data (``isTruncated``; an image whose descriptor is
/// whole is still yielded, its data clipped to the end); ``end`` says which. Every block moves the walk
/// forward by at least two bytes, so it is bounded by the data's size.
struct GIFBlockWalker: Sequence, IteratorProtocol {
    /// One block and where its parts are in the walked bytes.
    enum Block: Equatable {
        /// An extension (`0x21`): its label (`0xF9` graphic control, `0xFF` application...) and
        /// its data sub-blocks, from the first length byte to just after the terminator.
        case `extension`(label: UInt8, subBlocks: Range<Int>)
        /// An image: the offset of its descriptor (the `0x2C` byte), and its image data's
        /// sub-blocks (after the LZW code size) to just after the terminator.
        case image(descriptor: Int, subBlocks: Range<Int>)
    }

    /// Why a walk ended.
    enum End: Equatable {
        /// At the trailer.
        case trailer
        /// At a byte that starts no block.
        case malformed
        /// The data ended between blocks, without a trailer.
        case endOfData
        /// The data ended inside the header, an extension or an image descriptor.
        case insideBlock
        /// The data ended inside an image's data (the image was yielded, clipped).
        case insideImageData
    }

    private let bytes: UnsafeRawBufferPointer
    private var offset: Int
    /// Why the walk ended; `nil` while it goes on.
    private(set) var end: End?
    /// Whether the data ended before the trailer.
    var isTruncated: Bool { end == .endOfData || end == .insideBlock || end == .insideImageData }
    /// Whether the walk met a byte that starts no block.
    var isMalformed: Bool { end == .malformed }

    /// Walks `bytes`, a whole GIF from its signature; no blocks when it is shorter than the
    /// header and screen descriptor (``isTruncated``), or its global colour table does not fit.
    init(_ bytes: UnsafeRawBufferPointer) {
        self.bytes = bytes
        offset = 13
        guard bytes.count >= 13 else {
            end = .insideBlock
            return
        }
        let screenFlags = bytes[10]
        if screenFlags & 0x80 != 0 { offset += 3 << (Int(screenFlags & 0x07) + 1) }
    }

    mutating func next() -> Block? {
        guard end == nil else { return nil }
        guard offset < bytes.count else { return finish(.endOfData) }
        switch bytes[offset] {
        case 0x21:
            guard offset + 2 < bytes.count, let after = Self.subBlocksEnd(from: offset + 2, in: bytes) else {
                return finish(.insideBlock)
            }
            let block = Block.extension(label: bytes[offset + 1], subBlocks: offset + 2..<after)
            offset = after
            return block
        case 0x2C:
            // Descriptor (10 bytes), local colour table, LZW minimum code size, data sub-blocks.
            guard offset + 10 <= bytes.count else { return finish(.insideBlock) }
            let flags = bytes[offset + 9]
            var dataStart = offset + 10 + 1
            if flags & 0x80 != 0 { dataStart += 3 << (Int(flags & 0x07) + 1) }
            guard let after = Self.subBlocksEnd(from: dataStart, in: bytes) else {
                // The descriptor is whole but its data runs past the end: the image is yielded
                // (its data clipped to the end), as a decoder keeps such a frame, and the walk ends.
                end = .insideImageData
                return .image(descriptor: offset, subBlocks: Swift.min(dataStart, bytes.count)..<bytes.count)
            }
            let block = Block.image(descriptor: offset, subBlocks: dataStart..<after)
            offset = after
            return block
        case 0x3B:
            return finish(.trailer)
        default:
            return finish(.malformed)
        }
    }

    private mutating func finish(_ reason: End) -> Block? {
        end = reason
        return nil
    }

    /// The offset just after the chain of sub-blocks starting at `start` (its zero-length
    /// terminator included), or `nil` when the chain runs past the end of `bytes`.
    static func subBlocksEnd(from start: Int, in bytes: UnsafeRawBufferPointer) -> Int? {
        var position = start
        while position < bytes.count {
            let length = Int(bytes[position])
            position += 1
            if length == 0 { return position }
            guard length <= bytes.count - position else { return nil }
            position += length
        }
        return nil
    }

    /// The data of each sub-block in `chain` (a range from a ``Block``), in order, without their
    /// length bytes.
    static func subBlocks(in chain: Range<Int>, of bytes: UnsafeRawBufferPointer) -> [Range<Int>] {
        var found: [Range<Int>] = []
        var position = chain.lowerBound
        while position < chain.upperBound {
            let length = Int(bytes[position])
            position += 1
            guard length > 0, length <= chain.upperBound - position else { break }
            found.append(position..<position + length)
            position += length
        }
        return found
    }
}
