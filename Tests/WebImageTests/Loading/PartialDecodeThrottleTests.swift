import Testing
@testable import WebImage

/// Partial decodes of a progressive load are spaced in time and in bytes.
@Suite struct PartialDecodeThrottleTests {
    @Test func decodesNeedTimeAndNewBytesSinceTheLast() {
        var throttle = PartialDecodeThrottle()
        let start = ContinuousClock.now
        let interval = PartialDecodeThrottle.minimumInterval, growth = PartialDecodeThrottle.minimumGrowth
        let decisions = [
            throttle.shouldDecode(count: 10_000, now: start), // the first starts at once
            throttle.shouldDecode(count: 10_000 + 10 * growth, now: start + interval / 2), // too soon
            throttle.shouldDecode(count: 10_000 + growth - 1, now: start + interval * 2), // too few new bytes
            throttle.shouldDecode(count: 10_000 + growth, now: start + interval),
            throttle.shouldDecode(count: 10_000 + 3 * growth, now: start + interval * 3 / 2), // too soon again
        ]
        #expect(decisions == [true, false, false, true, false])
    }
}
