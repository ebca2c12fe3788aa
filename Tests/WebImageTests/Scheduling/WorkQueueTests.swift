import Dispatch
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
