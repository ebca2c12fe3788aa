/// Waiting work (downloads, decodes) by id: one list per priority, each sorted by id.
///
/// Ids grow with arrival, so a list sorted by id is in arrival order: a priority change files the
/// id at its arrival position in the new list, and picking the next id costs a look at five lists
/// instead of a scan of everything waiting. Taking the oldest moves a head index rather than
/// shifting the list, so draining n waiters is O(n), not O(n²) (which made a burst of thousands
/// of queued downloads or prefetch decodes quadratic).
struct PriorityWaitList {
    private var lists: [[Int]] = Array(repeating: [], count: LoadPriority.allCases.count)
    /// Per list, the index of its first live entry (entries before it were taken).
    private var heads: [Int] = Array(repeating: 0, count: LoadPriority.allCases.count)
    private var priorityOf: [Int: LoadPriority] = [:]

    /// How many ids wait.
    var count: Int { priorityOf.count }

    /// Whether none waits.
    var isEmpty: Bool { priorityOf.isEmpty }

    /// Whether `id` waits here.
    func contains(_ id: Int) -> Bool { priorityOf[id] != nil }

    /// Files `id` (not already waiting) at `priority`, in id order.
    mutating func append(_ id: Int, priority: LoadPriority) {
        priorityOf[id] = priority
        insert(id, slot: Self.slot(priority))
    }

    /// Takes `id` out; `false` when it was not waiting.
    @discardableResult
    mutating func remove(_ id: Int) -> Bool {
        guard let priority = priorityOf.removeValue(forKey: id) else { return false }
        let slot = Self.slot(priority)
        let index = position(of: id, slot: slot)
        guard index < lists[slot].count, lists[slot][index] == id else { return true }
        if index == heads[slot] {
            heads[slot] += 1
            compact(slot)
        } else {
            lists[slot].remove(at: index)
        }
        return true
    }

    /// Moves a waiting `id` to `priority`, keeping its arrival order.
    mutating func setPriority(_ priority: LoadPriority, of id: Int) {
        guard let current = priorityOf[id], current != priority else { return }
        remove(id)
        append(id, priority: priority)
    }

    /// Takes the next id: the highest priority first, then the oldest (FIFO) or the newest (LIFO).
    mutating func popNext(lifo: Bool) -> Int? {
        for slot in lists.indices.reversed() where heads[slot] < lists[slot].count {
            let id: Int
            if lifo {
                id = lists[slot].removeLast()
            } else {
                id = lists[slot][heads[slot]]
                heads[slot] += 1
            }
            compact(slot)
            priorityOf[id] = nil
            return id
        }
        return nil
    }

    private mutating func insert(_ id: Int, slot: Int) {
        if lists[slot].last.map({ $0 < id }) ?? true {
            lists[slot].append(id)
        } else {
            lists[slot].insert(id, at: position(of: id, slot: slot))
        }
    }

    /// Drops taken entries once they are half the list (or all of it), so memory stays bounded
    /// and the cost stays amortized O(1) a pop.
    private mutating func compact(_ slot: Int) {
        let head = heads[slot]
        if head == lists[slot].count {
            lists[slot].removeAll(keepingCapacity: true)
            heads[slot] = 0
        } else if head >= 64, head * 2 >= lists[slot].count {
            lists[slot].removeFirst(head)
            heads[slot] = 0
        }
    }

    private static func slot(_ priority: LoadPriority) -> Int {
        priority.rawValue - LoadPriority.veryLow.rawValue
    }

    /// Where `id` is, or would go, among the live entries of list `slot`.
    private func position(of id: Int, slot: Int) -> Int {
        let list = lists[slot]
        var low = heads[slot], high = list.count
        while low < high {
            let middle = (low + high) / 2
            if list[middle] < id { low = middle + 1 } else { high = middle }
        }
        return low
    }
}
