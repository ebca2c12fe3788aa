/// Reduces a region of an RGBA8 bitmap to at most 256 palette entries, for the GIF encoder.
///
/// A region with few enough colours keeps them exactly (one entry each, in the order they first
/// appear). Otherwise the colours are binned at 5 bits a channel and split by median cut: the box
/// with the largest summed squared error is cut at its weighted median along its widest channel
/// (by variance), each box's entry is the mean of the pixels in it, and each pixel takes the
/// nearest entry (looked up once per 6-bit-a-channel colour). Pixels with alpha below 128 take
/// one extra transparent index; the alpha of the others is dropped. Everything is deterministic:
/// the same pixels always give the same palette and indices.
package struct ColorQuantizer: Sendable {
    /// How the colours the palette lacks are approximated.
    package enum Dithering: Sendable, Hashable {
        /// The nearest entry (the default: smallest files, no noise).
        case none
        /// A 4×4 Bayer threshold added before the lookup: a regular pattern that compresses well.
        case ordered
        /// Floyd–Steinberg error diffusion: the smoothest gradients, noisier files.
        case floydSteinberg
    }

    /// One quantised region: its palette, the transparent entry and one index per pixel.
    package struct Result: Sendable {
        /// The entries as RGB triples (`palette.count / 3` entries, at most 256, the transparent
        /// one included).
        package var palette: [UInt8]
        /// The entry transparent pixels use, or `nil` when none was asked for.
        package var transparentIndex: Int?
        /// One palette index per pixel of the region, rows top to bottom.
        package var indices: [UInt8]
        /// The number of entries.
        package var colorCount: Int { palette.count / 3 }
    }

    /// Alpha below this is transparent.
    package static let alphaThreshold: UInt8 = 128

    /// The dithering applied when the palette must approximate.
    package var dithering: Dithering

    /// Creates a quantiser; no dithering by default.
    package init(dithering: Dithering = .none) {
        self.dithering = dithering
    }

    /// Quantises the `region` of `bitmap` (which must lie inside it).
    /// - Parameter reserveTransparent: always give the palette a transparent entry (the GIF
    ///   encoder asks for one on every frame of an animation that has transparency somewhere);
    ///   without it there is one only when a pixel of the region is transparent.
    func quantize(_ bitmap: Bitmap, region: CanvasRect, reserveTransparent: Bool) -> Result {
        bitmap.withUnsafeBytes { raw in
            let pixels = Pixels(bytes: raw.bindMemory(to: UInt8.self), stride: bitmap.bytesPerRow, region: region)
            if let exact = Self.exactPalette(pixels, reserveTransparent: reserveTransparent) { return exact }
            let transparent = reserveTransparent || pixels.containsTransparency
            let palette = Self.medianCut(pixels, maxColors: transparent ? 255 : 256)
            return map(pixels, palette: palette, transparent: transparent)
        }
    }

    /// The pixels of one region.
    struct Pixels {
        let bytes: UnsafeBufferPointer<UInt8>
        let stride: Int
        let region: CanvasRect

        func offset(x: Int, y: Int) -> Int { (region.y + y) * stride + (region.x + x) * 4 }

        var containsTransparency: Bool {
            for y in 0..<region.height {
                var offset = offset(x: 0, y: y) + 3
                for _ in 0..<region.width {
                    if bytes[offset] < ColorQuantizer.alphaThreshold { return true }
                    offset += 4
                }
            }
            return false
        }
    }

    // MARK: - Few colours: exact

    /// The region's own colours when there are few enough, else `nil` (as soon as one too many is seen).
    private static func exactPalette(_ pixels: Pixels, reserveTransparent: Bool) -> Result? {
        let region = pixels.region
        var entries: [UInt32: UInt8] = [:]
        var palette: [UInt8] = []
        var indices = [UInt8](repeating: 0, count: region.width * region.height)
        var transparentPixels: [Int] = []
        var lastKey: UInt32 = .max, lastIndex: UInt8 = 0
        var position = 0
        for y in 0..<region.height {
            var offset = pixels.offset(x: 0, y: y)
            for _ in 0..<region.width {
                if pixels.bytes[offset + 3] < alphaThreshold {
                    transparentPixels.append(position)
                } else {
                    let key = UInt32(pixels.bytes[offset]) << 16 | UInt32(pixels.bytes[offset + 1]) << 8 | UInt32(pixels.bytes[offset + 2])
                    if key != lastKey {
                        if let index = entries[key] {
                            lastIndex = index
                        } else {
                            // 256 opaque colours fit only when no entry goes to transparency; that is
                            // known at the end, so up to 256 are collected and checked then.
                            guard entries.count < 256 else { return nil }
                            lastIndex = UInt8(entries.count)
                            entries[key] = lastIndex
                            palette += [pixels.bytes[offset], pixels.bytes[offset + 1], pixels.bytes[offset + 2]]
                        }
                        lastKey = key
                    }
                    indices[position] = lastIndex
                }
                position += 1
                offset += 4
            }
        }
        var transparentIndex: Int?
        if reserveTransparent || !transparentPixels.isEmpty {
            guard entries.count < 256 else { return nil }
            let index = entries.count
            palette += [0, 0, 0]
            for position in transparentPixels { indices[position] = UInt8(index) }
            transparentIndex = index
        }
        return Result(palette: palette, transparentIndex: transparentIndex, indices: indices)
    }

    // MARK: - Many colours: median cut

    /// One occupied 5-bit-a-channel bin: its coordinates, pixel count and colour sums.
    private struct Bin {
        var channels: (Int, Int, Int)
        var count: Int
        var sums: (Int, Int, Int)

        func channel(_ axis: Int) -> Int { axis == 0 ? channels.0 : axis == 1 ? channels.1 : channels.2 }
    }

    /// A box of bins: a range of the bin array (median cut sorts the range in place to split it).
    private struct Box {
        var range: Range<Int>
        /// The summed squared error of the box's bins around their mean, per channel.
        var errors: (Double, Double, Double)
        var total: Double { errors.0 + errors.1 + errors.2 }
    }

    /// A palette of at most `maxColors` entries (RGB triples) for the region's opaque pixels.
    private static func medianCut(_ pixels: Pixels, maxColors: Int) -> [UInt8] {
        var counts = [Int](repeating: 0, count: 1 << 15)
        var sums = [Int](repeating: 0, count: 3 << 15)
        for y in 0..<pixels.region.height {
            var offset = pixels.offset(x: 0, y: y)
            for _ in 0..<pixels.region.width {
                if pixels.bytes[offset + 3] >= alphaThreshold {
                    let r = Int(pixels.bytes[offset]), g = Int(pixels.bytes[offset + 1]), b = Int(pixels.bytes[offset + 2])
                    let bin = (r >> 3) << 10 | (g >> 3) << 5 | (b >> 3)
                    counts[bin] += 1
                    sums[bin * 3] += r; sums[bin * 3 + 1] += g; sums[bin * 3 + 2] += b
                }
                offset += 4
            }
        }
        var bins: [Bin] = []
        for bin in 0..<(1 << 15) where counts[bin] > 0 {
            bins.append(Bin(channels: (bin >> 10, (bin >> 5) & 31, bin & 31), count: counts[bin],
                            sums: (sums[bin * 3], sums[bin * 3 + 1], sums[bin * 3 + 2])))
        }
        guard !bins.isEmpty else { return [0, 0, 0] }
        var boxes = [makeBox(bins, 0..<bins.count)]
        while boxes.count < maxColors {
            // The box whose split removes the most error; boxes of one bin cannot split.
            var chosen: Int?
            for (index, box) in boxes.enumerated() where box.range.count > 1 && box.total > 0 {
                if chosen.map({ box.total > boxes[$0].total }) ?? true { chosen = index }
            }
            guard let chosen else { break }
            let box = boxes[chosen]
            let axis = box.errors.0 >= box.errors.1 && box.errors.0 >= box.errors.2 ? 0 : box.errors.1 >= box.errors.2 ? 1 : 2
            // Bin coordinates are unique, so ties on the axis are broken by the others: the order
            // (and so the palette) does not depend on the sort algorithm.
            bins[box.range].sort { a, b in
                let (ka, kb) = (a.channel(axis), b.channel(axis))
                if ka != kb { return ka < kb }
                return (a.channels.0, a.channels.1, a.channels.2) < (b.channels.0, b.channels.1, b.channels.2)
            }
            let half = bins[box.range].reduce(0) { $0 + $1.count } / 2
            var cut = box.range.lowerBound, seen = 0
            while cut < box.range.upperBound - 1 {
                seen += bins[cut].count
                cut += 1
                if seen >= half { break }
            }
            boxes[chosen] = makeBox(bins, box.range.lowerBound..<cut)
            boxes.append(makeBox(bins, cut..<box.range.upperBound))
        }
        var palette: [UInt8] = []
        palette.reserveCapacity(boxes.count * 3)
        for box in boxes {
            var count = 0, r = 0, g = 0, b = 0
            for bin in bins[box.range] { count += bin.count; r += bin.sums.0; g += bin.sums.1; b += bin.sums.2 }
            palette += [UInt8((r + count / 2) / count), UInt8((g + count / 2) / count), UInt8((b + count / 2) / count)]
        }
        return palette
    }

    private static func makeBox(_ bins: [Bin], _ range: Range<Int>) -> Box {
        var count = 0.0, sum = (0.0, 0.0, 0.0), squares = (0.0, 0.0, 0.0)
        for bin in bins[range] {
            let weight = Double(bin.count)
            let c = (Double(bin.channels.0), Double(bin.channels.1), Double(bin.channels.2))
            count += weight
            sum.0 += weight * c.0; sum.1 += weight * c.1; sum.2 += weight * c.2
            squares.0 += weight * c.0 * c.0; squares.1 += weight * c.1 * c.1; squares.2 += weight * c.2 * c.2
        }
        guard count > 0 else { return Box(range: range, errors: (0, 0, 0)) }
        return Box(range: range, errors: (max(0, squares.0 - sum.0 * sum.0 / count),
                                          max(0, squares.1 - sum.1 * sum.1 / count),
                                          max(0, squares.2 - sum.2 * sum.2 / count)))
    }

    // MARK: - Mapping

    /// 4×4 Bayer thresholds, 0...15.
    private static let bayer: [Int] = [0, 8, 2, 10, 12, 4, 14, 6, 3, 11, 1, 9, 15, 7, 13, 5]

    /// Each pixel's nearest entry of `palette` (with the dithering), plus the transparent entry.
    private func map(_ pixels: Pixels, palette: [UInt8], transparent: Bool) -> Result {
        let region = pixels.region
        let colorCount = palette.count / 3
        var nearest = NearestColor(palette: palette)
        var indices = [UInt8](repeating: 0, count: region.width * region.height)
        let transparentIndex = transparent ? colorCount : nil
        let transparentByte = UInt8(truncatingIfNeeded: colorCount)
        // Floyd–Steinberg: the error carried into this row and the next, per channel, with a
        // column of margin on each side.
        let diffusing = dithering == .floydSteinberg
        var current = [Int](repeating: 0, count: diffusing ? (region.width + 2) * 3 : 0)
        var next = current
        var position = 0
        for y in 0..<region.height {
            var offset = pixels.offset(x: 0, y: y)
            for x in 0..<region.width {
                if pixels.bytes[offset + 3] < Self.alphaThreshold {
                    indices[position] = transparentByte
                } else {
                    var r = Int(pixels.bytes[offset]), g = Int(pixels.bytes[offset + 1]), b = Int(pixels.bytes[offset + 2])
                    switch dithering {
                    case .none:
                        break
                    case .ordered:
                        let threshold = Self.bayer[(y & 3) * 4 + (x & 3)] * 2 - 15
                        r = min(255, max(0, r + threshold)); g = min(255, max(0, g + threshold)); b = min(255, max(0, b + threshold))
                    case .floydSteinberg:
                        let e = (x + 1) * 3
                        r = min(255, max(0, r + current[e] / 16))
                        g = min(255, max(0, g + current[e + 1] / 16))
                        b = min(255, max(0, b + current[e + 2] / 16))
                    }
                    let index = nearest.index(r: r, g: g, b: b)
                    indices[position] = UInt8(truncatingIfNeeded: index)
                    if diffusing {
                        let values = [r, g, b]
                        for channel in 0..<3 {
                            let error = values[channel] - Int(palette[index * 3 + channel])
                            current[(x + 2) * 3 + channel] += error * 7
                            next[x * 3 + channel] += error * 3
                            next[(x + 1) * 3 + channel] += error * 5
                            next[(x + 2) * 3 + channel] += error
                        }
                    }
                }
                position += 1
                offset += 4
            }
            if diffusing {
                swap(&current, &next)
                for index in next.indices { next[index] = 0 }
            }
        }
        var full = palette
        if transparent { full += [0, 0, 0] }
        return Result(palette: full, transparentIndex: transparentIndex, indices: indices)
    }

    /// The nearest palette entry of a colour, searched once per 6-bit-a-channel cell (for the
    /// cell's centre) and remembered: a bounded table, whatever the image's size.
    private struct NearestColor {
        let palette: [UInt8]
        private var cells = [Int16](repeating: -1, count: 1 << 18)

        init(palette: [UInt8]) { self.palette = palette }

        mutating func index(r: Int, g: Int, b: Int) -> Int {
            let cell = (r >> 2) << 12 | (g >> 2) << 6 | (b >> 2)
            let known = cells[cell]
            if known >= 0 { return Int(known) }
            let (cr, cg, cb) = ((r >> 2) << 2 | 2, (g >> 2) << 2 | 2, (b >> 2) << 2 | 2)
            var best = 0, bestDistance = Int.max
            var entry = 0
            while entry * 3 < palette.count {
                let dr = cr - Int(palette[entry * 3]), dg = cg - Int(palette[entry * 3 + 1]), db = cb - Int(palette[entry * 3 + 2])
                let distance = dr * dr + dg * dg + db * db
                if distance < bestDistance { bestDistance = distance; best = entry }
                entry += 1
            }
            cells[cell] = Int16(best)
            return best
        }
    }
}
