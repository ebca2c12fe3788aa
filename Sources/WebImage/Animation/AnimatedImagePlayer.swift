#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Plays an ``AnimatedImage`` (SDWebImage's `SDAnimatedImagePlayer`), platform-neutral: the
/// consumer calls ``update()`` whenever it can show a frame (a display link, a timer, a
/// terminal redraw) and shows ``currentFrame``; the player decides from its ``AnimatedImagePlayer/Clock``
/// which frame is due.
///
/// - Timing: each frame shows for its duration (durations under 11 ms count as 100 ms, as
///   browsers and SDWebImage play them) divided by ``playbackRate``. A consumer that calls late
///   skips the frames whose time passed (``Statistics/skipped``); a frame the decoder has not
///   finished yet holds playback until it is ready, rather than being skipped.
/// - Loops: the animation's loop count (or ``loopCount`` when set), 0 playing forever; after
///   the last loop the player stops on the last frame (``isFinished``).
/// - Buffer: decoded frames are kept in a buffer bounded by ``bufferBudget`` bytes, the frames
///   from the current one onward; when every frame fits, all are kept and loops decode nothing.
///   The next frames are decoded ahead on the process's CPU budget (Dispatch threads, never the
///   consumer's thread), with a reader of the player's own.
public final class AnimatedImagePlayer: Sendable {
    /// What the player did so far.
    public struct Statistics: Sendable, Hashable {
        /// Frames presented (returned by ``update()`` as newly due).
        public var shown = 0
        /// Frames whose time passed before the consumer asked for them.
        public var skipped = 0
        /// The most bytes the frame buffer held at once.
        public var peakBufferBytes = 0
        /// The bytes the frame buffer holds now.
        public var bufferBytes = 0
    }

    /// The animation played.
    public let animation: AnimatedImage
    /// The most bytes the frame buffer holds.
    public let bufferBudget: Int
    private let clock: any AnimatedImagePlayer.Clock

    private struct State {
        var isPlaying = false
        var rate = 1.0
        var skipsFrames = true
        var loopCount: Int
        var index = 0
        /// Seconds of the current frame already shown.
        var position = 0.0
        var lastTick: Double?
        var loopsCompleted = 0
        var isFinished = false
        /// Counts each time a frame becomes due, so a frame due again after a loop is told apart.
        var dueSerial = 0
        var presentedSerial = -1
        var displayed: ImageFrame?
        var buffer: [Int: ImageFrame] = [:]
        var failed: Set<Int> = []
        var statistics = Statistics()
        var prefetching = false
        var stopped = false
        var idleWaiters: [CheckedContinuation<Void, Never>] = []
        var lastError: WebImageError?
    }

    private let state: Locked<State>
    /// The prefetcher's reader; only the one running prefetch loop touches it.
    private let reader: Locked<AnimationCursor>
    /// How many frames the buffer holds (at least one).
    private let capacity: Int

    /// Creates a paused player at frame 0.
    /// - Parameters:
    ///   - animation: the animation to play; its frames are decoded as playback needs them.
    ///   - clock: the time playback follows; ``AnimatedImagePlayer/SystemClock`` by default, a
    ///     display link's timestamps or a test's clock otherwise.
    ///   - bufferBytes: the frame buffer's budget; `nil` for the animation's default
    ///     (``AnimatedImage/bufferBudget``). At least one frame is always buffered.
    public init(animation: AnimatedImage, clock: any AnimatedImagePlayer.Clock = AnimatedImagePlayer.SystemClock(), bufferBytes: Int? = nil) throws {
        self.animation = animation
        self.clock = clock
        let frameBytes = max(1, animation.frameByteCount)
        let budget = max(frameBytes, bufferBytes ?? animation.bufferBudget)
        bufferBudget = budget
        capacity = max(1, min(animation.frameCount, budget / frameBytes))
        state = Locked(State(loopCount: animation.loopCount))
        reader = Locked(try animation.makeCursor())
    }

    // MARK: Observing

    /// The frame to show now: the last one ``update()`` presented (`nil` until the first frame is decoded).
    public var currentFrame: ImageFrame? { state.withLock { $0.displayed } }
    /// The index of the frame due now.
    public var currentFrameIndex: Int { state.withLock { $0.index } }
    /// Whether the clock drives the player.
    public var isPlaying: Bool { state.withLock { $0.isPlaying } }
    /// Whether the last loop ended.
    public var isFinished: Bool { state.withLock { $0.isFinished } }
    /// Complete plays of the animation so far.
    public var loopsCompleted: Int { state.withLock { $0.loopsCompleted } }
    /// Counters of what the player did.
    public var statistics: Statistics { state.withLock { $0.statistics } }
    /// The last error decoding a frame (the frame is skipped), if any.
    public var lastError: WebImageError? { state.withLock { $0.lastError } }

