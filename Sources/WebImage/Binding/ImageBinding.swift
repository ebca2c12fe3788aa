#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Binds loads to the targets that show them, SDWebImage's `sd_setImage` done once for every
/// kind of target: one running load per target and operation key (a new load cancels the old
/// one, so a reused cell never shows a stale image), placeholders and failure images, the
/// view-side options ``ImageLoadOptions/delayPlaceholder`` and ``ImageLoadOptions/avoidAutoSetImage``,
/// the target's transition, activity indicator and progress, partial images of a progressive
/// load, and players for animated images.
///
/// Targets are held weakly: a target that goes away cancels nothing by itself, but its load's
/// result is dropped.
@MainActor
public final class ImageBinding {
    /// The binding the ``ImageTarget`` conveniences use.
    public static let shared = ImageBinding()

    /// The operation key of a target's main image.
    public nonisolated static let defaultOperationKey = "image"

    private struct OperationKey: Hashable {
        let target: ObjectIdentifier
        let name: String
    }

    private struct Operation {
        weak var target: (any ImageTarget)?
        let task: ImageTask
        weak var indicator: (any ImageBinding.ActivityIndicator)?
    }

    /// What a finished load left on its target: the player of its animation, and its progress.
    private struct Shown {
        weak var target: (any ImageTarget)?
        var player: AnimatedImagePlayer?
        var progress: ImageBinding.Progress?
    }

    private var operations: [OperationKey: Operation] = [:]
    private var shown: [OperationKey: Shown] = [:]

    public init() {}

    /// Loads `url` into `target`.
    ///
    /// - The load `target` runs under `operationKey` is cancelled first, with its partial images
    ///   and its animation's player (the player stops and the target gets `nil`).
    /// - `placeholder` is shown at once, or with ``ImageLoadOptions/delayPlaceholder`` only if the load fails.
    /// - The target's ``ImageTarget/imageIndicator`` starts now and stops when the load ends
    ///   however it ends; ``ImageTarget/imageProgressDidChange(_:)`` follows the bytes.
    /// - Partial images (``ImageLoadOptions/progressiveLoad``) and the image are set on the
    ///   target unless ``ImageLoadOptions/avoidAutoSetImage`` is given (then `completion`
    ///   decides what to show); the image comes with the target's ``ImageTarget/imageTransition``
    ///   unless it came from the memory cache. An animation decoded lazily also gets a playing
    ///   ``AnimatedImagePlayer`` when the target is an ``ImageBinding/AnimatedTarget``.
    /// - When the load fails, `failureImage` is shown (unless ``ImageLoadOptions/avoidAutoSetImage``),
    ///   else the delayed placeholder.
    /// - `completion` is called on the main actor when the load ends, but not when it was
    ///   cancelled or replaced by a newer load of the same target and key.
    /// - Returns: the running task, or `nil` when `url` is `nil` (the placeholder or failure
    ///   image is shown and `completion` gets ``WebImageError/invalidURL(_:)``).
    @discardableResult
    public func setImage(on target: any ImageTarget, with url: URL?, placeholder: DecodedImage? = nil,
                         failureImage: DecodedImage? = nil,
                         options: ImageLoadOptions = [], context: ImageLoadContext = ImageLoadContext(),
                         operationKey: String = ImageBinding.defaultOperationKey, manager: ImageManager = .shared,
                         progress: (@MainActor (_ received: Int64, _ expected: Int64?) -> Void)? = nil,
                         completion: (@MainActor (Result<ImageResult, WebImageError>) -> Void)? = nil) -> ImageTask? {
        let key = OperationKey(target: ObjectIdentifier(target), name: operationKey)
        cancel(key)
        shown = shown.filter { $0.value.target != nil }
        let autoSets = !options.contains(.avoidAutoSetImage)
        let delaysPlaceholder = options.contains(.delayPlaceholder)
        if !delaysPlaceholder { target.setImage(placeholder) }
        guard let url else {
            if let failureImage, autoSets { target.setImage(failureImage) } else if delaysPlaceholder { target.setImage(placeholder) }
            completion?(.failure(.invalidURL("nil")))
            return nil
        }
        let task = manager.imageTask(with: url, options: options, context: context)
        let indicator = target.imageIndicator
        operations[key] = Operation(target: target, task: task, indicator: indicator)
        report(ImageBinding.Progress(received: 0, expected: nil), key: key, target: target)
        indicator?.startAnimatingIndicator()
        Task { @MainActor [weak self] in
            var outcome: Result<ImageResult, WebImageError>
            do {
                var final: ImageResult?
                for try await event in task.events {
                    // A replaced or cancelled load shows nothing more, not even a partial image.
                    guard let self, operations[key]?.task === task else { return }
                    switch event {
                    case .progress(let received, let expected):
                        if let target = operations[key]?.target {
                            report(ImageBinding.Progress(received: received, expected: expected), key: key, target: target)
                        }
                        progress?(received, expected)
                    case .partialImage(let image):
                        if autoSets { operations[key]?.target?.setImage(image) }
                    case .completed(let result):
                        final = result
                    case .cachedImage:
                        break
                    }
                }
                outcome = final.map { .success($0) } ?? .failure(.cancelled)
            } catch {
                outcome = .failure(WebImageError.fromLoading(error))
            }
            guard let self, let operation = operations[key], operation.task === task else { return }
            operations[key] = nil
            operation.indicator?.stopAnimatingIndicator()
            guard let target = operation.target else { return }
            switch outcome {
            case .failure(.cancelled):
                return
            case .success(let result):
                var finished = shown[key]?.progress ?? ImageBinding.Progress(received: 0, expected: nil)
                finished.isFinished = true
                if let expected = finished.expected { finished.received = expected }
                report(finished, key: key, target: target)
                if autoSets { show(result, on: target, key: key) }
            case .failure:
                if let failureImage, autoSets {
                    target.setImage(failureImage)
                } else if delaysPlaceholder {
                    target.setImage(placeholder)
                }
            }
            completion?(outcome)
        }
        return task
    }

