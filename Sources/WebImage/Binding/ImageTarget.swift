/// Something that shows an image: a view, a layer, a cell of a terminal UI.
///
/// Conform a display type to load into it with ``ImageBinding``; the binding calls
/// ``setImage(_:)`` on the main actor with the placeholder, the loaded image, or `nil`.
@MainActor
public protocol ImageTarget: AnyObject {
    /// Shows `image`; `nil` clears what is shown.
    func setImage(_ image: DecodedImage?)
}

extension ImageTarget {
    /// Loads `url` into this target through ``ImageBinding/shared``, cancelling the load this
    /// target started before under the same `operationKey`. See
    /// ``ImageBinding/setImage(on:with:placeholder:options:context:operationKey:manager:progress:completion:)``.
    @discardableResult
    public func setImage(with url: URL?, placeholder: DecodedImage? = nil, options: ImageLoadOptions = [],
                         context: ImageLoadContext = ImageLoadContext(), operationKey: String = ImageBinding.defaultOperationKey,
                         manager: ImageManager = .shared,
                         progress: (@MainActor (_ received: Int64, _ expected: Int64?) -> Void)? = nil,
                         completion: (@MainActor (Result<ImageResult, WebImageError>) -> Void)? = nil) -> ImageTask? {
        ImageBinding.shared.setImage(on: self, with: url, placeholder: placeholder, options: options, context: context,
                                     operationKey: operationKey, manager: manager, progress: progress, completion: completion)
    }

    /// Cancels the load this target runs under `operationKey`.
    public func cancelImageLoad(operationKey: String = ImageBinding.defaultOperationKey) {
        ImageBinding.shared.cancelImageLoad(on: self, operationKey: operationKey)
    }
}

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
