import Foundation
import WebImageTestSupport
@testable import WebImage

/// An opaque black square `side` pixels wide: the placeholders and failure images the binding
/// tests show, told apart by their size.
func blackSquare(_ side: Int) -> DecodedImage {
    DecodedImage(bitmap: try! Bitmap(width: side, height: side, filledWith: (0, 0, 0, 255)), hasAlpha: false)
}

/// Loads `url` into `target` through `binding`, with a 2x2 placeholder, and waits for the completion.
@MainActor func bindingLoad(_ target: any ImageTarget, _ url: URL?, failureImage: DecodedImage? = nil, options: ImageLoadOptions = [],
                            key: String = ImageBinding.defaultOperationKey,
                            binding: ImageBinding, manager: ImageManager) async -> Result<ImageResult, WebImageError> {
    await withCheckedContinuation { continuation in
        binding.setImage(on: target, with: url, placeholder: blackSquare(2), failureImage: failureImage, options: options,
                         operationKey: key, manager: manager, completion: { continuation.resume(returning: $0) })
    }
}
