import FuzzSupport
@testable import WebImage

// The resampler's inner passes (C, CResampling, under AddressSanitizer here) on any geometry:
// the input's first bytes pick the filter, the source's size, the region read and the target's
// size; the rest are the pixels (repeated to fill the source). Both builds of the passes run
// where the CPU has AVX2 and must give the same bytes, and an opaque source must come out opaque.
runFuzzer { data in
    let bytes = [UInt8](data)
    guard bytes.count >= 10 else { return }
    let filter = ResamplingFilter.allCases[Int(bytes[0]) % ResamplingFilter.allCases.count]
    let sourceWidth = 1 + Int(bytes[1]) % 48, sourceHeight = 1 + Int(bytes[2]) % 48
    let x = Int(bytes[3]) % sourceWidth, y = Int(bytes[4]) % sourceHeight
    let region = PixelRegion(x: x, y: y, width: 1 + Int(bytes[5]) % (sourceWidth - x), height: 1 + Int(bytes[6]) % (sourceHeight - y))
    let width = 1 + Int(bytes[7]) % 48, height = 1 + Int(bytes[8]) % 48
    let pixels = bytes[9...]
    let filled = { (buffer: UnsafeMutableRawBufferPointer) in
        for index in 0..<buffer.count { buffer[index] = pixels[pixels.startIndex + index % pixels.count] }
    }
    guard let source = try? Bitmap(width: sourceWidth, height: sourceHeight, initializingWith: filled) else { return }
    let resize = { (kernels: Resampler.Kernels) in
        try? Resampler.resize(source, region: region, width: width, height: height, filter: filter, twoThreadsFrom: .max,
                              kernels: kernels)
    }
    guard let baseline = resize(.baseline) else { return }
    if let avx2 = Resampler.Kernels.avx2 {
        let wide = resize(avx2)
        precondition(wide.map { $0.withUnsafeBytes { a in baseline.withUnsafeBytes { b in a.elementsEqual(b) } } } ?? false,
                     "the AVX2 build gave other bytes than the baseline")
    }
    let opaque = { (bitmap: Bitmap) in bitmap.withUnsafeBytes { b in stride(from: 3, to: b.count, by: 4).allSatisfy { b[$0] == 255 } } }
    precondition(!opaque(source) || opaque(baseline), "an opaque source came out with alpha")
}
