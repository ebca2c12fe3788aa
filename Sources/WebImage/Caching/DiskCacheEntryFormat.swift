#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// How one disk-cache file is laid out: the image bytes first (so the file still opens as an
/// image in most viewers), then the metadata (four length-prefixed UTF-8 strings and the stored
/// date; JSON was the slowest part of a cache hit), then a fixed 24-byte trailer:
/// metadata length (UInt32), CRC-32 of the image bytes (UInt32), image length (UInt64), and the
/// magic `WICACHE1`. A file cut short or altered fails the trailer or the checksum, so a reader
/// can never mistake a torn or corrupt entry for an image.
enum DiskCacheEntryFormat {
    static let magic = Array("WICACHE1".utf8)
    static let trailerSize = 24

    static func encode(_ data: Data, metadata: ImageCacheMetadata) throws -> Data {
        let json = encodeMetadata(metadata)
        var file = Data(capacity: data.count + json.count + trailerSize)
        file.append(data)
        file.append(json)
        appendLittleEndian(UInt64(json.count), bytes: 4, to: &file)
        appendLittleEndian(UInt64(CRC32.checksum(data)), bytes: 4, to: &file)
        appendLittleEndian(UInt64(data.count), bytes: 8, to: &file)
        file.append(contentsOf: magic)
        return file
    }

    /// The image bytes and metadata, or `nil` when the file is not a whole, intact entry.
    static func decode(_ file: Data) -> (data: Data, metadata: ImageCacheMetadata)? {
        guard file.count >= trailerSize else { return nil }
        let trailer = file.index(file.endIndex, offsetBy: -trailerSize)
        guard file[(trailer + 16)...].elementsEqual(magic),
              let jsonLength = file.littleEndianUInt32(at: trailer).map(Int.init),
              let checksum = file.littleEndianUInt32(at: trailer + 4),
              let dataLength = file.littleEndianUInt64(at: trailer + 8) else { return nil }
        guard dataLength <= UInt64(file.count), Int(dataLength) + jsonLength + trailerSize == file.count else { return nil }
        let dataEnd = file.startIndex + Int(dataLength)
        let data = file[file.startIndex..<dataEnd]
        guard CRC32.checksum(data) == checksum else { return nil }
        guard let metadata = decodeMetadata(file[dataEnd..<trailer]) else { return nil }
        return (Data(data), metadata)
    }

    private static let absent = UInt64(UInt32.max)

    static func encodeMetadata(_ metadata: ImageCacheMetadata) -> Data {
        var block = Data()
        for field in [metadata.originalURL, metadata.contentType, metadata.etag, metadata.lastModified] {
            guard let field else {
                appendLittleEndian(absent, bytes: 4, to: &block)
                continue
            }
            let bytes = Data(field.utf8)
            appendLittleEndian(UInt64(bytes.count), bytes: 4, to: &block)
            block.append(bytes)
        }
        appendLittleEndian(metadata.storedDate.timeIntervalSince1970.bitPattern, bytes: 8, to: &block)
        return block
    }

    static func decodeMetadata(_ block: Data) -> ImageCacheMetadata? {
        var offset = block.startIndex
        var fields: [String?] = []
        for _ in 0..<4 {
            guard let length = block.littleEndianUInt32(at: offset).map(UInt64.init) else { return nil }
            offset += 4
            if length == absent {
                fields.append(nil)
                continue
            }
            guard length <= UInt64(block.endIndex - offset) else { return nil }
            fields.append(String(decoding: block[offset..<(offset + Int(length))], as: UTF8.self))
            offset += Int(length)
        }
        guard offset + 8 == block.endIndex, let stored = block.littleEndianUInt64(at: offset) else { return nil }
        let date = Date(timeIntervalSince1970: Double(bitPattern: stored))
        return ImageCacheMetadata(originalURL: fields[0], contentType: fields[1], etag: fields[2],
                                  lastModified: fields[3], storedDate: date)
    }

    private static func appendLittleEndian(_ value: UInt64, bytes: Int, to data: inout Data) {
        for byte in 0..<bytes { data.append(UInt8(truncatingIfNeeded: value >> (8 * UInt64(byte)))) }
    }
}
