extension Bitmap {
    /// The pixels of the rectangle at (`x`, `y`) of `width` × `height`, clipped to the bitmap.
    ///
    /// Returns `self` without copying when the clipped rectangle is the whole bitmap.
    /// - Throws: ``WebImageError/corruptData(_:)`` when the rectangle does not overlap the bitmap
    ///   (see ``ImageTransformers/Crop`` for why that case), ``WebImageError/tooLarge(_:)`` when memory runs out.
    public func cropped(x: Int, y: Int, width: Int, height: Int) throws -> Bitmap {
        // Clip in a way that cannot overflow whatever the caller passes.
        let left = Swift.max(0, x)
        let top = Swift.max(0, y)
        let (rightEnd, o1) = x.addingReportingOverflow(width)
        let (bottomEnd, o2) = y.addingReportingOverflow(height)
        let right = Swift.min(self.width, o1 ? (width > 0 ? Int.max : Int.min) : rightEnd)
        let bottom = Swift.min(self.height, o2 ? (height > 0 ? Int.max : Int.min) : bottomEnd)
        guard width > 0, height > 0, right > left, bottom > top else {
            throw TransformSupport.invalid(
                "crop (\(x), \(y)) \(width)×\(height) misses the \(self.width)×\(self.height) image")
        }
        if left == 0, top == 0, right == self.width, bottom == self.height { return self }
        let outWidth = right - left, outHeight = bottom - top
        let sourceStride = bytesPerRow, rowBytes = outWidth * 4
        return try withUnsafeBytes { source in
            try Bitmap(width: outWidth, height: outHeight) { target in
                for row in 0..<outHeight {
                    let from = source.baseAddress! + (top + row) * sourceStride + left * 4
                    (target.baseAddress! + row * rowBytes).copyMemory(from: from, byteCount: rowBytes)
                }
            }
        }
    }
}