    /// Cancels the load `target` runs under `operationKey`, and stops the player of the
    /// animation it shows.
    public func cancelImageLoad(on target: any ImageTarget, operationKey: String = ImageBinding.defaultOperationKey) {
        cancel(OperationKey(target: ObjectIdentifier(target), name: operationKey))
    }

    /// The load `target` runs under `operationKey`, if any.
    public func runningTask(on target: any ImageTarget, operationKey: String = ImageBinding.defaultOperationKey) -> ImageTask? {
        operations[OperationKey(target: ObjectIdentifier(target), name: operationKey)]?.task
    }

    /// The progress of the load `target` runs or last ran under `operationKey` (SDWebImage's
    /// `sd_imageProgress`): `nil` before any load.
    public func progress(on target: any ImageTarget, operationKey: String = ImageBinding.defaultOperationKey) -> ImageBinding.Progress? {
        let entry = shown[OperationKey(target: ObjectIdentifier(target), name: operationKey)]
        return entry?.target === target ? entry?.progress : nil
    }

    /// The player of the animation `target` shows under `operationKey`, if any.
    public func animationPlayer(on target: any ImageTarget, operationKey: String = ImageBinding.defaultOperationKey) -> AnimatedImagePlayer? {
        let entry = shown[OperationKey(target: ObjectIdentifier(target), name: operationKey)]
        return entry?.target === target ? entry?.player : nil
    }

    private func show(_ result: ImageResult, on target: any ImageTarget, key: OperationKey) {
        target.setImage(result.image, transition: result.cacheType == .memory ? nil : target.imageTransition)
        guard let animation = result.image.animation, let animated = target as? any ImageBinding.AnimatedTarget,
              let player = try? AnimatedImagePlayer(animation: animation) else { return }
        shown[key, default: Shown(target: target)].player = player
        animated.setAnimationPlayer(player)
        player.play()
    }

    private func report(_ progress: ImageBinding.Progress, key: OperationKey, target: any ImageTarget) {
        if shown[key]?.target !== target { shown[key] = Shown(target: target) }
        shown[key]?.progress = progress
        target.imageProgressDidChange(progress)
        if let fraction = progress.fractionCompleted { operations[key]?.indicator?.updateIndicatorProgress(fraction) }
    }

    private func cancel(_ key: OperationKey) {
        if let operation = operations.removeValue(forKey: key) {
            operation.task.cancel()
            operation.indicator?.stopAnimatingIndicator()
        }
        if let player = shown[key]?.player {
            player.stop()
            shown[key]?.player = nil
            (shown[key]?.target as? any ImageBinding.AnimatedTarget)?.setAnimationPlayer(nil)
        }
    }
}
