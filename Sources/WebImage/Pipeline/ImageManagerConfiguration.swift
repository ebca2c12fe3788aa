#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// How an ``ImageManager`` behaves for every load (a load's ``ImageLoadContext`` can override parts).
public struct ImageManagerConfiguration: Sendable {
    /// Chooses cache keys; `nil` uses the absolute URL string.
    public var cacheKeyFilter: CacheKeyFilter?
    /// Decides whether a cache miss may be downloaded; `nil` allows every download.
    public var shouldDownload: ShouldDownloadHook?
    /// With ``ImageLoadOptions/scaleDownLargeImages``, images of more pixels than this decode
    /// smaller to fit. The default, 16,777,216 (4096 × 4096, 64 MiB of RGBA8), is about
    /// SDWebImage's limit on devices.
    public var scaleDownPixelLimit: Int
    /// How many decodes and transforms run at once; the default is the number of active cores.
    public var processingConcurrency: Int
    /// Whether one large decode may use a second thread (``DecodeOptions/parallelDecoding``):
    /// lower latency for a single large image. When many loads keep every core busy anyway,
    /// `false` avoids running more threads than cores.
    public var parallelDecoding: Bool
    /// The bounds of the encode stage (``ImageManager/encodedImage(for:)``): how much it admits,
    /// the memory its renders may hold, how long one may run. None by default.
    public var encodeStage: ImageManagerConfiguration.EncodeStageLimits

    public init(cacheKeyFilter: CacheKeyFilter? = nil, shouldDownload: ShouldDownloadHook? = nil,
                scaleDownPixelLimit: Int = 4096 * 4096,
                processingConcurrency: Int = ProcessInfo.processInfo.activeProcessorCount,
                parallelDecoding: Bool = true, encodeStage: ImageManagerConfiguration.EncodeStageLimits = ImageManagerConfiguration.EncodeStageLimits()) {
        self.encodeStage = encodeStage
        self.cacheKeyFilter = cacheKeyFilter
        self.shouldDownload = shouldDownload
        self.scaleDownPixelLimit = scaleDownPixelLimit
        self.processingConcurrency = processingConcurrency
        self.parallelDecoding = parallelDecoding
    }
}
