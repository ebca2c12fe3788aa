import Foundation
@testable import WebImage

@_silgen_name("LLVMFuzzerRunDriver")
private func LLVMFuzzerRunDriver(
    _ argc: UnsafeMutablePointer<Int32>,
    _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
    _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> Int32
) -> Int32

/// The pixel limit every fuzzer decodes with: a hostile header cannot make a run slow.
public let fuzzPixelLimit = 1 << 20

/// The body each input is handed to (set once, before the driver starts).
nonisolated(unsafe) private var fuzzBody: (Data) -> Void = { _ in }

/// Hands every input libFuzzer makes to `body`, then exits with libFuzzer's status. A crash, a
/// sanitizer report, a hang or a leak in `body` is a finding; returning or throwing a
/// `WebImageError` is the expected outcome for hostile bytes.
public func runFuzzer(_ body: @escaping (Data) -> Void) -> Never {
    fuzzBody = body
    var argc = CommandLine.argc
    var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = CommandLine.unsafeArgv
    exit(LLVMFuzzerRunDriver(&argc, &argv) { bytes, count in
        guard let bytes, count > 0 else { return 0 }
        fuzzBody(Data(bytes: bytes, count: count))
        return 0
    })
}

/// Decodes `data` with `coder` in full and as the smallest thumbnail.
public func fuzzDecode(_ data: Data, with coder: any ImageCoder) {
    guard coder.canDecode(data) else { return }
    _ = try? coder.decode(data, options: DecodeOptions(pixelLimit: fuzzPixelLimit))
    _ = try? coder.decode(data, options: DecodeOptions(maxPixelSize: 1, pixelLimit: fuzzPixelLimit))
}

/// The JPEG paths of the project's own code: the 1/8-scale DC decoder with its two-thread scan
/// split forced on, and the EXIF reader.
public func fuzzJPEGInternals(_ data: Data) {
    // Called directly, the DC decoder has no pixel limit in front of it (JPEGCoder checks that
    // first): keep to what the limit would let through.
    _ = try? data.withUnsafeBytes { bytes in
        guard let header = JPEGBaselineHeader(bytes), header.width * header.height <= fuzzPixelLimit else { return }
        _ = try JPEGEighthScaleDecoder.decode(bytes, twoThreadsFrom: 0)
    }
    _ = EXIFReader.orientation(inJPEG: data)
}
