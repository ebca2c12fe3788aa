import Testing
import WebImageTestSupport
@testable import WebImage

/// The rules of one piece of work for many callers, as every level uses them (the pipeline's
/// stages, the cache's in-flight reads, the downloader's coalescing): the highest priority among
/// waiters, replay to late joiners, cancel when the last waiter leaves and not before, the
/// result to all.
@Suite("Shared work", .timeLimit(.minutes(1)))
struct SharedWorkTests {
    typealias Waiters = SharedWorkWaiters<String, Int>

    @Test func priorityIsTheHighestAmongWaiters() {
        var waiters = Waiters(priority: .low)
        #expect(waiters.join(0, priority: .low, sink: "a").raised == nil)
        #expect(waiters.join(1, priority: .high, sink: "b").raised == .high)
        #expect(waiters.join(2, priority: .normal, sink: "c").raised == nil)
        #expect(waiters.priority == .high)
        // The highest leaves: the work falls to the highest still waiting.
        guard case .left(let sink, let lowered) = waiters.leave(1) else { Issue.record("not left"); return }
        #expect(sink == "b" && lowered == .normal)
        #expect(waiters.priority == .normal)
        // A waiter raises and lowers its own.
        #expect(waiters.setPriority(.veryHigh, of: 0) == .veryHigh)
        #expect(waiters.setPriority(.veryLow, of: 0) == .normal)
        #expect(waiters.setPriority(.low, of: 42) == nil, "an unknown waiter changes nothing")
    }

    @Test func lastWaiterLeavingEndsTheWorkAndNotBefore() {
        var waiters = Waiters(priority: .normal)
        _ = waiters.join(0, priority: .normal, sink: "a")
        _ = waiters.join(1, priority: .normal, sink: "b")
        guard case .left = waiters.leave(0) else { Issue.record("the work ended with a waiter left"); return }
        #expect(waiters.leave(0).map { _ in true } == nil, "leaving twice does nothing")
        guard case .last(let sink) = waiters.leave(1) else { Issue.record("the last waiter did not end it"); return }
        #expect(sink == "b")
    }

    @Test func lateJoinersGetTheLastOfEachRememberedEventInSlotOrder() {
        var waiters = Waiters(priority: .normal, replaySlots: 2)
        #expect(waiters.join(0, priority: .normal, sink: "a").replay.isEmpty)
        waiters.remember(10, slot: 1)
        waiters.remember(1, slot: 0)
        waiters.remember(11, slot: 1)
        #expect(waiters.join(1, priority: .normal, sink: "b").replay == [1, 11])
        #expect(waiters.removeAll().sorted() == ["a", "b"])
        #expect(waiters.isEmpty)
    }

