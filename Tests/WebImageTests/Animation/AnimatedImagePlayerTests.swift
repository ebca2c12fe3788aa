import Foundation
import Testing
@testable import WebImage

/// `AnimatedImagePlayer` on a clock the test moves: frames due, loops, skipping, rate, seeking,
/// and the buffer's byte budget.
@Suite("Animated image player", .timeLimit(.minutes(2)))
struct AnimatedImagePlayerTests {
    /// A 6-frame animation of 0.25 s frames (a binary fraction, so clock sums are exact), each a different flat colour, played `loops` times.
    private func sixFrames(loops: Int) throws -> AnimatedImage {
        let frames = try (0..<6).map { index in
            ImageFrame(bitmap: try Bitmap(width: 16, height: 12, filledWith: (UInt8(index * 40), 0, 0, 255)), duration: 0.25)
        }
        let data = try ImageCodersManager.shared.encode(try DecodedImage(frames: frames, loopCount: loops, hasAlpha: false),
                                                        format: .webp, options: EncodeOptions(lossless: true))
        return try #require(try AnimatedImage(data: data))
    }

    private func red(_ frame: ImageFrame?) -> Int? { frame?.bitmap.pixel(x: 0, y: 0).map { Int($0.r) / 40 } }

    @Test func showsFramesAsTheClockSaysAndSkipsLateOnes() async throws {
        let clock = ManualAnimationClock()
        let player = try AnimatedImagePlayer(animation: try sixFrames(loops: 0), clock: clock)
        player.play()
        await player.waitUntilPrefetched()
        #expect(red(player.currentFrame) == 0)
        clock.advance(by: 0.125)
        #expect(player.update() == nil, "frame 0 still due")
        clock.advance(by: 0.125)
        #expect(red(player.update()) == 1)
        // The consumer comes back 0.75 s later: frames 2 and 3 passed, frame 4 is due.
        clock.advance(by: 0.75)
        await player.waitUntilPrefetched()
        #expect(red(player.update()) == 4)
        #expect(player.statistics.skipped == 2)
        #expect(player.statistics.shown == 3)
    }

    @Test func loopsEndOnTheLastFrame() async throws {
        let clock = ManualAnimationClock()
        let player = try AnimatedImagePlayer(animation: try sixFrames(loops: 2), clock: clock)
        #expect(player.loopCount == 2)
        player.play()
        for _ in 0..<11 {
            await player.waitUntilPrefetched()
            clock.advance(by: 0.25)
            player.update()
        }
        #expect(player.loopsCompleted == 1)
        #expect(player.currentFrameIndex == 5)
        #expect(!player.isFinished)
        await player.waitUntilPrefetched()
        clock.advance(by: 0.25)
        player.update()
        #expect(player.loopsCompleted == 2)
        #expect(player.isFinished)
        #expect(red(player.currentFrame) == 5)
        #expect(player.statistics.shown == 12 && player.statistics.skipped == 0)
        clock.advance(by: 5)
        #expect(player.update() == nil && player.currentFrameIndex == 5, "a finished player stays")
    }

    @Test func aConsumerBackAfterManyLoopsSkipsWholeLoops() async throws {
        let clock = ManualAnimationClock()
        let player = try AnimatedImagePlayer(animation: try sixFrames(loops: 0), clock: clock)
        player.play()
        await player.waitUntilPrefetched()
        clock.advance(by: 60 * 1.5 + 0.375)
        await player.waitUntilPrefetched()
        player.update()
        #expect(player.loopsCompleted == 60)
        #expect(player.currentFrameIndex == 1)
    }

    /// A one-loop play caught up long past its end (a starved process): each frame counted once,
    /// shown or skipped, and the last one stays up.
    @Test func aFinitePlayCaughtUpPastItsEndCountsEachFrameOnce() async throws {
        let clock = ManualAnimationClock()
        let player = try AnimatedImagePlayer(animation: try sixFrames(loops: 0), clock: clock)
        player.loopCount = 1
        player.play()
        await player.waitUntilPrefetched()
        clock.advance(by: 100)
        player.update()
        await player.waitUntilPrefetched()
        player.update()
        #expect(player.isFinished && player.loopsCompleted == 1)
        #expect(player.statistics.shown + player.statistics.skipped == 6,
                "shown \(player.statistics.shown), skipped \(player.statistics.skipped)")
        #expect(player.currentFrameIndex == 5)
    }

    @Test func rateAndPauseScaleTime() async throws {
        let clock = ManualAnimationClock()
        let player = try AnimatedImagePlayer(animation: try sixFrames(loops: 0), clock: clock)
        player.playbackRate = 2
        player.play()
        await player.waitUntilPrefetched()
        clock.advance(by: 0.125)
        #expect(red(player.update()) == 1, "0.125 s at twice the speed is one frame")
        player.pause()
        clock.advance(by: 10)
        #expect(player.update() == nil && player.currentFrameIndex == 1)
        player.play()
        clock.advance(by: 0.125)
        await player.waitUntilPrefetched()
        #expect(red(player.update()) == 2)
    }

    @Test func everyFrameModeShowsEachFrameOnce() async throws {
        let clock = ManualAnimationClock()
        let player = try AnimatedImagePlayer(animation: try sixFrames(loops: 1), clock: clock)
        player.skipsFrames = false
        player.play()
        var seen: [Int?] = []
        for _ in 0..<6 {
            await player.waitUntilPrefetched()
            if let frame = player.currentFrame, seen.isEmpty { seen.append(red(frame)) }
            clock.advance(by: 1)
            if let frame = player.update() { seen.append(red(frame)) }
        }
        #expect(seen == [0, 1, 2, 3, 4, 5])
        #expect(player.statistics.skipped == 0)
    }

    @Test func seekShowsTheWholeDecodesFrame() async throws {
        let data = try AnimationSamples.movingSquareAPNG(width: 120, height: 80, frames: 20)
        let whole = try ImageCodersManager.shared.decode(data, options: DecodeOptions())
        let player = try AnimatedImagePlayer(animation: try #require(try AnimatedImage(data: data)), clock: ManualAnimationClock())
        for index in [13, 4, 19, 0] {
            player.seek(toFrame: index)
            await player.waitUntilPrefetched()
            #expect(player.currentFrameIndex == index)
            #expect(player.currentFrame?.bitmap.canonicalSHA256() == whole.frames[index].bitmap.canonicalSHA256())
        }
    }

    @Test func theBufferStaysWithinItsBudget() async throws {
        let data = try AnimationSamples.movingSquareAPNG(width: 120, height: 80, frames: 20)
        let animation = try #require(try AnimatedImage(data: data))
        let frameBytes = animation.frameByteCount
        let (player, clock, _) = try await LazyAnimationExpectations.playOnceInThreeFrames(animation)
        #expect(player.statistics.peakBufferBytes == 3 * frameBytes)
        #expect(player.statistics.shown == 20)
        // The default budget holds every frame of a small animation: loops decode nothing more.
        let roomy = try AnimatedImagePlayer(animation: animation, clock: clock)
        #expect(roomy.bufferBudget == 20 * frameBytes)
    }
}
