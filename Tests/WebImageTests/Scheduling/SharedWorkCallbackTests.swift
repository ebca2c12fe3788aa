import Foundation
import Testing
@testable import WebImage

/// The callback path of ``SharedWork`` (the downloader's callers): waiters that join with
/// callbacks rather than a stream, with no task of the work's own, follow the same rules.
@Suite("Shared work, callback waiters", .timeLimit(.minutes(1)))
struct SharedWorkCallbackTests {
    /// Records what each named waiter heard, in order.
    final class Log: Sendable {
        private let lines = Locked<[String]>([])
        var all: [String] { lines.withLock { $0 } }
        func of(_ name: String) -> [String] { all.filter { $0.hasPrefix(name + ":") }.map { String($0.dropFirst(name.count + 1)) } }

        func sink(_ name: String, ordered: Bool = true, progress: Bool = true,
                  accepts: (@Sendable (ImageLoadResponse) -> Bool)? = nil) -> SharedWorkSink<Int> {
            SharedWorkSink(wantsProgress: progress, ordered: ordered, accepts: accepts,
                           receive: { [self] event in append(name, Self.describe(event)) },
                           finish: { [self] result in
                               switch result {
                               case .success(let value): append(name, "value \(value)")
                               case .failure(let error): append(name, "error \(error)")
                               }
                           })
        }

        private func append(_ name: String, _ line: String) { lines.withLock { $0.append("\(name):\(line)") } }

        private static func describe(_ event: SharedWorkEvent<Int>) -> String {
            switch event {
            case .response(let response): "response \(response.statusCode ?? 0)"
            case .progress(let received, _): "progress \(received)"
            case .partialData(let data): "partial \(data.count)"
            case .partialImage: "partial image"
            case .value(let value): "value event \(value)"
            }
        }
    }

    static let response = ImageLoadResponse(url: URL(string: "http://example.invalid/a.png")!, statusCode: 200)

    @Test func callbackWaitersHearEveryEventTheyWantAndTheValueOnce() throws {
        let log = Log()
        let work = SharedWork<Int>(priority: .normal)
        _ = try #require(work.join(priority: .normal, sink: log.sink("a")))
        _ = try #require(work.join(priority: .normal, sink: log.sink("b", ordered: false, progress: false)))
        work.send(response: Self.response, rejection: .cancelled)
        work.send(.progress(received: 4, expected: 8))
        work.send(.partialData(Data(count: 4)))
        work.finish(.success(5))
        work.finish(.success(6))
        #expect(log.of("a") == ["response 200", "progress 4", "partial 4", "value 5"])
        #expect(log.of("b") == ["partial 4", "value 5"], "no response or progress to a waiter that did not ask")
        #expect(work.waiterCount == 0)
        #expect(work.join(priority: .normal, sink: log.sink("c")) == nil, "the work has ended")
    }

    @Test func anOrderedLateJoinerIsReplayedTheResponseThenTheProgressAnUnorderedOneNothing() throws {
        let log = Log()
        let work = SharedWork<Int>(priority: .normal)
        _ = try #require(work.join(priority: .normal, sink: log.sink("a")))
        work.send(.progress(received: 1, expected: nil))
        work.send(response: Self.response, rejection: .cancelled)
        work.send(.progress(received: 3, expected: nil))
        _ = try #require(work.join(priority: .normal, sink: log.sink("late")))
        _ = try #require(work.join(priority: .normal, sink: log.sink("handler", ordered: false)))
        #expect(log.of("late") == ["response 200", "progress 3"])
        #expect(log.of("handler").isEmpty, "a replay outside the lock could race the next event")
        work.send(.progress(received: 5, expected: nil))
        #expect(log.of("late") == ["response 200", "progress 3", "progress 5"])
        #expect(log.of("handler") == ["progress 5"])
    }

    @Test func progressNoWaiterAskedForIsDroppedWhereItArises() throws {
        let log = Log()
        let work = SharedWork<Int>(priority: .normal)
        _ = try #require(work.join(priority: .normal, sink: log.sink("quiet", progress: false)))
        #expect(!work.wantsProgress)
        work.send(.progress(received: 1, expected: nil))
        _ = try #require(work.join(priority: .normal, sink: log.sink("late")))
        #expect(work.wantsProgress)
        #expect(log.of("late").isEmpty, "progress sent while no one wanted it is not kept")
        work.send(.progress(received: 2, expected: nil))
        #expect(log.of("late") == ["progress 2"])
        #expect(log.of("quiet").isEmpty)
    }

    @Test func aWaiterThatRefusesTheResponseLeavesWithTheRejection() throws {
        let log = Log()
        let work = SharedWork<Int>(priority: .normal)
        _ = try #require(work.join(priority: .normal, sink: log.sink("picky", accepts: { _ in false })))
        _ = try #require(work.join(priority: .normal, sink: log.sink("easy", accepts: { _ in true })))
        _ = try #require(work.join(priority: .normal, sink: log.sink("plain")))
        work.send(response: Self.response, rejection: .rejected("no"))
        #expect(log.of("picky") == ["error \(WebImageError.rejected("no"))"])
        #expect(log.of("easy") == ["response 200"])
        #expect(log.of("plain") == ["response 200"])
        #expect(work.waiterCount == 2)
    }

    @Test func workIsStoppedWhenTheLastCallbackWaiterLeavesAndNotBefore() throws {
        let log = Log()
        let stops = Locked(0)
        let ended = Locked(0)
        let work = SharedWork<Int>(priority: .normal) { _ in ended.withLock { $0 += 1 } }
        work.onStop { stops.withLock { $0 += 1 } }
        let a = try #require(work.join(priority: .low, sink: log.sink("a")))
        let b = try #require(work.join(priority: .high, sink: log.sink("b")))
        b.cancel(.rejected("gone"))
        #expect(log.of("b") == ["error \(WebImageError.rejected("gone"))"])
        #expect(stops.withLock { $0 } == 0, "one waiter is left")
        #expect(work.priority == .low, "the work follows the waiters still there")
        a.cancel()
        #expect(log.of("a") == ["error \(WebImageError.cancelled)"])
        #expect(stops.withLock { $0 } == 1 && ended.withLock { $0 } == 1)
        a.cancel()
        work.finish(.success(1))
        #expect(stops.withLock { $0 } == 1 && ended.withLock { $0 } == 1, "leaving twice, or ending after, does nothing")
        // Work that registers how to stop after its last waiter left is stopped at once.
        work.onStop { stops.withLock { $0 += 1 } }
        #expect(stops.withLock { $0 } == 2)
    }

    @Test func thePoolCoalescesCallbackWaitersByKeyAndStartsOnce() throws {
        let log = Log()
        let pool = SharedWorkPool<String>()
        let starts = Locked(0)
        let first = pool.join(key: "k", priority: .low, sink: log.sink("a")) { _ in starts.withLock { $0 += 1 } }
        let second = pool.join(key: "k", priority: .high, sink: log.sink("b")) { _ in starts.withLock { $0 += 1 } }
        #expect(first.isNew && !second.isNew)
        #expect(first.waiter.work === second.waiter.work)
        #expect(starts.withLock { $0 } == 1 && pool.count == 1)
        #expect(first.waiter.work.priority == .high)
        first.waiter.work.finish(.success(9))
        #expect(log.all.sorted() == ["a:value 9", "b:value 9"])
        #expect(pool.count == 0)
    }
}
