import CWebP
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The ICC profile of a WebP: the `ICCP` chunk of an extended (VP8X) file, read with libwebp's
/// demuxer and written with its muxer.
enum WebPICCProfile {
    /// The profile in the WebP at `base`, or `nil`.
    static func read(_ base: UnsafePointer<UInt8>, count: Int) -> Data? {
        var webPData = WebPData(bytes: base, size: count)
        guard let demuxer = WebPDemux(&webPData) else { return nil }
        defer { WebPDemuxDelete(demuxer) }
        var iterator = WebPChunkIterator()
        guard WebPDemuxGetChunk(demuxer, "ICCP", 1, &iterator) != 0 else { return nil }
        defer { WebPDemuxReleaseChunkIterator(&iterator) }
        guard let bytes = iterator.chunk.bytes, iterator.chunk.size > 0 else { return nil }
        return Data(bytes: bytes, count: iterator.chunk.size)
    }

    /// `webp` with `profile` as its `ICCP` chunk (the muxer turns a simple file into an extended one).
    /// - Throws: ``WebImageError/encodingFailed(_:)`` when libwebp's muxer refuses.
    static func embedding(_ profile: Data, in webp: Data) throws -> Data {
        guard !profile.isEmpty else { return webp }
        return try webp.withUnsafeBytes { file in
            try profile.withUnsafeBytes { icc in
                var bitstream = WebPData(bytes: file.bindMemory(to: UInt8.self).baseAddress, size: file.count)
                guard let mux = WebPMuxCreate(&bitstream, 1) else { throw WebImageError.encodingFailed("WebP mux") }
                defer { WebPMuxDelete(mux) }
                var chunk = WebPData(bytes: icc.bindMemory(to: UInt8.self).baseAddress, size: icc.count)
                guard WebPMuxSetChunk(mux, "ICCP", &chunk, 1) == WEBP_MUX_OK else {
                    throw WebImageError.encodingFailed("WebP: cannot add the ICC profile")
                }
                var output = WebPData()
                guard WebPMuxAssemble(mux, &output) == WEBP_MUX_OK, let bytes = output.bytes else {
                    throw WebImageError.encodingFailed("WebP: cannot assemble the file")
                }
                defer { WebPDataClear(&output) }
                return Data(bytes: bytes, count: output.size)
            }
        }
    }
}
