/// Queued downloads, one list per priority, each in arrival order.
///
/// Download ids grow with arrival, so every list is sorted by id: a priority change files the
/// download at its arrival position in the new list, and picking the next download costs a look
/// at five lists instead of a scan of the whole queue (which made a burst of a thousand queued
/// downloads quadratic).
struct DownloadQueue {
    private var lists: [[Int]] = Array(repeating: [], count: LoadPriority.allCases.count)
    private var priorityOf: [Int: LoadPriority] = [:]

    /// How many downloads wait.
    var count: Int { priorityOf.count }

    /// Whether none waits.
    var isEmpty: Bool { priorityOf.isEmpty }

    /// Whether `id` waits here.
    func contains(_ id: Int) -> Bool { priorityOf[id] != nil }

    /// Queues `id`, which must be newer than every id queued before.
    mutating func append(_ id: Int, priority: LoadPriority) {
        priorityOf[id] = priority
        lists[Self.slot(priority)].append(id)
    }

    /// Takes `id` out of the queue; `false` when it was not queued.
    @discardableResult
    mutating func remove(_ id: Int) -> Bool {
        guard let priority = priorityOf.removeValue(forKey: id) else { return false }
        let slot = Self.slot(priority)
        let index = Self.position(of: id, in: lists[slot])
        if index < lists[slot].count && lists[slot][index] == id { lists[slot].remove(at: index) }
        return true
    }

    /// Moves a queued `id` to `priority`, keeping its arrival order.
    mutating func setPriority(_ priority: LoadPriority, of id: Int) {
        guard let current = priorityOf[id], current != priority else { return }
        remove(id)
        priorityOf[id] = priority
        let slot = Self.slot(priority)
        lists[slot].insert(id, at: Self.position(of: id, in: lists[slot]))
    }

    /// Takes the next download: the highest priority first, then the oldest (FIFO) or the newest (LIFO).
    mutating func popNext(lifo: Bool) -> Int? {
        for slot in lists.indices.reversed() where !lists[slot].isEmpty {
            let id = lifo ? lists[slot].removeLast() : lists[slot].removeFirst()
            priorityOf[id] = nil
            return id
        }
        return nil
    }

    private static func slot(_ priority: LoadPriority) -> Int {
        priority.rawValue - LoadPriority.veryLow.rawValue
    }

    /// Where `id` is, or would go, in a list sorted by id.
    private static func position(of id: Int, in list: [Int]) -> Int {
        var low = 0, high = list.count
        while low < high {
            let middle = (low + high) / 2
            if list[middle] < id { low = middle + 1 } else { high = middle }
        }
        return low
    }
}
