import Foundation
import Testing
@testable import WebImage

/// What every lazily decoding format must show, checked the same way for each.
enum LazyAnimationExpectations {
    /// `data` decoded on demand (``AnimatedImage``) has the whole decode's frame count, durations
    /// and loop count, and the frames `order(frameCount)` (every frame in order unless given)
    /// each equal the same frame of the whole decode, pixels and duration.
    static func framesMatch(_ data: Data, _ label: String, options: DecodeOptions = DecodeOptions(),
                            order: (_ frameCount: Int) -> [Int] = { Array(0..<$0) }) throws {
        let whole = try ImageCodersManager.shared.decode(data, options: options)
        let animation = try #require(try AnimatedImage(data: data, options: options), "\(label) animates")
        #expect(animation.frameCount == whole.frames.count, "\(label) frame count")
        #expect(animation.durations == whole.durations, "\(label) durations")
        #expect(animation.loopCount == whole.loopCount, "\(label) loop count")
        for index in order(animation.frameCount) {
            let frame = try animation.frame(at: index)
            #expect(frame.bitmap.canonicalSHA256() == whole.frames[index].bitmap.canonicalSHA256(), "\(label) frame \(index)")
            #expect(frame.duration == whole.frames[index].duration, "\(label) frame \(index) duration")
        }
    }

    /// Plays `animation` once, no frame skipped, with a buffer of three frames, on a manual clock
    /// advanced a second a frame, expecting the buffer within that budget at every frame. Returns
    /// the finished player, its clock and the frames it showed (their canonical hashes).
    static func playOnceInThreeFrames(_ animation: AnimatedImage) async throws
        -> (player: AnimatedImagePlayer, clock: ManualAnimationClock, shown: [String]) {
        let frameBytes = animation.frameByteCount
        let clock = ManualAnimationClock()
        let player = try AnimatedImagePlayer(animation: animation, clock: clock, bufferBytes: 3 * frameBytes)
        player.loopCount = 1
        player.skipsFrames = false
        player.play()
        var shown: [String] = []
        while !player.isFinished {
            await player.waitUntilPrefetched()
            #expect(player.statistics.bufferBytes <= 3 * frameBytes)
            if shown.isEmpty, let frame = player.currentFrame { shown.append(frame.bitmap.canonicalSHA256()) }
            clock.advance(by: 1)
            if let frame = player.update() { shown.append(frame.bitmap.canonicalSHA256()) }
        }
        return (player, clock, shown)
    }
}
