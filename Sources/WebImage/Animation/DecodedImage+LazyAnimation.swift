#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension DecodedImage {
    /// `transformer` applied as a load applies it: to a lazily decoded animation frame by frame as
    /// the frames are decoded (the poster now, the rest through ``AnimatedImage/transformed(by:)``),
    /// to any other image at once.
    public func applying(_ transformer: any ImageTransformer) throws -> DecodedImage {
        guard let animation else { return try transformer.transform(self) }
        var poster = self
        poster.animation = nil
        var image = try transformer.transform(poster)
        image.animation = try animation.transformed(by: transformer)
        image.loopCount = loopCount
        image.truncation = truncation
        return image
    }
}

extension ImageCodersManager {
    /// Decodes for showing: a GIF, APNG, animated WebP, AVIF sequence or JPEG XL animation with
    /// more than one frame becomes a lazily decoded animation (``DecodedImage/animation`` set, the first frame decoded, the
    /// rest on demand) unless ``DecodeOptions/firstFrameOnly``; anything else, or data a custom
    /// coder added before the built-in ones claims, decodes as ``decode(_:options:)`` does.
    public func decodeForDisplay(_ data: Data, options: DecodeOptions) throws -> DecodedImage {
        guard !options.firstFrameOnly, let coder = coders.first(where: { $0.canDecode(data) }),
              coder is GIFCoder || coder is PNGCoder || coder is WebPCoder || coder is AVIFCoder || coder is JXLCoder,
              let animation = try AnimatedImage(data: data, options: options,
                                                applyCleanAperture: (coder as? AVIFCoder)?.applyCleanAperture ?? true) else {
            return try decode(data, options: options)
        }
        var image = try DecodedImage(animation: animation)
        if image.scale != options.scale, options.scale > 0 { image.scale = options.scale }
        return image
    }
}
