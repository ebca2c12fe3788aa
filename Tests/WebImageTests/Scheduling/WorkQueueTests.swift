import Dispatch
import Foundation
import Testing
@testable import WebImage

/// The rules of the bounded queues every piece of CPU work and blocking I/O goes through.
@Suite("Work queues", .timeLimit(.minutes(1)))
struct WorkQueueTests {
    @Test func runsTheHighestPriorityFirstWithinItsWidth() async throws {
        let queue = WorkQueue(width: 1)
        let probe = ConcurrencyProbe()
        let order = Locked<[String]>([])
        let record: @Sendable (String) -> Void = { name in order.withLock { $0.append(name) } }
        async let first: Void = queue.perform(ticket: queue.makeTicket(), priority: .normal) { probe.measure { record("first") } }
        await waitUntil("the first job holds the slot") { probe.running == 1 }
        async let low: Void = queue.perform(ticket: queue.makeTicket(), priority: .low) { record("low") }
        await waitUntil("the low job waits") { queue.waitingCount == 1 }
        async let high: Void = queue.perform(ticket: queue.makeTicket(), priority: .high) { record("high") }
        await waitUntil("both wait") { queue.waitingCount == 2 }
        probe.open()
        _ = try await (first, low, high)
        #expect(order.withLock { $0 } == ["first", "high", "low"])
        #expect(probe.highest == 1)
    }

    @Test func aQueueWithinABudgetTakesASlotOfBoth() async throws {
        let budget = WorkQueue(width: 1)
        let queue = WorkQueue(width: 3, within: budget)
        let probe = ConcurrencyProbe()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<3 {
                group.addTask { try await queue.perform(ticket: queue.makeTicket(), priority: .normal) { probe.measure {} } }
            }
            await waitUntil("one runs, two wait for the budget") { probe.running == 1 && budget.waitingCount == 2 }
            probe.open()
            try await group.waitForAll()
        }
        #expect(probe.highest == 1)
    }

    @Test func cancelledWaitersLeaveButIgnoringCancellationWaitsForItsSlot() async throws {
        let queue = WorkQueue(width: 1)
        let probe = ConcurrencyProbe()
        async let holder: Void = queue.perform(ticket: queue.makeTicket(), priority: .normal) { probe.measure {} }
        await waitUntil("the slot is held") { probe.running == 1 }
        let cancellable = Task { try await queue.perform(ticket: queue.makeTicket(), priority: .normal) { 1 } }
        let patient = Task { await queue.performIgnoringCancellation(priority: .normal) { 2 } }
        await waitUntil("both wait") { queue.waitingCount == 2 }
        cancellable.cancel()
        patient.cancel()
        await #expect(throws: WebImageError.cancelled) { try await cancellable.value }
        #expect(queue.waitingCount == 1, "the cancelled waiter left the queue")
        probe.open()
        try await holder
        #expect(await patient.value == 2)
        #expect(queue.runningCount == 0)
    }

    /// Work no caller waits for (a background write): `submit` returns at once, the work takes
    /// a slot like any other, and the thread that ends one piece runs the next.
    @Test func submittedWorkRunsInItsSlotsInOrderWithoutACaller() async throws {
        let queue = WorkQueue(width: 1)
        let probe = ConcurrencyProbe()
        let runs = Locked<[(name: String, thread: pthread_t)]>([])
        let record: @Sendable (String) -> Void = { name in runs.withLock { $0.append((name, pthread_self())) } }
        queue.submit(priority: .low) { probe.measure { record("first") } }
        await waitUntil("the first holds the slot") { probe.running == 1 }
        queue.submit(priority: .low) { record("second") }
        queue.submit(priority: .low) { record("third") }
        #expect(queue.waitingCount == 2, "submit returned while its work waits")
        probe.open()
        await waitUntil("all three ran") { runs.withLock { $0.count } == 3 && queue.runningCount == 0 }
        let done = runs.withLock { $0 }
        #expect(done.map(\.name) == ["first", "second", "third"])
        #expect(done.allSatisfy { pthread_equal($0.thread, done[0].thread) != 0 }, "one thread ran the three")
        #expect(probe.highest == 1)
    }

    /// `waitForAll` returns once every background write, blocking or async, has ended.
    @Test func backgroundWritesAreAllWaitedFor() async throws {
        let writes = BackgroundWrites()
        let probe = ConcurrencyProbe()
        let ended = Locked(0)
        for _ in 0..<3 { writes.runBlocking { probe.measure { ended.withLock { $0 += 1 } } } }
        writes.run { ended.withLock { $0 += 1 } }
        await waitUntil("the blocking writes run") { probe.running == 3 }
        let waiter = Task { await writes.waitForAll(); return ended.withLock { $0 } }
        probe.open()
        #expect(await waiter.value == 4)
        await writes.waitForAll()
    }

    /// A freed slot goes straight to the next waiting job, run by the thread that freed it: the
    /// job does not wait for its caller's executor to run first (issue #30: each such round trip
    /// was two more thread wake-ups per render). The caller here prefers an executor that holds
    /// every job while it is shut: the waiting work must still run.
    @Test func aFreedSlotRunsTheNextJobWithoutItsCallerRunningFirst() async throws {
        let queue = WorkQueue(width: 1)
        let probe = ConcurrencyProbe()
        let gate = GatedExecutor()
        let ran = Locked(false)
        async let holder: Void = queue.perform(ticket: queue.makeTicket(), priority: .normal) { probe.measure {} }
        await waitUntil("the slot is held") { probe.running == 1 }
        let waiter = Task(executorPreference: gate) {
            try await queue.perform(ticket: queue.makeTicket(), priority: .normal) { ran.withLock { $0 = true } }
        }
        await waitUntil("the second job waits") { queue.waitingCount == 1 }
        gate.shut()
        probe.open()
        await waitUntil("the waiting job ran while its caller's executor was shut") { ran.withLock { $0 } }
        gate.open()
        try await holder
        try await waiter.value
        #expect(queue.runningCount == 0)
    }
}

/// A task executor that holds the jobs enqueued on it while shut, and runs them on Dispatch
/// threads while open (its state behind one lock).
final class GatedExecutor: TaskExecutor {
    private let state = Locked((isOpen: true, held: [UnownedJob]()))

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let runNow = state.withLock { state -> Bool in
            if state.isOpen { return true }
            state.held.append(job)
            return false
        }
        if runNow { run(job) }
    }

    /// Holds the jobs enqueued from now on.
    func shut() { state.withLock { $0.isOpen = false } }

    /// Runs the held jobs and every later one.
    func open() {
        let held = state.withLock { state -> [UnownedJob] in
            state.isOpen = true
            defer { state.held = [] }
            return state.held
        }
        held.forEach(run)
    }

    private func run(_ job: UnownedJob) {
        let executor = asUnownedTaskExecutor()
        DispatchQueue.global().async { job.runSynchronously(on: executor) }
    }
}
