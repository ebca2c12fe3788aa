import Testing
@testable import WebImage

/// Partial data goes out at geometrically growing sizes, so a progressive load copies (and
/// re-decodes) a linear amount of bytes however small the network reads are.
@Suite struct PartialDataThrottleTests {
    @Test func handOutsGrowGeometrically() {
        var throttle = PartialDataThrottle()
        var handedOut: [Int] = []
        let body = 10_000_000
        for count in stride(from: 1_000, through: body, by: 1_000) where throttle.shouldDeliver(count: count) {
            handedOut.append(count)
        }
        // Every hand-out copies the bytes so far: the total stays within five times the body,
        // where handing out every 1 KB read would copy about 5,000 times it.
        #expect(handedOut.reduce(0, +) <= 5 * body)
        #expect(handedOut.first == 9_000) // the first read of at least `minimumGrowth` bytes
        #expect(handedOut.count > 10 && handedOut.count < 60)
        for (previous, next) in zip(handedOut, handedOut.dropFirst()) {
            #expect(next - previous >= max(PartialDataThrottle.minimumGrowth, previous / 4))
        }
    }

    @Test func smallReadsWaitForEnoughNewBytes() {
        var throttle = PartialDataThrottle()
        let decisions = [2_048, 8_192, 10_000, 16_384].map { throttle.shouldDeliver(count: $0) }
        #expect(decisions == [false, true, false, true])
    }
}
