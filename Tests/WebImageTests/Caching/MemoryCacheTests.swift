import Foundation
import Testing
@testable import WebImage

@Suite struct MemoryCacheTests {
    @Test func evictsLeastRecentlyUsedByCount() {
        let cache = MemoryCache<String, Int>(countLimit: 3)
        for (index, key) in ["a", "b", "c"].enumerated() { cache.setValue(index, forKey: key) }
        #expect(cache.value(forKey: "a") == 0)           // a becomes most recent
        cache.setValue(3, forKey: "d")                    // evicts b, the least recent
        #expect(cache.value(forKey: "b") == nil)
        #expect(cache.keysByRecency == ["d", "a", "c"])
        #expect(cache.count == 3)
    }

    @Test func evictsByCostAndRefusesOversizedValues() {
        let cache = MemoryCache<String, String>(costLimit: 100)
        cache.setValue("x", forKey: "x", cost: 60)
        cache.setValue("y", forKey: "y", cost: 30)
        cache.setValue("z", forKey: "z", cost: 30)        // 120 > 100: x goes
        #expect(!cache.contains("x") && cache.totalCost == 60)
        cache.setValue("huge", forKey: "huge", cost: 101)
        #expect(!cache.contains("huge") && cache.totalCost == 60)
        cache.setValue("y2", forKey: "y", cost: 10)       // replacing updates the cost
        #expect(cache.totalCost == 40 && cache.value(forKey: "y") == "y2")
        cache.trim(toCost: 10)
        #expect(cache.keysByRecency == ["y"])
        cache.costLimit = 5
        #expect(cache.count == 0)
    }

    @Test func timeToLiveUsesTheInjectedClock() {
        let start = ContinuousClock.now
        let offset = Locked<Duration>(.zero)
        let cache = MemoryCache<Int, Int>(timeToLive: .seconds(10), clock: { start + offset.withLock { $0 } })
        cache.setValue(1, forKey: 1)
        offset.withLock { $0 = .seconds(5) }
        cache.setValue(2, forKey: 2)
        #expect(cache.value(forKey: 1) == 1)
        offset.withLock { $0 = .seconds(11) }
        #expect(cache.value(forKey: 1) == nil && !cache.contains(1))
        #expect(cache.value(forKey: 2) == 2)
        offset.withLock { $0 = .seconds(16) }
        cache.removeExpired()
        #expect(cache.count == 0)
    }

    @Test func slotsAreReusedAndRemoveAllEmpties() {
        let cache = MemoryCache<Int, Int>(countLimit: 10)
        for round in 0..<50 { for key in 0..<20 { cache.setValue(key + round, forKey: key, cost: 1) } }
        #expect(cache.count == 10 && cache.totalCost == 10)
        #expect(cache.removeValue(forKey: 19) == 19 + 49)
        cache.removeAll()
        #expect(cache.count == 0 && cache.totalCost == 0 && cache.keysByRecency.isEmpty)
    }

    @Test func concurrentReadersAndWritersKeepInvariants() async {
        let cache = MemoryCache<Int, [Int]>(costLimit: 5_000, countLimit: 300)
        await withTaskGroup(of: Void.self) { group in
            for worker in 0..<8 {
                group.addTask {
                    for step in 0..<5_000 {
                        let key = (step * 7 + worker) % 500
                        if step % 3 == 0 {
                            cache.setValue([key], forKey: key, cost: key % 40)
                        } else if let value = cache.value(forKey: key) {
                            #expect(value == [key])
                        }
                        if step % 500 == 0 { cache.removeValue(forKey: key) }
                    }
                }
            }
        }
        #expect(cache.count <= 300 && cache.totalCost <= 5_000)
        #expect(cache.keysByRecency.count == cache.count)
    }
}