    /// The speed: 1 plays as the file says, 2 twice as fast, 0 holds the frame.
    public var playbackRate: Double {
        get { state.withLock { $0.rate } }
        set { state.withLock { $0.rate = newValue.isFinite ? max(0, newValue) : 1 } }
    }

    /// Whether a late consumer skips the frames whose time passed (the default), or sees every
    /// frame, each starting when the previous one's time is up at the consumer's next call.
    public var skipsFrames: Bool {
        get { state.withLock { $0.skipsFrames } }
        set { state.withLock { $0.skipsFrames = newValue } }
    }

    /// How many times to play; 0 forever. Starts as the animation's loop count.
    public var loopCount: Int {
        get { state.withLock { $0.loopCount } }
        set { state.withLock { $0.loopCount = max(0, newValue) } }
    }

    /// The clock time the current frame's time ends at the current rate, or `nil` when paused,
    /// finished or waiting for a frame: when to call ``update()`` next.
    public var nextFrameTime: Double? {
        state.withLock { state in
            guard state.isPlaying, !state.isFinished, state.presentedSerial == state.dueSerial,
                  state.rate > 0, let lastTick = state.lastTick else { return nil }
            return lastTick + (duration(state.index) - state.position) / state.rate
        }
    }

    // MARK: Controlling

    /// Starts or resumes playing from the current frame.
    public func play() {
        let now = clock.now()
        state.withLock { state in
            state.isPlaying = true
            state.lastTick = now
            if state.isFinished {
                state.isFinished = false
                state.loopsCompleted = 0
                state.index = 0
                state.position = 0
                state.dueSerial += 1
            }
            present(&state)
        }
        schedulePrefetch()
    }

    /// Pauses on the current frame.
    public func pause() {
        state.withLock { state in
            state.isPlaying = false
            state.lastTick = nil
        }
    }

    /// Jumps to frame `index` (clamped to the frames there are); it shows as soon as it is decoded.
    public func seek(toFrame index: Int) {
        let now = clock.now()
        state.withLock { state in
            state.index = min(max(0, index), animation.frameCount - 1)
            state.position = 0
            state.isFinished = false
            state.dueSerial += 1
            if state.isPlaying { state.lastTick = now }
            evict(&state)
            present(&state)
        }
        schedulePrefetch()
    }

