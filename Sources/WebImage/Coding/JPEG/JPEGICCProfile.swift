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
        var chunks: [Int: UnsafeRawBufferPointer] = [:]
        var total = 0
        // The profile is always among the segments before the first scan.
        for chunk in JPEGMarkerWalker.payloads(of: JPEGMarkerWalker.Marker.app2, signature: signature, in: bytes) where chunk.count > 2 {
            let sequence = Int(chunk[0]), count = Int(chunk[1])
            guard sequence >= 1, sequence <= count, total == 0 || total == count, chunks[sequence] == nil else { return nil }
            total = count
            chunks[sequence] = UnsafeRawBufferPointer(rebasing: chunk[2...])
        }
        guard total > 0, chunks.count == total else { return nil }
        var profile = Data()
        for sequence in 1...total {
            guard let chunk = chunks[sequence] else { return nil }
            profile.append(contentsOf: chunk)
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
