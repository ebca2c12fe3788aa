#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A running load: cancel it, change its priority, watch its progress, await its result.
///
/// ``events`` is for one consumer; it keeps the newest events when nobody reads it, and the
/// final ``ImageTaskEvent/completed(_:)`` is always the newest. ``result`` can be awaited
/// from any number of tasks. After ``cancel()`` nothing more is delivered: ``events`` ends and
/// ``result`` throws ``WebImageError/cancelled``.
public final class ImageTask: Sendable, Hashable {
    /// The URL being loaded.
    public let url: URL
    /// Progress, partial images, the cached image before a refresh, then the final result;
    /// the stream throws the load's ``WebImageError``.
    public let events: AsyncThrowingStream<ImageTaskEvent, any Error>

    private struct Control {
        var priority: LoadPriority
        var work: Task<ImageResult, any Error>?
        var prioritySink: (@Sendable (LoadPriority) -> Void)?
        var isCancelled = false
        var isFinished = false
    }

    private let continuation: AsyncThrowingStream<ImageTaskEvent, any Error>.Continuation
    private let control: Locked<Control>

    init(url: URL, priority: LoadPriority) {
        self.url = url
        (events, continuation) = AsyncThrowingStream.makeStream(bufferingPolicy: .bufferingNewest(256))
        control = Locked(Control(priority: priority))
    }

    /// The final result; throws the load's ``WebImageError``.
    public var result: ImageResult {
        get async throws {
            guard let work = control.withLock({ $0.work }) else { throw WebImageError.cancelled }
            return try await withTaskCancellationHandler {
                try await work.value
            } onCancel: {
                // Awaiting the result from a task that gets cancelled cancels the load, as an
                // `async let` child would be.
                self.cancel()
            }
        }
    }

    /// The current priority.
    public var priority: LoadPriority { control.withLock { $0.priority } }

    /// Whether ``cancel()`` was called.
    public var isCancelled: Bool { control.withLock { $0.isCancelled } }

    /// Changes the priority; the shared stages this load waits for follow the highest priority of
    /// their waiting loads.
    public func setPriority(_ priority: LoadPriority) {
        let sink = control.withLock { control -> (@Sendable (LoadPriority) -> Void)? in
            control.priority = priority
            return control.prioritySink
        }
        sink?(priority)
    }

    /// Cancels the load. Shared work stops only when no other load waits for it.
    public func cancel() {
        let work = control.withLock { control -> Task<ImageResult, any Error>? in
            guard !control.isCancelled, !control.isFinished else { return nil }
            control.isCancelled = true
            return control.work
        }
        guard let work else { return }
        continuation.finish(throwing: WebImageError.cancelled)
        work.cancel()
    }

    public static func == (lhs: ImageTask, rhs: ImageTask) -> Bool { lhs === rhs }
    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }

    // MARK: Pipeline side

    func attach(_ work: Task<ImageResult, any Error>) {
        let cancelled = control.withLock { control -> Bool in
            control.work = work
            return control.isCancelled
        }
        if cancelled { work.cancel() }
    }

    /// Points priority changes at the stage the load waits on now.
    func setPrioritySink(_ sink: (@Sendable (LoadPriority) -> Void)?) {
        control.withLock { $0.prioritySink = sink }
    }

    func emit(_ event: ImageTaskEvent) {
        guard !isCancelled else { return }
        continuation.yield(event)
    }

    func finish(_ result: Result<ImageResult, WebImageError>) {
        let deliver = control.withLock { control -> Bool in
            control.isFinished = true
            control.prioritySink = nil
            return !control.isCancelled
        }
        guard deliver else { return }
        switch result {
        case .success(let value):
            continuation.yield(.completed(value))
            continuation.finish()
        case .failure(let error):
            continuation.finish(throwing: error)
        }
    }
}
