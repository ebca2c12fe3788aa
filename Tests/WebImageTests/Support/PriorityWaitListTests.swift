import Testing
import WebImageTestSupport
@testable import WebImage

/// The wait list behind the downloader's queue and the decode queue: highest priority first,
/// arrival order within a priority (FIFO oldest first, LIFO newest first), and a priority change
/// keeps the arrival position.
@Suite("Priority wait list")
struct PriorityWaitListTests {
    private func drain(_ queue: inout PriorityWaitList, lifo: Bool) -> [Int] {
        var order: [Int] = []
        while let id = queue.popNext(lifo: lifo) { order.append(id) }
        return order
    }

    private func sample() -> PriorityWaitList {
        var queue = PriorityWaitList()
        queue.append(0, priority: .normal)
        queue.append(1, priority: .low)
        queue.append(2, priority: .normal)
        queue.append(3, priority: .high)
        queue.append(4, priority: .normal)
        return queue
    }

    @Test func fifoAndLifoWithinPriorities() {
        var fifo = sample()
        #expect(drain(&fifo, lifo: false) == [3, 0, 2, 4, 1])
        var lifo = sample()
        #expect(drain(&lifo, lifo: true) == [3, 4, 2, 0, 1])
        #expect(fifo.isEmpty && lifo.count == 0)
    }

    @Test func priorityChangeKeepsArrivalOrder() {
        var queue = sample()
        queue.setPriority(.high, of: 2)
        queue.setPriority(.high, of: 4)
        queue.setPriority(.veryLow, of: 0)
        #expect(drain(&queue, lifo: false) == [2, 3, 4, 1, 0])
    }

    @Test func removeTakesOnlyQueuedIDs() {
        var queue = sample()
        let removed = queue.remove(2)
        let removedAgain = queue.remove(2)
        #expect(removed && !removedAgain)
        #expect(!queue.contains(2) && queue.contains(4))
        #expect(queue.count == 4)
        #expect(drain(&queue, lifo: false) == [3, 0, 4, 1])
    }

    /// Against a plain model (sorted arrays), through thousands of random appends, removals,
    /// priority changes and pops, across the compaction of taken entries.
    @Test func matchesAModelThroughRandomOperations() {
        var random = SampleImages.SeededBytes(seed: 42)
        var queue = PriorityWaitList()
        var model: [Int: LoadPriority] = [:]
        var nextID = 0
        func expectedNext(lifo: Bool) -> Int? {
            guard let top = model.values.max() else { return nil }
            let ids = model.filter { $0.value == top }.keys
            return lifo ? ids.max() : ids.min()
        }
        for step in 0..<6_000 {
            switch Int.random(in: 0..<10, using: &random) {
            case 0..<5:
                let priority = LoadPriority.allCases.randomElement(using: &random)!
                queue.append(nextID, priority: priority)
                model[nextID] = priority
                nextID += 1
            case 5:
                if let id = model.keys.randomElement(using: &random) {
                    let removed = queue.remove(id)
                    #expect(removed)
                    model[id] = nil
                }
            case 6:
                if let id = model.keys.randomElement(using: &random) {
                    let priority = LoadPriority.allCases.randomElement(using: &random)!
                    queue.setPriority(priority, of: id)
                    model[id] = priority
                }
            default:
                let lifo = step % 7 == 0
                let expected = expectedNext(lifo: lifo)
                let popped = queue.popNext(lifo: lifo)
                #expect(popped == expected, "step \(step)")
                if let expected { model[expected] = nil }
            }
            #expect(queue.count == model.count)
        }
        while let expected = expectedNext(lifo: false) {
            let popped = queue.popNext(lifo: false)
            #expect(popped == expected)
            model[expected] = nil
        }
        #expect(queue.isEmpty)
    }

    @Test func drainingManyAcrossCompactionsKeepsOrder() {
        var queue = PriorityWaitList()
        for id in 0..<50_000 { queue.append(id, priority: .normal) }
        var previous = -1
        while let id = queue.popNext(lifo: false) {
            #expect(id == previous + 1)
            previous = id
        }
        #expect(previous == 49_999)
    }
}
