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
/// corpus) still decode: through DCT scaling and the 1/8-scale DC decoder for JPEG, and by
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

/// The JPEG paths of the project's own code: the 1/8-scale DC decoder (``fuzzJPEGEighthScale(_:)``)
/// and the EXIF reader.
public func fuzzJPEGInternals(_ data: Data) {
    fuzzJPEGEighthScale(data)
    _ = EXIFReader.orientation(inJPEG: data)
}

/// The 1/8-scale DC decoder on one thread, then with its two-thread scan split forced on. With
/// `checkingAgainstLibjpeg`, a file it decodes must give the same pixels on two threads as on
/// one, and the coder must decode it at 1/8 exactly as it does with the DC decoder turned off
/// (libjpeg-turbo's pixels bit for bit, or the same refusal): a difference traps, and libFuzzer
/// saves the input.
public func fuzzJPEGEighthScale(_ data: Data, checkingAgainstLibjpeg: Bool = false) {
    // Called directly, the DC decoder has no pixel limit in front of it (JPEGCoder checks that
    // first): keep to files whose 1/8-scale bitmap is within the limit. The size is the one the
    // declared-size reader finds (the first frame header, through the one marker walker), not a
    // header parse of the fuzzer's own.
    guard let size = FormatDetection.declaredSize(of: data), size.width * size.height <= fuzzPixelLimit * 64 else { return }
    let (oneThread, twoThreads) = data.withUnsafeBytes { bytes in
        ((try? JPEGEighthScaleDecoder.decode(bytes, twoThreadsFrom: .max)) ?? nil,
         (try? JPEGEighthScaleDecoder.decode(bytes, twoThreadsFrom: 0)) ?? nil)
    }
    guard checkingAgainstLibjpeg, let oneThread else { return }
    precondition(twoThreads.map { samePixels($0, oneThread) } ?? false, "the two-thread split decoded other pixels")
    let options = DecodeOptions(maxPixelSize: (max(size.width, size.height) + 7) / 8)
    var libjpeg = JPEGCoder()
    libjpeg.decodesEighthScaleFromDC = false
    // Through the coder both ways: the same refusal (its size checks come first), or the same pixels.
    switch (try? JPEGCoder().decode(data, options: options), try? libjpeg.decode(data, options: options)) {
    case (nil, nil): break
    case let (ours?, reference?): precondition(samePixels(ours.bitmap, reference.bitmap), "the DC decoder's pixels differ from libjpeg-turbo's")
    default: preconditionFailure("the coder decodes this file with the DC decoder but not without it, or the reverse")
    }
}

private func samePixels(_ a: Bitmap, _ b: Bitmap) -> Bool {
    a.width == b.width && a.height == b.height && a.withUnsafeBytes { x in b.withUnsafeBytes { y in x.elementsEqual(y) } }
}
