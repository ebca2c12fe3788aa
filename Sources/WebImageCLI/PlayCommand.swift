import ArgumentParser
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import WebImage

/// `webimage play FILE`: runs an ``AnimatedImagePlayer`` on the real clock without showing
/// anything, as a display would drive it, and reports what it did.
struct PlayCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "play",
        abstract: "Play an animated GIF, APNG or WebP on the real clock without showing it, and report the playback.",
        discussion: """
            The JSON record is {"frames", "loops", "shown", "skipped", "peakBufferBytes"}: the \
            animation's frame count, complete plays during the run, frames presented, frames whose \
            time passed unseen, and the most bytes the frame buffer held. Without --seconds the \
            animation plays once through.
            """
    )

    @Argument(help: "The animated image file.")
    var file: String

    @Option(help: "Play for S seconds after the first frame shows (the animation's own loop count still ends it).")
    var seconds: Double?

    @Option(help: "Playback rate: 2 plays twice as fast.")
    var rate: Double = 1

    @Option(name: .customLong("buffer-mib"), help: "The frame buffer's budget in MiB (default: sized from the frame size and free memory).")
    var bufferMiB: Int?

    @Flag(help: "Show every frame instead of skipping late ones (times decoding every frame at a high --rate).")
    var everyFrame = false

    @Flag(help: "Print one JSON object.")
    var json = false

    func validate() throws {
        guard rate.isFinite, rate > 0 else { throw ValidationError("--rate must be a positive number") }
        if let seconds, !(seconds.isFinite && seconds >= 0) { throw ValidationError("--seconds must be 0 or more") }
        if let bufferMiB, bufferMiB < 0 || bufferMiB > 1 << 20 { throw ValidationError("--buffer-mib must be 0...1048576") }
    }

    func run() async throws {
        let data = try Data(contentsOf: URL(fileURLWithPath: file))
        guard let animation = try AnimatedImage(data: data) else {
            throw ValidationError("\(file) is not an animated GIF, APNG or WebP")
        }
        let clock = SystemAnimationClock()
        let player = try AnimatedImagePlayer(animation: animation, clock: clock, bufferBytes: bufferMiB.map { $0 << 20 })
        player.playbackRate = rate
        player.skipsFrames = !everyFrame
        if seconds == nil { player.loopCount = 1 }
        player.play()
        var end: Double?
        while true {
            player.update()
            let now = clock.now()
            if end == nil, player.currentFrame != nil { end = now + (seconds ?? .infinity) }
            if player.isFinished || end.map({ now >= $0 }) == true { break }
            // Sleep to the next frame's time, or briefly while a frame is still being decoded.
            let wake = min(player.nextFrameTime ?? now + 0.001, end ?? .infinity)
            try await Task.sleep(for: .seconds(max(0, min(wake - now, 0.1))))
        }
        player.stop()
        let statistics = player.statistics
        let report = PlayReport(frames: animation.frameCount, loops: player.loopsCompleted, shown: statistics.shown,
                                skipped: statistics.skipped, peakBufferBytes: statistics.peakBufferBytes)
        if json {
            print(JSONOutput.line(report))
        } else {
            print("\(report.frames) frames, \(report.loops) loops, \(report.shown) shown, \(report.skipped) skipped, "
                  + "peak buffer \(report.peakBufferBytes) bytes")
        }
    }
}

/// The `play --json` record.
struct PlayReport: Encodable {
    var frames: Int
    var loops: Int
    var shown: Int
    var skipped: Int
    var peakBufferBytes: Int
}
