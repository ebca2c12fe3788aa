import CZlib
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// CRC-32 (ISO 3309, as PNG uses it): PNG chunks and disk-cache entry checks. zlib's
/// implementation, which is several times faster than a byte-at-a-time table in Swift.
enum CRC32 {
    static func checksum(_ data: Data) -> UInt32 {
        data.withUnsafeBytes { checksum($0) }
    }

    static func checksum(_ bytes: UnsafeRawBufferPointer) -> UInt32 {
        guard let base = bytes.bindMemory(to: UInt8.self).baseAddress, bytes.count > 0 else { return 0 }
        var crc = crc32(0, nil, 0)
        var offset = 0
        // zlib takes 32-bit lengths.
        while offset < bytes.count {
            let length = min(bytes.count - offset, Int(UInt32.max >> 1))
            crc = crc32(crc, base + offset, UInt32(length))
            offset += length
        }
        return UInt32(truncatingIfNeeded: crc)
    }
}
