import Foundation
import Testing
import WebImageTestSupport
@testable import WebImage

/// ``JPEGMarkerWalker`` reads segments the way libjpeg's `next_marker` does, and every reader of
/// JPEG segments (header, EXIF/XMP, Adobe, plausibility) goes through it.
@Suite struct JPEGMarkerWalkerTests {
    typealias Segment = JPEGMarkerWalker.Segment

    private func walk(_ bytes: [UInt8]) -> [Segment] {
        bytes.withUnsafeBytes { Array(JPEGMarkerWalker($0)) }
    }

    @Test func fillBytesBeforeAMarkerAreSkipped() {
        let segments = walk([0xFF, 0xD8, 0xFF, 0xFF, 0xFF, 0xE1, 0x00, 0x04, 0xAA, 0xBB, 0xFF, 0xFF, 0xD9])
        #expect(segments == [
            Segment(marker: 0xE1, start: 2, payload: 8..<10, length: 4, isTruncated: false),
            Segment(marker: 0xD9, start: 10, payload: 13..<13, length: nil, isTruncated: false),
        ])
    }

    @Test func restartTemAndSOIStandAlone() {
        let segments = walk([0xFF, 0xD8, 0xFF, 0xD0, 0xFF, 0x01, 0xFF, 0xD7, 0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x02, 0xFF, 0xD9])
        #expect(segments.map(\.marker) == [0xD0, 0x01, 0xD7, 0xD8, 0xE0, 0xD9])
        #expect(segments.map(\.length) == [nil, nil, nil, nil, 2, nil])
        #expect(segments[4].payload == 14..<14 && segments[4].isComplete)
    }

    @Test func strayBytesAndStuffedZerosBetweenSegmentsAreSkipped() {
        let segments = walk([0xFF, 0xD8, 0x12, 0x34, 0xFF, 0x00, 0xFF, 0xE2, 0x00, 0x03, 0x07, 0xFF, 0xD9])
        #expect(segments.map(\.marker) == [0xE2, 0xD9])
        #expect(segments[0].start == 6 && segments[0].payload == 10..<11)
    }

    @Test func aLengthRunningPastTheEndEndsTheWalkWithAClippedSegment() {
        let segments = walk([0xFF, 0xD8, 0xFF, 0xE1, 0x01, 0x00, 0xAA, 0xFF, 0xD9])
        #expect(segments == [Segment(marker: 0xE1, start: 2, payload: 6..<9, length: 256, isTruncated: true)])
        #expect(!segments[0].isComplete)
    }

    @Test func lengthsBelowTwoGiveEmptyPayloadsAndTheWalkGoesOn() {
        let segments = walk([0xFF, 0xD8, 0xFF, 0xE1, 0x00, 0x00, 0xFF, 0xE1, 0x00, 0x01, 0xFF, 0xE2, 0x00, 0x02, 0xFF, 0xD9])
        #expect(segments.map(\.marker) == [0xE1, 0xE1, 0xE2, 0xD9])
        #expect(segments.map(\.payload) == [6..<6, 10..<10, 14..<14, 16..<16])
        #expect(segments.map(\.isComplete) == [false, false, true, false])
    }

    @Test func theWalkContinuesThroughEntropyCodedData() {
        // SOS, then scan data holding a stuffed zero and a restart marker, then fill bytes and EOI.
        let bytes: [UInt8] = [0xFF, 0xD8, 0xFF, 0xDA, 0x00, 0x03, 0x01, 0x12, 0xFF, 0x00, 0x34, 0xFF, 0xD0, 0x56, 0xFF, 0xFF, 0xD9]
        let segments = walk(bytes)
        #expect(segments.map(\.marker) == [0xDA, 0xD0, 0xD9])
        #expect(segments[0].payload == 6..<7)
        #expect(bytes.withUnsafeBytes { JPEGDataPlausibility.firstScanOffset($0) } == 2)
    }

    @Test func noSegmentsWithoutSOIOrWhenTheDataEndsInsideAMarker() {
        #expect(walk([]).isEmpty)
        #expect(walk([0xFF]).isEmpty)
        #expect(walk([0x89, 0x50, 0xFF, 0xE1, 0x00, 0x02]).isEmpty)
        #expect(walk([0xFF, 0xD8, 0xFF, 0xFF]).isEmpty)
        #expect(walk([0xFF, 0xD8, 0xFF, 0xE1, 0x00]).isEmpty)
    }

    @Test func hostileBytesNeverTrapAndPayloadsStayInBounds() {
        var random = SampleImages.SeededBytes(seed: 18)
        for _ in 0..<2000 {
            let count = Int(UInt8.random(in: 0...255, using: &random)) % 64
            // Mostly 0xFF and marker-ish bytes, so every branch is taken.
            let body = random.bytes(count).map { $0 < 96 ? 0xFF : $0 < 128 ? 0x00 : $0 }
            let bytes = [0xFF, 0xD8] + body
            for segment in walk(bytes) {
                #expect(segment.payload.lowerBound >= 2 && segment.payload.upperBound <= bytes.count)
                #expect(segment.start < segment.payload.lowerBound)
            }
        }
    }

    @Test func collectsEveryICCProfileChunkBeforeTheScan() {
        let signature = Array("ICC_PROFILE\0".utf8)
        func app2(_ body: [UInt8]) -> [UInt8] { [0xFF, 0xE2, 0x00, UInt8(body.count + 2)] + body }
        let bytes = [0xFF, 0xD8] + app2(signature + [1, 2, 0xAA]) + app2(Array("OTHER".utf8)) + app2(signature + [2, 2, 0xBB])
            + [0xFF, 0xDA, 0x00, 0x02] + app2(signature + [3, 3, 0xCC]) + [0xFF, 0xD9]
        let chunks = bytes.withUnsafeBytes { bytes in
            JPEGMarkerWalker.payloads(of: JPEGMarkerWalker.Marker.app2, signature: signature, in: bytes).map(Array.init)
        }
        #expect(chunks == [[1, 2, 0xAA], [2, 2, 0xBB]])
    }

    /// A real JPEG with `inserted` placed right after its SOI, before any other segment.
    private func jpeg(inserting inserted: [UInt8]) throws -> [UInt8] {
        let bitmap = try SampleImages.gradient(width: 40, height: 24)
        let encoded = Array(try JPEGCoder.encode(bitmap, quality: 90, sampling: .halfBoth))
        return Array(encoded[0..<2]) + inserted + Array(encoded[2...])
    }

    @Test func theHeaderReaderSkipsWhatLibjpegSkipsBeforeTheFrame() throws {
        let plain = try jpeg(inserting: [])
        let plainHeader = try #require(plain.withUnsafeBytes { JPEGBaselineHeader($0) })
        // A comment, stray bytes, fill bytes, a restart marker and a zero-length APP15 before SOF.
        let extra: [UInt8] = [0xFF, 0xFE, 0x00, 0x04, 0x68, 0x69, 0x12, 0x34, 0xFF, 0xFF, 0xD0, 0xFF, 0xEF, 0x00, 0x00]
        let header = try #require(try jpeg(inserting: extra).withUnsafeBytes { JPEGBaselineHeader($0) })
        #expect((header.width, header.height) == (40, 24))
        #expect(header.scanDataOffset == plainHeader.scanDataOffset + extra.count)
        // libjpeg fails on a second SOI and on a DQT too short to hold its length.
        #expect(try jpeg(inserting: [0xFF, 0xD8]).withUnsafeBytes { JPEGBaselineHeader($0) } == nil)
        #expect(try jpeg(inserting: [0xFF, 0xDB, 0x00, 0x00]).withUnsafeBytes { JPEGBaselineHeader($0) } == nil)
    }

    @Test func theDCDecoderTakesSuchFilesAndMatchesLibjpegTurbo() throws {
        let bitmap = try JPEGEighthScaleTests.noisyPhoto(width: 203, height: 157, seed: 18)
        let encoded = Array(try JPEGCoder.encode(bitmap, quality: 90, sampling: .halfBoth))
        let extra: [UInt8] = [0xFF, 0xFE, 0x00, 0x04, 0x68, 0x69, 0x12, 0x34, 0xFF, 0xFF, 0xD0, 0xFF, 0xEF, 0x00, 0x00]
        let data = Data(encoded[0..<2] + extra + encoded[2...])
        #expect(try data.withUnsafeBytes { try JPEGEighthScaleDecoder.decode($0) } != nil)
        let fast = try JPEGEighthScaleTests.eighthScale(data, width: 203, height: 157, fast: true)
        let reference = try JPEGEighthScaleTests.eighthScale(data, width: 203, height: 157, fast: false)
        #expect(JPEGEighthScaleTests.samePixels(fast, reference))
    }

    @Test func exifIsFoundAfterStrayBytesFillBytesAndAZeroLengthSegment() throws {
        // Big-endian TIFF with one IFD entry: orientation (0x0112), SHORT, 1 value, 6.
        let tiff: [UInt8] = [0x4D, 0x4D, 0x00, 0x2A, 0x00, 0x00, 0x00, 0x08, 0x00, 0x01,
                             0x01, 0x12, 0x00, 0x03, 0x00, 0x00, 0x00, 0x01, 0x00, 0x06, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00]
        let body = Array("Exif\0\0".utf8) + tiff
        let app1 = [0xFF, 0xE1, 0x00, UInt8(body.count + 2)] + body
        #expect(EXIFReader.orientation(inJPEG: Data(try jpeg(inserting: app1))) == .right)
        let hostile = [0x00, 0x7F, 0xFF, 0xEC, 0x00, 0x01, 0xFF, 0xFF] + app1.dropFirst()
        #expect(EXIFReader.orientation(inJPEG: Data(try jpeg(inserting: Array(hostile)))) == .right)
        // An APP1 after the first scan is not the file's EXIF.
        #expect(EXIFReader.orientation(inJPEG: Data([0xFF, 0xD8, 0xFF, 0xDA, 0x00, 0x02] + app1 + [0xFF, 0xD9])) == nil)
    }
}
