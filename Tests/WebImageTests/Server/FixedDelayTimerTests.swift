import Foundation
import Testing
import WebImage
@testable import WebImageServer

/// `--render-timeout`'s one list of deadlines.
@Suite("fixed-delay timer", .timeLimit(.minutes(1)))
struct FixedDelayTimerTests {
    /// Each action's run, in order, as the timer's task reports them.
    private final class Runs: Sendable {
        let stream: AsyncStream<String>
        private let continuation: AsyncStream<String>.Continuation
        init() { (stream, continuation) = AsyncStream.makeStream() }
        func action(_ name: String) -> @Sendable () -> Void { { [continuation] in continuation.yield(name) } }
        func next(_ count: Int) async -> [String] {
            var names: [String] = []
            for await name in stream {
                names.append(name)
                if names.count == count { break }
            }
            return names
        }
    }

    @Test func actionsRunInTheOrderAddedAfterTheDelayAndRemovedOnesNever() async {
        let timer = FixedDelayTimer(delay: .milliseconds(50))
        let runs = Runs()
        let start = ContinuousClock.now
        _ = timer.add(runs.action("a"))
        let removed = timer.add(runs.action("b"))
        _ = timer.add(runs.action("c"))
        timer.remove(removed)
        #expect(await runs.next(2) == ["a", "c"])
        #expect(ContinuousClock.now - start >= .milliseconds(50))
        // "b" never comes: the next run is one added after the list emptied (a new sweeper).
        _ = timer.add(runs.action("d"))
        #expect(await runs.next(1) == ["d"])
    }

    @Test func aRemovedHeadDoesNotHoldBackALaterDeadline() async {
        let timer = FixedDelayTimer(delay: .milliseconds(30))
        let runs = Runs()
        let first = timer.add(runs.action("first"))
        timer.remove(first)
        _ = timer.add(runs.action("second"))
        #expect(await runs.next(1) == ["second"])
    }

    /// A live entry at the head (a render stuck for the whole delay) does not let the removed
    /// ones behind it pile up: the list stays within a bound of the live count.
    @Test func removedEntriesBehindALiveHeadDoNotPileUp() async {
        let timer = FixedDelayTimer(delay: .seconds(3600))
        let stuck = timer.add {}
        for _ in 0..<100_000 { timer.remove(timer.add {}) }
        #expect(timer.storedCount <= 68, "\(timer.storedCount) stored for 1 live entry")
        timer.remove(stuck)
    }

    @Test func manyEntriesAddedAndRemovedLeaveOnlyTheLiveOnes() async {
        let timer = FixedDelayTimer(delay: .milliseconds(20))
        let runs = Runs()
        for index in 0..<500 {
            let entry = timer.add(runs.action("\(index)"))
            if index % 100 != 99 { timer.remove(entry) }
        }
        #expect(await runs.next(5) == ["99", "199", "299", "399", "499"])
    }
}
