#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import WebImage

/// One partial image of a `load --progressive` load. Its JSON form is the contract, one object per
/// line before the load's own record: `url`, `event` (always `"partial"`), `width`, `height`,
/// `bytesReceived` (the bytes received when the partial image arrived) and `ms` (since the load
/// started).
struct PartialRecord: Encodable {
    var url: URL
    var width: Int
    var height: Int
    var bytesReceived: Int64
    var elapsed: Duration

    var line: String {
        "part  " + "\(width)×\(height)".padded(to: 12) + (Double(bytesReceived) / 1024).fixed(1).leftPadded(to: 8) + " KB "
            + elapsed.milliseconds.fixed(1).leftPadded(to: 8) + " ms  " + url.absoluteString
    }

    private enum CodingKeys: String, CodingKey {
        case url, event, width, height, bytesReceived, ms
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(url.absoluteString, forKey: .url)
        try container.encode("partial", forKey: .event)
        try container.encode(width, forKey: .width)
        try container.encode(height, forKey: .height)
        try container.encode(bytesReceived, forKey: .bytesReceived)
        try container.encode((elapsed.milliseconds * 1000).rounded() / 1000, forKey: .ms)
    }
}

extension ImageManager {
    /// Loads `url` reading the task's events, and hands each partial image's record to `report`
    /// as it arrives; returns the final result.
    func loadReportingPartials(_ url: URL, options: ImageLoadOptions, context: ImageLoadContext, start: ContinuousClock.Instant,
                               report: (PartialRecord) -> Void) async throws -> ImageResult {
        let task = imageTask(with: url, options: options, context: context)
        return try await withTaskCancellationHandler {
            var received: Int64 = 0
            for try await event in task.events {
                switch event {
                case .progress(let bytes, _):
                    received = bytes
                case .partialImage(let image):
                    report(PartialRecord(url: url, width: image.width, height: image.height, bytesReceived: received,
                                         elapsed: ContinuousClock.now - start))
                case .cachedImage, .completed:
                    break
                }
            }
            return try await task.result
        } onCancel: {
            task.cancel()
        }
    }
}
