#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The ICC profile of a JPEG: APP2 `ICC_PROFILE` segments, read and written.
///
/// A profile longer than one segment holds is split over several, each carrying its sequence
/// number (from 1) and the total count; they are joined by sequence number, whatever their order
/// in the file. An incomplete or inconsistent set means no profile (as libjpeg's
/// `jpeg_read_icc_profile` does).
enum JPEGICCProfile {
    private static let signature = Array("ICC_PROFILE".utf8) + [0]
    /// Profile bytes one APP2 segment carries: the segment's 65,535 bytes less the length field,
    /// the signature and the two sequence bytes.
    static let bytesPerSegment = 65_535 - 2 - 14

    /// The profile in `bytes` (a whole JPEG), or `nil`.
    static func read(_ bytes: UnsafeRawBufferPointer) -> Data? {
        var chunks: [Int: Range<Int>] = [:]
        var total = 0
        var offset = 2
        // Markers before the first scan; the profile is always among them.
        while offset + 4 <= bytes.count, bytes[offset] == 0xFF {
            let marker = bytes[offset + 1]
            if marker == 0xFF { offset += 1; continue }
            if marker == 0xDA || marker == 0xD9 { break }
            let length = Int(bytes[offset + 2]) << 8 | Int(bytes[offset + 3])
            guard length >= 2, offset + 2 + length <= bytes.count else { break }
            let payload = (offset + 4)..<(offset + 2 + length)
            if marker == 0xE2, payload.count > 14,
               bytes[payload.lowerBound..<(payload.lowerBound + 12)].elementsEqual(signature) {
                let sequence = Int(bytes[payload.lowerBound + 12])
                let count = Int(bytes[payload.lowerBound + 13])
                guard sequence >= 1, sequence <= count, total == 0 || total == count, chunks[sequence] == nil else { return nil }
                total = count
                chunks[sequence] = (payload.lowerBound + 14)..<payload.upperBound
            }
            offset += 2 + length
        }
        guard total > 0, chunks.count == total else { return nil }
        var profile = Data()
        for sequence in 1...total {
            guard let range = chunks[sequence] else { return nil }
            profile.append(contentsOf: bytes[range])
        }
        return profile
    }

    /// The profile in `data` (a whole JPEG), or `nil`.
    static func read(_ data: Data) -> Data? {
        data.withUnsafeBytes { read($0) }
    }

    /// `jpeg` with `profile` embedded as APP2 segments right after SOI (TurboJPEG cannot write
    /// them itself). A profile needing more than 255 segments (16 MB) is not embedded.
    static func embedding(_ profile: Data, in jpeg: Data) -> Data {
        guard !profile.isEmpty, jpeg.count >= 2 else { return jpeg }
        let count = (profile.count + bytesPerSegment - 1) / bytesPerSegment
        guard count <= 255 else { return jpeg }
        var output = Data(capacity: jpeg.count + profile.count + count * 18)
        output.append(jpeg.prefix(2))
        var start = profile.startIndex
        for sequence in 1...count {
            let end = min(start + bytesPerSegment, profile.endIndex)
            let length = 2 + 14 + (end - start)
            output.append(contentsOf: [0xFF, 0xE2, UInt8(length >> 8), UInt8(length & 0xFF)])
            output.append(contentsOf: signature)
            output.append(contentsOf: [UInt8(sequence), UInt8(count)])
            output.append(profile[start..<end])
            start = end
        }
        output.append(jpeg.dropFirst(2))
        return output
    }
}