    @Test func resultReachesEveryWaiterAndWorkRunsOnce() async throws {
        let pool = SharedWorkPool<String>()
        let gate = LoopbackGate()
        let runs = Locked(0)
        let work: @Sendable (SharedWork<Int>) async throws -> Int = { _ in
            runs.withLock { $0 += 1 }
            await gate.wait()
            return 7
        }
        let subscriptions = (0..<5).map { _ in pool.subscribe(key: "k", priority: .normal, work: work) }
        #expect(pool.count == 1)
        gate.open()
        for subscription in subscriptions { #expect(try await subscription.value() == 7) }
        #expect(runs.withLock { $0 } == 1)
        #expect(pool.count == 0)
    }

    @Test func lateJoinerIsReplayedTheLastProgress() async throws {
        let pool = SharedWorkPool<String>()
        let gate = LoopbackGate(), sent = LoopbackGate()
        let work: @Sendable (SharedWork<Int>) async throws -> Int = { work in
            work.send(.progress(received: 1, expected: 10))
            work.send(.progress(received: 5, expected: 10))
            sent.open()
            await gate.wait()
            return 1
        }
        let first = pool.subscribe(key: "k", priority: .normal, work: work)
        await sent.wait()
        let late = pool.subscribe(key: "k", priority: .normal, work: work)
        gate.open()
        var seen: [Int64] = []
        #expect(try await late.value { event in
            if case .progress(let received, _) = event { seen.append(received) }
        } == 1)
        #expect(seen == [5])
        #expect(try await first.value() == 1)
    }

    @Test func workIsCancelledWhenTheLastWaiterLeavesAndNotBefore() async throws {
        let pool = SharedWorkPool<String>()
        let started = LoopbackGate(), release = LoopbackGate(), cancelSeen = LoopbackGate()
        let cancelled = Locked(false)
        let work: @Sendable (SharedWork<Int>) async throws -> Int = { _ in
            started.open()
            await withTaskCancellationHandler {
                await release.wait()
            } onCancel: {
                cancelled.withLock { $0 = true }
                cancelSeen.open()
                release.open()
            }
            try Task.checkCancellation()
            return 3
        }
        let a = pool.subscribe(key: "k", priority: .normal, work: work)
        let b = pool.subscribe(key: "k", priority: .normal, work: work)
        await started.wait()
        a.cancel()
        #expect(!cancelled.withLock { $0 }, "one waiter is left")
        await #expect(throws: WebImageError.cancelled) { try await a.value() }
        b.cancel()
        await cancelSeen.wait()
        await #expect(throws: WebImageError.cancelled) { try await b.value() }
        #expect(pool.count == 0)
    }

    /// A limit the work overran (the service's render timeout): every waiter gets the error at
    /// once, while the work is still in its step; the work is cancelled, and a new caller starts
    /// a new one instead of joining it.
    @Test func abandonedWorkAnswersItsWaitersAtOnceAndIsCancelled() async throws {
        let pool = SharedWorkPool<String>()
        let started = LoopbackGate(), cancelSeen = LoopbackGate(), release = LoopbackGate()
        let works = Locked<[SharedWork<Int>]>([])
        let work: @Sendable (SharedWork<Int>) async throws -> Int = { work in
            works.withLock { $0.append(work) }
            started.open()
            await withTaskCancellationHandler {
                // A step that does not stop when cancelled.
                await release.wait()
            } onCancel: {
                cancelSeen.open()
            }
            return 3
        }
        let a = pool.subscribe(key: "k", priority: .normal, work: work)
        let b = pool.subscribe(key: "k", priority: .normal, work: work)
        await started.wait()
        works.withLock { $0[0] }.abandon(with: WebImageError.timedOut)
        await #expect(throws: WebImageError.timedOut) { try await a.value() }
        await #expect(throws: WebImageError.timedOut) { try await b.value() }
        await cancelSeen.wait()
        #expect(pool.count == 0)
        release.open()
        #expect(try await pool.subscribe(key: "k", priority: .normal, work: work).value() == 3)
        #expect(works.withLock { $0.count } == 2)
    }

    @Test func workJoinsWhatItDependsOnBeforeItsCallerReturns() async throws {
        let pool = SharedWorkPool<String>()
        let release = LoopbackGate()
        let upstreamRuns = Locked(0)
        let upstreamWork: @Sendable (SharedWork<Int>) async throws -> Int = { _ in
            upstreamRuns.withLock { $0 += 1 }
            await release.wait()
            return 2
        }
        let direct = pool.subscribe(key: "up", priority: .normal, work: upstreamWork)
        let downstream: SharedWorkSubscription<Int> = pool.subscribe(key: "down", priority: .normal) { (_: SharedWork<Int>) in
            let upstream = pool.subscribe(key: "up", priority: .normal, work: upstreamWork)
            return { _ in try await upstream.value() * 10 }
        }
        // Joined before `subscribe` returned, not whenever the downstream task gets to run: the
        // upstream cannot end (and run again for a late joiner) in between.
        #expect(direct.work.waiterCount == 2)
        release.open()
        #expect(try await direct.value() == 2)
        #expect(try await downstream.value() == 20)
        #expect(upstreamRuns.withLock { $0 } == 1)
    }

    @Test func priorityChangesReachTheRunningWork() async throws {
        let pool = SharedWorkPool<String>()
        let started = LoopbackGate(), release = LoopbackGate()
        let seen = Locked<[LoadPriority]>([])
        let work: @Sendable (SharedWork<Int>) async throws -> Int = { work in
            work.onPriorityChange { priority in seen.withLock { $0.append(priority) } }
            started.open()
            await release.wait()
            return 0
        }
        let low = pool.subscribe(key: "k", priority: .low, work: work)
        await started.wait()
        let high = pool.subscribe(key: "k", priority: .high, work: work)
        high.cancel()
        low.setPriority(.veryHigh)
        release.open()
        #expect(try await low.value() == 0)
        #expect(seen.withLock { $0 } == [.high, .low, .veryHigh])
    }

    /// A waiter's task cancelled while the work yields to its stream: the cancellation (which
    /// runs under the task's status lock) must not wait for the work's lock, which the yield
    /// holds while it resumes that same task (the runtime takes the task's status lock to
    /// enqueue it). Both orders at once hung the whole process (seen in the service's tests,
    /// 2026-12-04); here thousands of cancels race a stream of events.
    @Test func cancellingAWaiterWhileEventsFlowNeverDeadlocks() async throws {
        let pool = SharedWorkPool<Int>()
        for round in 0..<3000 {
            let subscription = pool.subscribe(key: round, priority: .normal, work: { (work: SharedWork<Int>) in
                var sent: Int64 = 0
                while !Task.isCancelled {
                    sent += 1
                    work.send(.progress(received: sent, expected: nil))
                    if sent % 64 == 0 { await Task.yield() }
                }
                throw CancellationError()
            })
            let waiter = Task {
                try await withTaskCancellationHandler {
                    try await subscription.value { _ in }
                } onCancel: {
                    subscription.cancelFromCancellationHandler()
                }
            }
            if round % 2 == 0 { await Task.yield() }
            waiter.cancel()
            await #expect(throws: WebImageError.cancelled) { try await waiter.value }
        }
    }
}
