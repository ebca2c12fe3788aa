import Testing
@testable import WebImage

/// The downloader's queue on its own: highest priority first, arrival order within a priority
/// (FIFO oldest first, LIFO newest first), and a priority change keeps the arrival position.
@Suite("Download queue")
struct DownloadQueueTests {
    private func drain(_ queue: inout DownloadQueue, lifo: Bool) -> [Int] {
        var order: [Int] = []
        while let id = queue.popNext(lifo: lifo) { order.append(id) }
        return order
    }

    private func sample() -> DownloadQueue {
        var queue = DownloadQueue()
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
}
