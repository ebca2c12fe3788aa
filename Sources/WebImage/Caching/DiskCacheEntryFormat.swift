import Foundation

/// How one disk-cache file is laid out: the image bytes first (so the file still opens as an
/// image in most viewers), then the metadata as JSON, then a fixed 24-byte trailer:
/// metadata length (UInt32), CRC-32 of the image bytes (UInt32), image length (UInt64), and the
/// magic `WICACHE1`. A file cut short or altered fails the trailer or the checksum, so a reader
/// can never mistake a torn or corrupt entry for an image.
enum DiskCacheEntryFormat {
    static let magic = Array("WICACHE1".utf8)
    static let trailerSize = 24

    static func encode(_ data: Data, metadata: ImageCacheMetadata) throws -> Data {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .secondsSince1970
        let json = try encoder.encode(metadata)
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
        guard file[(trailer + 16)...].elementsEqual(magic) else { return nil }
        let jsonLength = Int(readLittleEndian(file, at: trailer, bytes: 4))
        let checksum = UInt32(readLittleEndian(file, at: trailer + 4, bytes: 4))
        let dataLength = readLittleEndian(file, at: trailer + 8, bytes: 8)
        guard dataLength <= UInt64(file.count), Int(dataLength) + jsonLength + trailerSize == file.count else { return nil }
        let dataEnd = file.startIndex + Int(dataLength)
        let data = file[file.startIndex..<dataEnd]
        guard CRC32.checksum(data) == checksum else { return nil }
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .secondsSince1970
        guard let metadata = try? decoder.decode(ImageCacheMetadata.self, from: file[dataEnd..<trailer]) else { return nil }
        return (Data(data), metadata)
    }

    private static func appendLittleEndian(_ value: UInt64, bytes: Int, to data: inout Data) {
        for byte in 0..<bytes { data.append(UInt8(truncatingIfNeeded: value >> (8 * UInt64(byte)))) }
    }

    private static func readLittleEndian(_ data: Data, at offset: Int, bytes: Int) -> UInt64 {
        var value: UInt64 = 0
        for byte in 0..<bytes { value |= UInt64(data[offset + byte]) << (8 * UInt64(byte)) }
        return value
    }
}
