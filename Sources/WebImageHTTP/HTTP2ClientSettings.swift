import NIOCore
import NIOHTTP2

/// The client's HTTP/2 settings and limits: flow-control windows sized for images, and bounds on
/// what a hostile server can make it hold (header lists, frames, CONTINUATION runs).
enum HTTP2ClientSettings {
    /// Each stream's receive window (`SETTINGS_INITIAL_WINDOW_SIZE`, and the target NIOHTTP2 keeps
    /// it at): 2 MiB, so a typical image (50 KB-2 MB) arrives in one round trip without a
    /// `WINDOW_UPDATE` stalling it; the default 64 KiB took several round trips per image.
    static let streamWindow = 2 * 1024 * 1024
    /// The connection's receive window: 16 MiB shared by every stream, so a hundred images in
    /// flight are not throttled by the 64 KiB default; raised by a `WINDOW_UPDATE` right after the preface.
    static let connectionWindow = 16 * 1024 * 1024
    /// The largest header list accepted (`SETTINGS_MAX_HEADER_LIST_SIZE`); larger blocks are a connection error.
    static let maxHeaderListSize = 64 * 1024
    /// The largest frame accepted: the protocol's default (16 KiB).
    static let maxFrameSize = 1 << 14
    /// CONTINUATION frames accepted in a row before the connection is closed (an endless run is an attack).
    static let maxContinuationFrames = 5

    /// The settings sent in the preface. Push is off: an image loader has no use for it.
    static var initialSettings: HTTP2Settings {
        [
            HTTP2Setting(parameter: .enablePush, value: 0),
            HTTP2Setting(parameter: .initialWindowSize, value: streamWindow),
            HTTP2Setting(parameter: .maxFrameSize, value: maxFrameSize),
            HTTP2Setting(parameter: .maxHeaderListSize, value: maxHeaderListSize),
            // Server-initiated streams are refused: push is off.
            HTTP2Setting(parameter: .maxConcurrentStreams, value: 0),
        ]
    }

    static var connectionConfiguration: NIOHTTP2Handler.ConnectionConfiguration {
        var configuration = NIOHTTP2Handler.ConnectionConfiguration()
        configuration.initialSettings = initialSettings
        configuration.targetWindowSize = connectionWindow
        configuration.maximumSequentialContinuationFrames = maxContinuationFrames
        // A body that ends short of its Content-Length is the exchange's to judge (`truncatedData`,
        // as over HTTP/1.1, with its bytes kept for a range resumption), not a protocol error that
        // resets the stream and drops what arrived.
        configuration.contentLengthValidation = .disabled
        return configuration
    }

    static var streamConfiguration: NIOHTTP2Handler.StreamConfiguration {
        var configuration = NIOHTTP2Handler.StreamConfiguration()
        configuration.targetWindowSize = streamWindow
        return configuration
    }

    /// The `WINDOW_UPDATE` that takes the connection window from the protocol's 65 535 bytes to
    /// ``connectionWindow`` at once (NIOHTTP2 would only raise it after the first data arrived).
    static var connectionWindowUpdate: HTTP2Frame {
        HTTP2Frame(streamID: .rootStream, payload: .windowUpdate(windowSizeIncrement: connectionWindow - 65_535))
    }

    /// The HTTP/2 weight (1...256) of a load of `priority` (-2 lowest ... 2 highest; 0 is the
    /// protocol's default weight, 16).
    static func weight(forPriority priority: Int) -> Int {
        switch priority {
        case ..<(-1): 4
        case -1: 8
        case 0: 16
        case 1: 64
        default: 256
        }
    }
}
