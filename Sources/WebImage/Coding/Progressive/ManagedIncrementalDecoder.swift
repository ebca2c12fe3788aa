#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A coder's incremental decoder as ``ImageCodersManager`` hands it out: each image it returns
/// gets what the manager's one-shot decode adds after a coder (the EXIF orientation applied when
/// the options ask for it, the options' scale), so partial images look like the final one.
final class ManagedIncrementalDecoder: CancellableIncrementalDecoder {
    private let inner: any IncrementalImageDecoder
    private let options: DecodeOptions
    let cancellation: DecodeCancellation

    init(_ inner: any IncrementalImageDecoder, options: DecodeOptions) {
        self.inner = inner
        self.options = options
        cancellation = (inner as? any CancellableIncrementalDecoder)?.cancellation ?? DecodeCancellation()
    }

    func update(with data: Data, isComplete: Bool) throws -> DecodedImage? {
        try cancellation.check()
        guard var image = try inner.update(with: data, isComplete: isComplete) else { return nil }
        if options.applyOrientation, image.orientation != .up {
            image = try image.applyingOrientation()
        }
        if image.scale != options.scale, options.scale > 0 { image.scale = options.scale }
        return image
    }
}
