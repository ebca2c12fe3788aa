extension ImageTransformers {
    /// Pixelates every frame into square blocks of one colour, as imgproxy's `pixelate` does with
    /// libvips: the image is extended to a whole number of blocks by mirroring its edges, each
    /// block takes the mean of its pixels (every channel, alpha included, straight), and the
    /// extension is cut off again. A block larger than the image's longer side is that side.
    ///
    /// The means are libvips' `shrink`'s: down each column of the block, then across, each a
    /// rounded mean taken with a 16-bit fixed-point reciprocal (so a mean just at ½ rounds down
    /// for a block size that is not a power of two), so the pixels are libvips' own.
    public struct Pixelate: ImageTransformer, Hashable {
        public var hashableIdentifier: any Hashable & Sendable { self }

        /// The side of a block in pixels; 1 or less leaves the image as it is.
        public var blockSize: Int

        /// Pixelates into blocks of `blockSize` × `blockSize` pixels.
        public init(blockSize: Int) {
            self.blockSize = blockSize
        }

        /// `"pixelate(N)"`.
        public var identifier: String { "pixelate(\(blockSize))" }

        /// Pixelates every frame; durations are kept.
        public func transform(_ image: DecodedImage) throws -> DecodedImage {
            guard blockSize > 1 else { return image }
            return try image.mappingFrames { bitmap in
                let size = min(blockSize, max(bitmap.width, bitmap.height))
                guard size > 1 else { return bitmap }
                return try Self.pixelated(bitmap, size: size)
            }
        }

        /// libvips' integer mean of `count` values summing to `sum`.
        static func mean(_ sum: Int, _ count: Int) -> Int {
            ((sum + count / 2) * ((1 << 16) / count)) >> 16
        }

        private static func pixelated(_ bitmap: Bitmap, size: Int) throws -> Bitmap {
            let (width, height) = (bitmap.width, bitmap.height)
            // libvips' mirror extension: ..., 1, 0 | 0, 1, ..., n - 1 | n - 1, n - 2, ...
            func mirrored(_ index: Int, _ count: Int) -> Int {
                let folded = index % (2 * count)
                return folded < count ? folded : 2 * count - 1 - folded
            }
            return try bitmap.withUnsafeBytes { raw in
                let source = raw.bindMemory(to: UInt8.self)
                return try Bitmap(width: width, height: height) { buffer in
                    let target = buffer.bindMemory(to: UInt8.self)
                    var columnMeans = [Int](repeating: 0, count: size)
                    var blockY = 0
                    while blockY < height {
                        var blockX = 0
                        while blockX < width {
                            for channel in 0..<4 {
                                for column in 0..<size {
                                    let x = mirrored(blockX + column, width)
                                    var sum = 0
                                    for row in 0..<size { sum += Int(source[(mirrored(blockY + row, height) * width + x) * 4 + channel]) }
                                    columnMeans[column] = mean(sum, size)
                                }
                                let value = UInt8(min(255, mean(columnMeans.reduce(0, +), size)))
                                for y in blockY..<min(blockY + size, height) {
                                    for x in blockX..<min(blockX + size, width) { target[(y * width + x) * 4 + channel] = value }
                                }
                            }
                            blockX += size
                        }
                        blockY += size
                    }
                }
            }
        }
    }
}
