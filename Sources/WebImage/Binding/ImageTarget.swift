#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Something that shows an image: a view, a layer, a cell of a terminal UI.
///
/// Conform a display type to load into it with ``ImageBinding``; the binding calls
/// ``setImage(_:)`` on the main actor with the placeholder, a partial image, the loaded image,
/// the failure image, or `nil`. The other requirements have defaults: implement them to animate
/// transitions, show an activity indicator, or follow the progress.
@MainActor
public protocol ImageTarget: AnyObject {
    /// Shows `image`; `nil` clears what is shown.
    func setImage(_ image: DecodedImage?)
    /// Shows a loaded `image` with `transition` (`nil`: at once). Defaults to ``setImage(_:)``.
    func setImage(_ image: DecodedImage?, transition: ImageBinding.Transition?)
    /// The indicator to run while this target loads (SDWebImage's `sd_imageIndicator`); `nil` by default.
    var imageIndicator: (any ImageBinding.ActivityIndicator)? { get }
    /// The transition for images that did not come from the memory cache (SDWebImage's
    /// `sd_imageTransition`); `nil` by default.
    var imageTransition: ImageBinding.Transition? { get }
    /// The load's progress changed (SDWebImage's `sd_imageProgress`). Does nothing by default.
    func imageProgressDidChange(_ progress: ImageBinding.Progress)
}

extension ImageBinding {
    /// A target that plays animations: the binding hands it a player for each lazily decoded
    /// animation it loads, and `nil` when the next load (or a cancel) takes it away. The target
    /// calls ``AnimatedImagePlayer/update()`` from its display refresh and shows
    /// ``AnimatedImagePlayer/currentFrame``.
    @MainActor
    public protocol AnimatedTarget: ImageTarget {
        /// Plays `player`'s animation from now on; `nil` stops showing the previous one.
        func setAnimationPlayer(_ player: AnimatedImagePlayer?)
    }
}

extension ImageTarget {
    public func setImage(_ image: DecodedImage?, transition: ImageBinding.Transition?) { setImage(image) }
    public var imageIndicator: (any ImageBinding.ActivityIndicator)? { nil }
    public var imageTransition: ImageBinding.Transition? { nil }
    public func imageProgressDidChange(_ progress: ImageBinding.Progress) {}

    /// Loads `url` into this target through ``ImageBinding/shared``, cancelling the load this
    /// target started before under the same `operationKey`. See
    /// ``ImageBinding/setImage(on:with:placeholder:failureImage:options:context:operationKey:manager:progress:completion:)``.
    @discardableResult
    public func setImage(with url: URL?, placeholder: DecodedImage? = nil, failureImage: DecodedImage? = nil,
                         options: ImageLoadOptions = [], context: ImageLoadContext = ImageLoadContext(),
                         operationKey: String = ImageBinding.defaultOperationKey, manager: ImageManager = .shared,
                         progress: (@MainActor (_ received: Int64, _ expected: Int64?) -> Void)? = nil,
                         completion: (@MainActor (Result<ImageResult, WebImageError>) -> Void)? = nil) -> ImageTask? {
        ImageBinding.shared.setImage(on: self, with: url, placeholder: placeholder, failureImage: failureImage, options: options,
                                     context: context, operationKey: operationKey, manager: manager, progress: progress,
                                     completion: completion)
    }

    /// Cancels the load this target runs under `operationKey`.
    public func cancelImageLoad(operationKey: String = ImageBinding.defaultOperationKey) {
        ImageBinding.shared.cancelImageLoad(on: self, operationKey: operationKey)
    }
}

/// The name this had before it was grouped under ``ImageBinding``.
package typealias AnimatedImageTarget = ImageBinding.AnimatedTarget
