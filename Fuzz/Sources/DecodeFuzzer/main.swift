import Foundation
@testable import WebImage

// libFuzzer calls this with each input. Every decoder must return an image or throw a
// WebImageError: a crash, an ASan report, a hang or a leak is a finding.
//
// Each input is decoded three ways: in full (small pixel limit, so a hostile header cannot make
// the run slow), as a thumbnail at the smallest DCT scale (which sends any sequential JPEG through
// the 1/8-scale DC decoder, on one thread below its 192 KB two-thread threshold), and
// straight through that decoder with its two-thread scan split forced on. Its EXIF is read too.
@_silgen_name("LLVMFuzzerRunDriver")
func LLVMFuzzerRunDriver(
    _ argc: UnsafeMutablePointer<Int32>,
    _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
    _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> Int32
) -> Int32

let limit = 1 << 20

func fuzzOne(_ bytes: UnsafePointer<UInt8>?, _ count: Int) -> Int32 {
    guard let bytes, count > 0 else { return 0 }
    let data = Data(bytes: bytes, count: count)
    let coders = ImageCodersManager.shared
    _ = try? coders.decode(data, options: DecodeOptions(pixelLimit: limit))
    _ = try? coders.decode(data, options: DecodeOptions(maxPixelSize: 1, pixelLimit: limit))
    // Called directly, the DC decoder has no pixel limit in front of it (JPEGCoder checks that
    // first): keep to what the limit would let through.
    _ = try? data.withUnsafeBytes { bytes in
        guard let header = JPEGBaselineHeader(bytes), header.width * header.height <= limit else { return }
        _ = try JPEGEighthScaleDecoder.decode(bytes, twoThreadsFrom: 0)
    }
    _ = EXIFReader.orientation(inJPEG: data)
    return 0
}

var argc = CommandLine.argc
var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = CommandLine.unsafeArgv
exit(LLVMFuzzerRunDriver(&argc, &argv) { fuzzOne($0, $1) })
