#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Binds loads to the targets that show them, SDWebImage's `sd_setImage` done once for every
/// kind of target: one running load per target and operation key (a new load cancels the old
/// one, so a reused cell never shows a stale image), placeholders, and the view-side options
/// ``ImageLoadOptions/delayPlaceholder`` and ``ImageLoadOptions/avoidAutoSetImage``.
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
    }

    private var operations: [OperationKey: Operation] = [:]

    public init() {}

    /// Loads `url` into `target`.
    ///
    /// - The load `target` runs under `operationKey` is cancelled first.
    /// - `placeholder` is shown at once, or with ``ImageLoadOptions/delayPlaceholder`` only if the load fails.
    /// - The image is set on the target unless ``ImageLoadOptions/avoidAutoSetImage`` is given
    ///   (then `completion` decides what to show).
    /// - `completion` is called on the main actor when the load ends, but not when it was
    ///   cancelled or replaced by a newer load of the same target and key.
    /// - Returns: the running task, or `nil` when `url` is `nil` (the placeholder is shown and
    ///   `completion` gets ``WebImageError/invalidURL(_:)``).
    @discardableResult
    public func setImage(on target: any ImageTarget, with url: URL?, placeholder: DecodedImage? = nil,
                         options: ImageLoadOptions = [], context: ImageLoadContext = ImageLoadContext(),
                         operationKey: String = ImageBinding.defaultOperationKey, manager: ImageManager = .shared,
                         progress: (@MainActor (_ received: Int64, _ expected: Int64?) -> Void)? = nil,
                         completion: (@MainActor (Result<ImageResult, WebImageError>) -> Void)? = nil) -> ImageTask? {
        let key = OperationKey(target: ObjectIdentifier(target), name: operationKey)
        cancel(key)
        let delaysPlaceholder = options.contains(.delayPlaceholder)
        if !delaysPlaceholder { target.setImage(placeholder) }
        guard let url else {
            if delaysPlaceholder { target.setImage(placeholder) }
            completion?(.failure(.invalidURL("nil")))
            return nil
        }
        let task = manager.imageTask(with: url, options: options, context: context)
        operations[key] = Operation(target: target, task: task)
        Task { @MainActor [weak self] in
            var outcome: Result<ImageResult, WebImageError>
            do {
                var final: ImageResult?
                for try await event in task.events {
                    switch event {
                    case .progress(let received, let expected): progress?(received, expected)
                    case .completed(let result): final = result
                    case .cachedImage, .partialImage: break
                    }
                }
                outcome = final.map { .success($0) } ?? .failure(.cancelled)
            } catch {
                outcome = .failure(WebImageError.fromLoading(error))
            }
            guard let self, let operation = operations[key], operation.task === task else { return }
            operations[key] = nil
            guard let target = operation.target else { return }
            switch outcome {
            case .failure(.cancelled):
                return
            case .success(let result):
                if !options.contains(.avoidAutoSetImage) { target.setImage(result.image) }
            case .failure:
                if delaysPlaceholder { target.setImage(placeholder) }
            }
            completion?(outcome)
        }
        return task
    }

    /// Cancels the load `target` runs under `operationKey`.
    public func cancelImageLoad(on target: any ImageTarget, operationKey: String = ImageBinding.defaultOperationKey) {
        cancel(OperationKey(target: ObjectIdentifier(target), name: operationKey))
    }

    /// The load `target` runs under `operationKey`, if any.
    public func runningTask(on target: any ImageTarget, operationKey: String = ImageBinding.defaultOperationKey) -> ImageTask? {
        operations[OperationKey(target: ObjectIdentifier(target), name: operationKey)]?.task
    }

    private func cancel(_ key: OperationKey) {
        operations.removeValue(forKey: key)?.task.cancel()
    }
}
