import Foundation
import Testing
import WebImage

/// The one big-/little-endian reader every header, container walker and cache trailer reads
/// its fields with: both orders and every width, indices in the collection's own terms (a slice
/// or a `Data` that does not start at 0), and `nil`, never a trap, for a field that is cut short.
@Suite("Byte reader")
struct ByteReaderTests {
    private let bytes: [UInt8] = [0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09]

    @Test func bothOrdersEveryWidth() {
        #expect(bytes.bigEndianUInt16(at: 0) == 0x0102)
        #expect(bytes.bigEndianUInt32(at: 1) == 0x0203_0405)
        #expect(bytes.bigEndianUInt64(at: 1) == 0x0203_0405_0607_0809)
        #expect(bytes.littleEndianUInt16(at: 0) == 0x0201)
        #expect(bytes.littleEndianUInt24(at: 2) == 0x05_0403)
        #expect(bytes.littleEndianUInt32(at: 1) == 0x0504_0302)
        #expect(bytes.littleEndianUInt64(at: 1) == 0x0908_0706_0504_0302)
        #expect(bytes.uint16(at: 3, bigEndian: true) == 0x0405)
        #expect(bytes.uint16(at: 3, bigEndian: false) == 0x0504)
        #expect(bytes.uint32(at: 5, bigEndian: true) == 0x0607_0809)
        #expect(bytes.uint32(at: 5, bigEndian: false) == 0x0908_0706)
    }

    @Test func highBitsAreKept() {
        let ones: [UInt8] = Array(repeating: 0xFF, count: 8)
        #expect(ones.bigEndianUInt16(at: 0) == .max)
        #expect(ones.bigEndianUInt32(at: 0) == .max)
        #expect(ones.bigEndianUInt64(at: 0) == .max)
        #expect(ones.littleEndianUInt24(at: 0) == 0xFF_FFFF)
        #expect(ones.littleEndianUInt64(at: 0) == .max)
    }

    @Test func fieldsRunningPastEitherEndAreNil() {
        // The last whole field, then one byte further.
        #expect(bytes.bigEndianUInt16(at: 7) == 0x0809)
        #expect(bytes.bigEndianUInt16(at: 8) == nil)
        #expect(bytes.littleEndianUInt24(at: 6) == 0x09_0807)
        #expect(bytes.littleEndianUInt24(at: 7) == nil)
        #expect(bytes.bigEndianUInt32(at: 6) == nil)
        #expect(bytes.littleEndianUInt64(at: 1) != nil)
        #expect(bytes.littleEndianUInt64(at: 2) == nil)
        for index in [-1, 9, 10, Int.max, Int.max - 1, Int.min] {
            #expect(bytes.bigEndianUInt16(at: index) == nil)
            #expect(bytes.littleEndianUInt32(at: index) == nil)
            #expect(bytes.bigEndianUInt64(at: index) == nil)
        }
        #expect([UInt8]().littleEndianUInt16(at: 0) == nil)
    }

    @Test func slicesKeepTheirParentsIndices() {
        let slice = bytes[3..<7] // 04 05 06 07 at indices 3...6
        #expect(slice.bigEndianUInt32(at: 3) == 0x0405_0607)
        #expect(slice.littleEndianUInt16(at: 5) == 0x0706)
        // Index 0 and 2 are the parent's, outside the slice; 4 + 4 runs past its end.
        #expect(slice.bigEndianUInt16(at: 0) == nil)
        #expect(slice.bigEndianUInt16(at: 2) == nil)
        #expect(slice.bigEndianUInt32(at: 4) == nil)
    }

    @Test func dataAndItsSlices() {
        let data = Data(bytes)
        #expect(data.bigEndianUInt32(at: 0) == 0x0102_0304)
        let tail = data[4...] // starts at index 4
        #expect(tail.startIndex == 4)
        #expect(tail.littleEndianUInt32(at: 4) == 0x0807_0605)
        #expect(tail.bigEndianUInt64(at: 4) == nil)
        #expect(tail.bigEndianUInt16(at: 3) == nil)
        #expect(tail.bigEndianUInt16(at: 7) == 0x0809)
    }

    @Test func rawBufferPointersAndTheirSlices() {
        bytes.withUnsafeBytes { raw in
            #expect(raw.bigEndianUInt16(at: 7) == 0x0809)
            #expect(raw.bigEndianUInt16(at: 8) == nil)
            let slice = raw[2..<6]
            #expect(slice.littleEndianUInt32(at: 2) == 0x0605_0403)
            #expect(slice.littleEndianUInt32(at: 3) == nil)
            let rebased = UnsafeRawBufferPointer(rebasing: slice)
            #expect(rebased.bigEndianUInt32(at: 0) == 0x0304_0506)
        }
    }
}
