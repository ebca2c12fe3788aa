#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A thread-safe, cost- and count-limited memory cache with least-recently-used eviction.
///
/// Every operation is O(1): entries live in arrays linked by index (no node objects to allocate),
/// a dictionary maps keys to slots, and one lock guards it all for the few instructions each
/// operation needs. Values evicted by an operation are released after the lock is dropped.
public final class MemoryCache<Key: Hashable & Sendable, Value: Sendable>: Sendable {
    @usableFromInline
    struct Slot {
        @usableFromInline var key: Key?
        @usableFromInline var value: Value?
        @usableFromInline var cost: Int
        @usableFromInline var stored: ContinuousClock.Instant
        @usableFromInline var newer: Int   // towards the most recently used end; -1 at the end
        @usableFromInline var older: Int   // towards the least recently used end; -1 at the end

        @usableFromInline
        init(key: Key?, value: Value?, cost: Int, stored: ContinuousClock.Instant, newer: Int, older: Int) {
            self.key = key
            self.value = value
            self.cost = cost
            self.stored = stored
            self.newer = newer
            self.older = older
        }
    }

    @usableFromInline
    struct Storage {
        @usableFromInline var indices: [Key: Int] = [:]
        @usableFromInline var slots: [Slot] = []
        @usableFromInline var free: [Int] = []
        @usableFromInline var newest = -1
        @usableFromInline var oldest = -1
        @usableFromInline var totalCost = 0
        @usableFromInline var costLimit: Int
        @usableFromInline var countLimit: Int
        @usableFromInline var timeToLive: Duration?

        @usableFromInline
        init(costLimit: Int, countLimit: Int, timeToLive: Duration?) {
            self.costLimit = costLimit
            self.countLimit = countLimit
            self.timeToLive = timeToLive
        }

        @inlinable
        mutating func unlink(_ index: Int) {
            let newer = slots[index].newer, older = slots[index].older
            if newer >= 0 { slots[newer].older = older } else { newest = older }
            if older >= 0 { slots[older].newer = newer } else { oldest = newer }
        }

        @inlinable
        mutating func linkAsNewest(_ index: Int) {
            slots[index].newer = -1
            slots[index].older = newest
            if newest >= 0 { slots[newest].newer = index }
            newest = index
            if oldest < 0 { oldest = index }
        }

        /// Removes the slot and hands its value back, so the caller can release it unlocked.
        @inlinable
        mutating func remove(_ index: Int) -> Value? {
            unlink(index)
            let value = slots[index].value
            if let key = slots[index].key { indices[key] = nil }
            totalCost -= slots[index].cost
            slots[index].key = nil
            slots[index].value = nil
            free.append(index)
            return value
        }

        @inlinable
        mutating func evict(toCost cost: Int, count: Int) -> [Value] {
            var evicted: [Value] = []
            while oldest >= 0, totalCost > cost || indices.count > count {
                if let value = remove(oldest) { evicted.append(value) }
            }
            return evicted
        }
    }

    /// Guards every entry, the LRU links and the limits.
    @usableFromInline let storage: Locked<Storage>
    @usableFromInline let clock: @Sendable () -> ContinuousClock.Instant
    @usableFromInline let hasTimeToLive: Bool
    /// The store time of entries in caches without a time-to-live (never compared).
    @usableFromInline let createdAt = ContinuousClock.now

    /// The default cost limit: a fifth of the memory the process may use, at most 1 GiB. Decoded
    /// images are large (a 12 MP photo is 48 MB), so a fixed count means nothing; a share of the
    /// memory does, and the cap keeps a big server from hoarding gigabytes of pixels nobody asked
    /// for twice. The memory is the physical memory or, when smaller, the limit of the process's
    /// control group: in a container limited to 512 MiB on a 64 GiB host, about 100 MiB, not 1 GiB.
    public static var defaultCostLimit: Int {
        defaultCostLimit(memory: .current)
    }

    /// ``defaultCostLimit`` for the control group `memory` (tests pass a fake cgroup tree).
    public static func defaultCostLimit(memory: CgroupMemory) -> Int {
        let physical = ProcessInfo.processInfo.physicalMemory
        let usable = memory.limit.map { min(physical, UInt64($0)) } ?? physical
        return Int(min(usable / 5, 1 << 30))
    }

    /// Creates a cache.
    /// - Parameters:
    ///   - costLimit: the most total cost kept (for images: decoded bytes).
    ///   - countLimit: the most entries kept.
    ///   - timeToLive: entries older than this are misses and are dropped; `nil` keeps them.
    ///   - clock: the time source (tests pass their own).
    public init(costLimit: Int = MemoryCache.defaultCostLimit, countLimit: Int = .max, timeToLive: Duration? = nil,
                clock: @escaping @Sendable () -> ContinuousClock.Instant = { ContinuousClock.now }) {
        storage = Locked(Storage(costLimit: max(0, costLimit), countLimit: max(0, countLimit), timeToLive: timeToLive))
        self.clock = clock
        self.hasTimeToLive = timeToLive != nil
    }

