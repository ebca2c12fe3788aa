#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The partial images of one decode stage of a ``ImageLoadOptions/progressiveLoad`` load.
///
/// The download offers each growing prefix of the data; a partial decode runs on the manager's
/// processing queue when none is in flight and ``PartialDecodeThrottle`` allows, on the newest
/// data (prefixes offered meanwhile are skipped: the incremental decoder reads every byte anyway).
/// Every load that shares the stage gets the same partial images. ``finish()`` stops the partials
/// before the final image is decoded, so none arrives after it; ``stop()`` (the load was
/// cancelled) stops the decode in flight at its next band of rows.
///
/// A partial image is a preview: a decoder that fails is dropped without failing the load, which
/// the final one-shot decode decides.
final class ProgressivePartials: Sendable {
    private struct State {
        var throttle = PartialDecodeThrottle()
        /// The newest data offered and not yet decoded.
        var pending: Data?
        var inFlight: Task<Void, Never>?
        var cancellation: DecodeCancellation?
        var stopped = false
        var decoderMade = false
    }

    private let plan: LoadPlan
    private let processing: WorkQueue
    private let stage: SharedWork<ImageOutput>
    private let state = Locked(State())
    /// The decoder, touched only by the one partial decode in flight (the lock is never contended).
    private let decoder = Locked<(any IncrementalImageDecoder)?>(nil)

    init(plan: LoadPlan, processing: WorkQueue, stage: SharedWork<ImageOutput>) {
        self.plan = plan
        self.processing = processing
        self.stage = stage
    }

    /// Offers the data received so far (each offer extends the last).
    func offer(_ data: Data) {
        state.withLock { state in
            guard !state.stopped else { return }
            if !state.decoderMade {
                state.decoderMade = true
                // Made inside the decoder's lock: a decoder is not Sendable and never leaves it.
                let made = decoder.withLock { slot -> (exists: Bool, cancellation: DecodeCancellation?) in
                    slot = plan.coders.makeIncrementalDecoder(for: ImageFormat.detect(data), options: plan.decodeOptions)
                    return (slot != nil, (slot as? any CancellableIncrementalDecoder)?.cancellation)
                }
                guard made.exists else {
                    state.stopped = true
                    return
                }
                state.cancellation = made.cancellation
            }
            state.pending = data
            startNextDecode(&state)
        }
    }

    /// Stops partial images before the final decode: the decode in flight is cancelled and waited
    /// for, so no partial image follows the final one.
    func finish() async {
        let running = stopAll()
        await running?.value
    }

    /// Stops partial decoding at once (the load was cancelled).
    func stop() {
        stopAll()?.cancel()
    }

    @discardableResult
    private func stopAll() -> Task<Void, Never>? {
        let (running, cancellation) = state.withLock { state in
            state.stopped = true
            state.pending = nil
            return (state.inFlight, state.cancellation)
        }
        cancellation?.cancel()
        return running
    }

    /// Starts a partial decode of the pending data if nothing is in flight and the throttle allows.
    private func startNextDecode(_ state: inout State) {
        guard !state.stopped, state.inFlight == nil, let data = state.pending,
              state.throttle.shouldDecode(count: data.count) else { return }
        state.pending = nil
        let ticket = processing.makeTicket()
        state.inFlight = Task { [self] in
            let decoder = self.decoder
            let outcome: Result<DecodedImage?, any Error>
            do {
                outcome = .success(try await processing.perform(ticket: ticket, priority: stage.priority) {
                    try decoder.withLock { try $0?.update(with: data, isComplete: false) }
                })
            } catch {
                outcome = .failure(error)
            }
            self.state.withLock { state in
                state.inFlight = nil
                guard case .success(let image) = outcome else {
                    // A failed decoder cannot go on; the final decode decides about the data.
                    state.stopped = true
                    return
                }
                // Sent under the lock, so partial images go out in order and before ``finish()`` returns.
                if let image, !state.stopped { stage.send(.partialImage(image)) }
                startNextDecode(&state)
            }
        }
    }
}
