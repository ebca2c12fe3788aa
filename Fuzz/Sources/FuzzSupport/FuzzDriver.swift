import Foundation
@testable import WebImage

@_silgen_name("LLVMFuzzerRunDriver")
private func LLVMFuzzerRunDriver(
    _ argc: UnsafeMutablePointer<Int32>,
    _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
    _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> Int32
) -> Int32

/// The pixel limit every fuzzer decodes with (64×64), so a hostile header cannot make a run slow.
/// Every decoder path (full size, scaled, shrunk, refused, truncated) is still reached at this
/// size; what a larger limit adds is only more turns of the same per-pixel loops, which coverage
/// instrumentation slows tenfold. (Profiles at the earlier 1-megapixel limit: GIF inputs spent
/// 90% of their time composing, scanning and shrinking full canvases frame after frame, about
/// 170 inputs a second.)
public let fuzzPixelLimit = 1 << 12

/// The options every decoder target decodes with: the library's own limits set low, so the limit
/// paths are fuzzed too and one input costs well under a millisecond. `thumbnail` asks for the
/// smallest thumbnail with scale-down allowed, so files larger than the limit (most of the seed
/// corpus) still decode: through DCT scaling for JPEG, and by
/// shrinking a canvas of up to 4× the limit frame by frame for the others.
public func fuzzOptions(thumbnail: Bool = false) -> DecodeOptions {
    DecodeOptions(maxPixelSize: thumbnail ? 1 : nil, pixelLimit: fuzzPixelLimit, scaleDownLargeImages: thumbnail,
                  animationByteLimit: 256 << 10, maxFrameCount: 16)
}

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
    _ = try? coder.decode(data, options: fuzzOptions())
    _ = try? coder.decode(data, options: fuzzOptions(thumbnail: true))
}

/// The JPEG path of the project's own code besides the marker walker the coder uses: the EXIF reader.
public func fuzzJPEGInternals(_ data: Data) {
    _ = EXIFReader.orientation(inJPEG: data)
}