    /// The value for `key`, marking it most recently used; `nil` if absent or expired.
    @inlinable
    public func value(forKey key: Key) -> Value? {
        // Reading the clock costs as much as the lookup: only caches with a time-to-live do.
        let now = hasTimeToLive ? clock() : nil
        var expired: Value?
        let found: Value? = storage.withLock { storage in
            guard let index = storage.indices[key] else { return nil }
            if let now, let ttl = storage.timeToLive, now - storage.slots[index].stored > ttl {
                expired = storage.remove(index)
                return nil
            }
            if storage.newest != index {
                storage.unlink(index)
                storage.linkAsNewest(index)
            }
            return storage.slots[index].value
        }
        _ = expired
        return found
    }

    /// Stores `value` as the most recently used entry, then evicts the least recently used ones
    /// until the limits hold. A value costing more than the whole limit is not kept.
    @inlinable
    public func setValue(_ value: Value, forKey key: Key, cost: Int = 0) {
        let now = hasTimeToLive ? clock() : createdAt
        let evicted: [Value] = storage.withLock { storage in
            var evicted: [Value] = []
            if let index = storage.indices[key], let old = storage.remove(index) { evicted.append(old) }
            guard cost <= storage.costLimit, storage.countLimit > 0 else { return evicted }
            let slot = Slot(key: key, value: value, cost: max(0, cost), stored: now, newer: -1, older: -1)
            let index: Int
            if let reused = storage.free.popLast() {
                storage.slots[reused] = slot
                index = reused
            } else {
                storage.slots.append(slot)
                index = storage.slots.count - 1
            }
            storage.indices[key] = index
            storage.totalCost += slot.cost
            storage.linkAsNewest(index)
            evicted += storage.evict(toCost: storage.costLimit, count: storage.countLimit)
            return evicted
        }
        _ = evicted
    }

    /// Removes and returns the value for `key`.
    @discardableResult
    public func removeValue(forKey key: Key) -> Value? {
        storage.withLock { storage in storage.indices[key].flatMap { storage.remove($0) } }
    }

    /// Empties the cache.
    public func removeAll() {
        let old = storage.withLock { storage -> Storage in
            let old = storage
            storage = Storage(costLimit: storage.costLimit, countLimit: storage.countLimit, timeToLive: storage.timeToLive)
            return old
        }
        _ = old
    }

    /// Evicts least recently used entries until the total cost is at most `cost`.
    public func trim(toCost cost: Int) {
        let evicted = storage.withLock { $0.evict(toCost: max(0, cost), count: .max) }
        _ = evicted
    }

    /// Evicts least recently used entries until at most `count` remain.
    public func trim(toCount count: Int) {
        let evicted = storage.withLock { $0.evict(toCost: .max, count: max(0, count)) }
        _ = evicted
    }

    /// Drops every entry older than the time-to-live.
    public func removeExpired() {
        let now = clock()
        let expired: [Value] = storage.withLock { storage in
            guard let ttl = storage.timeToLive else { return [] }
            var expired: [Value] = []
            var index = storage.oldest
            while index >= 0 {
                let newer = storage.slots[index].newer
                if now - storage.slots[index].stored > ttl, let value = storage.remove(index) { expired.append(value) }
                index = newer
            }
            return expired
        }
        _ = expired
    }

    /// The total cost of the entries.
    public var totalCost: Int { storage.withLock { $0.totalCost } }
    /// The number of entries.
    public var count: Int { storage.withLock { $0.indices.count } }
    /// Whether `key` has an entry (expired or not), without touching its recency.
    public func contains(_ key: Key) -> Bool { storage.withLock { $0.indices[key] != nil } }

    /// The cost limit; lowering it evicts at once.
    public var costLimit: Int {
        get { storage.withLock { $0.costLimit } }
        set { changeLimits { $0.costLimit = max(0, newValue) } }
    }

    /// The count limit; lowering it evicts at once.
    public var countLimit: Int {
        get { storage.withLock { $0.countLimit } }
        set { changeLimits { $0.countLimit = max(0, newValue) } }
    }

    /// Applies a limit change, then evicts what no longer fits (released after the lock).
    private func changeLimits(_ change: (inout Storage) -> Void) {
        let evicted = storage.withLock { storage -> [Value] in
            change(&storage)
            return storage.evict(toCost: storage.costLimit, count: storage.countLimit)
        }
        _ = evicted
    }

    /// Keys from most to least recently used (for inspection and tests; O(n)).
    public var keysByRecency: [Key] {
        storage.withLock { storage in
            var keys: [Key] = []
            var index = storage.newest
            while index >= 0 {
                if let key = storage.slots[index].key { keys.append(key) }
                index = storage.slots[index].older
            }
            return keys
        }
    }
}
