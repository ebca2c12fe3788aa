/// The canonical pixel form used to compare decoders: tightly packed straight-alpha RGBA8 with
/// every fully transparent pixel written as 0,0,0,0 (the colour under full transparency carries no
/// meaning and decoders legitimately differ there). Orientation is not applied.
extension Bitmap {
    /// The bitmap in canonical form (see the extension's documentation).
    public func canonicalRGBA() -> [UInt8] {
        withUnsafeBytes { source in
            var out = [UInt8](source)
            var index = 0
            while index < out.count {
                if out[index + 3] == 0 {
                    out[index] = 0; out[index + 1] = 0; out[index + 2] = 0
                }
                index += 4
            }
            return out
        }
    }

    /// SHA-256 (hex) of ``canonicalRGBA()``: equal to `rgba_sha256` in the corpus manifest when
    /// two decoders agree on every pixel.
    public func canonicalSHA256() -> String {
        SHA256.hex(of: canonicalRGBA())
    }
}
