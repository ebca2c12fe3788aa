import Testing
@testable import WebImage

/// The downloader starts a download's task after releasing its lock, so a cancel can arrive
/// before the task exists; the slot must still cancel it.
@Suite struct DownloadTaskSlotTests {
    @Test func cancelBeforeStartCancelsTheTaskWhenItStarts() async {
        let slot = DownloadTaskSlot()
        slot.cancel()
        // The task looks only once `start` has returned: the task may begin before `start`
        // gets to cancel it.
        let started = AsyncStream<Void>.makeStream()
        let result = AsyncStream<Bool>.makeStream()
        slot.start {
            var iterator = started.stream.makeAsyncIterator()
            _ = await iterator.next()
            result.continuation.yield(Task.isCancelled)
        }
        started.continuation.yield()
        var resultIterator = result.stream.makeAsyncIterator()
        #expect(await resultIterator.next() == true)
    }

    @Test func cancelAfterStartCancelsTheRunningTask() async {
        let slot = DownloadTaskSlot()
        let started = AsyncStream<Void>.makeStream()
        let result = AsyncStream<Bool>.makeStream()
        slot.start {
            started.continuation.yield()
            // Spins on the cooperative pool until cancelled; the test cancels it.
            while !Task.isCancelled { await Task.yield() }
            result.continuation.yield(true)
        }
        var startedIterator = started.stream.makeAsyncIterator()
        _ = await startedIterator.next()
        slot.cancel()
        var resultIterator = result.stream.makeAsyncIterator()
        #expect(await resultIterator.next() == true)
    }

    @Test func startWithoutCancelRunsUncancelled() async {
        let slot = DownloadTaskSlot()
        let cancelled = await withCheckedContinuation { (seen: CheckedContinuation<Bool, Never>) in
            slot.start { seen.resume(returning: Task.isCancelled) }
        }
        #expect(!cancelled)
    }
}
