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
}