    /// Stops for good: no more prefetching, the buffer is emptied. For a target that shows
    /// another image now.
    public func stop() {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.stopped = true
            state.isPlaying = false
            state.buffer = [:]
            state.statistics.bufferBytes = 0
            guard !state.prefetching else { return [] }
            defer { state.idleWaiters = [] }
            return state.idleWaiters
        }
        waiters.forEach { $0.resume() }
    }

    /// Advances to the frame due at the clock's time and returns it when it is newly presented
    /// (`nil` when the frame shown stays the same). Cheap: decoding happens ahead, elsewhere.
    @discardableResult
    public func update() -> ImageFrame? {
        let now = clock.now()
        let presented = state.withLock { state -> ImageFrame? in
            guard state.isPlaying, !state.isFinished, !state.stopped else { return nil }
            let elapsed = max(0, now - (state.lastTick ?? now)) * state.rate
            state.lastTick = now
            // A frame still being decoded holds playback: its time starts when it shows.
            guard state.presentedSerial == state.dueSerial else {
                state.position = 0
                return present(&state)
            }
            state.position += elapsed
            advance(&state)
            return present(&state)
        }
        schedulePrefetch()
        return presented
    }

    /// Returns once the prefetcher has filled the buffer ahead of the current frame (or stopped).
    public func waitUntilPrefetched() async {
        schedulePrefetch()
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let idle = state.withLock { state -> Bool in
                if !state.prefetching || state.stopped { return true }
                state.idleWaiters.append(continuation)
                return false
            }
            if idle { continuation.resume() }
        }
        state.withLock { state in _ = present(&state) }
    }

    // MARK: Timing

    /// How long frame `index` shows at rate 1.
    private func duration(_ index: Int) -> Double {
        let duration = animation.durations[index]
        return duration < 0.011 ? 0.1 : duration
    }

    private func advance(_ state: inout State) {
        let count = animation.frameCount
        let total = animation.durations.indices.reduce(0) { $0 + duration($1) }
        skipWholeLoops(&state, total: total)
        while state.position >= duration(state.index) {
            state.position -= duration(state.index)
            if state.index + 1 == count, state.loopCount > 0, state.loopsCompleted + 1 >= state.loopCount {
                // The end of the last loop: its last frame stays up (shown once decoded, not
                // counted as skipped, so shown + skipped is the frames played).
                state.loopsCompleted += 1
                state.isFinished = true
                state.position = 0
                return
            }
            if state.presentedSerial != state.dueSerial { state.statistics.skipped += 1 }
            if state.index + 1 == count {
                state.loopsCompleted += 1
                state.index = 0
                skipWholeLoops(&state, total: total)
            } else {
                state.index += 1
            }
            state.dueSerial += 1
            if !state.skipsFrames {
                state.position = 0
                return
            }
        }
    }

    /// At frame 0 with more than a whole play of time to catch up on, passes whole plays at once,
    /// so a consumer back after an hour does not walk every frame (the last loop is walked, so
    /// the end of a finite loop count is reached frame by frame).
    private func skipWholeLoops(_ state: inout State, total: Double) {
        guard state.skipsFrames, state.index == 0, total > 0, state.position >= total else { return }
        var loops = Int(min(state.position / total, Double(Int.max / 2)).rounded(.down))
        if state.loopCount > 0 { loops = min(loops, max(0, state.loopCount - state.loopsCompleted - 1)) }
        guard loops > 0 else { return }
        if state.presentedSerial != state.dueSerial { state.statistics.skipped += 1 }
        state.loopsCompleted += loops
        state.position -= Double(loops) * total
        state.statistics.skipped += loops * animation.frameCount - 1
        state.dueSerial += 1
    }

    /// Shows the due frame if it is decoded; returns it when newly shown.
    @discardableResult
    private func present(_ state: inout State) -> ImageFrame? {
        guard state.presentedSerial != state.dueSerial else { return nil }
        if state.failed.contains(state.index) {
            // A frame that cannot be decoded is passed over; the previous one stays up.
            state.statistics.skipped += 1
            state.presentedSerial = state.dueSerial
            return nil
        }
        guard let frame = state.buffer[state.index] else { return nil }
        state.presentedSerial = state.dueSerial
        state.displayed = frame
        state.statistics.shown += 1
        evict(&state)
        return frame
    }

    // MARK: Buffer

    /// The frames the buffer keeps: `capacity` of them from the current one on.
    private func window(_ state: State) -> [Int] {
        (0..<capacity).map { (state.index + $0) % animation.frameCount }
    }

    private func evict(_ state: inout State) {
        guard capacity < animation.frameCount else { return }
        let keep = Set(window(state))
        for index in state.buffer.keys where !keep.contains(index) {
            if let frame = state.buffer.removeValue(forKey: index) { state.statistics.bufferBytes -= frame.bitmap.byteCount }
        }
    }

    private func schedulePrefetch() {
        let start = state.withLock { state -> Bool in
            guard !state.prefetching, !state.stopped, nextToDecode(state) != nil else { return false }
            state.prefetching = true
            return true
        }
        guard start else { return }
        Task.detached(priority: .userInitiated) { [self] in await prefetch() }
    }

    private func nextToDecode(_ state: State) -> Int? {
        window(state).first { state.buffer[$0] == nil && !state.failed.contains($0) }
    }

    private func prefetch() async {
        let ticket = WorkQueue.cpu.makeTicket()
        while true {
            let job = state.withLock { state -> Int? in
                guard !state.stopped, let next = nextToDecode(state) else {
                    state.prefetching = false
                    return nil
                }
                return next
            }
            guard let job else { break }
            let animation = animation, reader = reader
            let result: Result<ImageFrame, WebImageError>
            do {
                result = .success(try await WorkQueue.cpu.perform(ticket: ticket, priority: .normal) {
                    try reader.withLock { cursor in try animation.render(job, with: &cursor) }
                })
            } catch {
                result = .failure(WebImageError.fromLoading(error))
            }
            state.withLock { state in
                switch result {
                case .success(let frame):
                    guard !state.stopped, window(state).contains(job), state.buffer[job] == nil else { return }
                    state.buffer[job] = frame
                    state.statistics.bufferBytes += frame.bitmap.byteCount
                    state.statistics.peakBufferBytes = max(state.statistics.peakBufferBytes, state.statistics.bufferBytes)
                case .failure(let error):
                    state.failed.insert(job)
                    state.lastError = error
                }
                present(&state)
            }
        }
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            defer { state.idleWaiters = [] }
            return state.idleWaiters
        }
        waiters.forEach { $0.resume() }
    }
}
