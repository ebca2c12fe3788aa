import Dispatch
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Maps a URL to the key it is cached under; `nil` means "do not cache this load".
public typealias CacheKeyFilter = @Sendable (URL) -> String?

/// Decides whether a cache miss may go to the network; `false` fails the load with
/// ``WebImageError/rejected(_:)``.
public typealias ShouldDownloadHook = @Sendable (URL) -> Bool

/// Per-load settings that override the manager's parts: SDWebImage's context, with typed
/// properties instead of a string dictionary.
///
/// Every property is optional; `nil` means "the manager's own".
public struct ImageLoadContext: Sendable {
    /// Transforms the decoded image; its identifier is appended to the cache key.
    public var transformer: (any ImageTransformer)?
    /// Chooses the cache key for this load.
    public var cacheKeyFilter: CacheKeyFilter?
    /// The cache to query and store in.
    public var cache: (any ImageCaching)?
    /// The loader that fetches the bytes.
    public var loader: (any ImageLoader)?
    /// The coders that decode the bytes.
    public var coders: ImageCodersManager?
    /// Decode to a thumbnail whose longer side is at most this many pixels. The thumbnail is
    /// cached in memory under its own key; the original bytes go to disk under the plain key.
    public var maxPixelSize: Int?
    /// The download and decode priority (overrides ``ImageLoadOptions/lowPriority`` and ``ImageLoadOptions/highPriority``).
    public var priority: LoadPriority?
    /// Extra request headers.
    public var headers: [String: String]
    /// The idle timeout of the download.
    public var timeout: Duration?
    /// Changes or vetoes (`nil`) the request. Loads with a modifier never share a download stage
    /// with other loads, since their requests may differ.
    public var requestModifier: ImageDownloader.RequestModifier?
    /// Accepts (`true`) or rejects the response head. Loads with a modifier never share a download stage.
    public var responseModifier: ImageDownloader.ResponseModifier?
    /// Decides whether a cache miss may be downloaded.
    public var shouldDownload: ShouldDownloadHook?
    /// Where the completion-handler form calls back; `nil` calls from the load's own task.
    public var callbackQueue: DispatchQueue?

    /// Creates a context; every part left out is the manager's own.
    public init(transformer: (any ImageTransformer)? = nil, cacheKeyFilter: CacheKeyFilter? = nil,
                cache: (any ImageCaching)? = nil, loader: (any ImageLoader)? = nil, coders: ImageCodersManager? = nil,
                maxPixelSize: Int? = nil, priority: LoadPriority? = nil, headers: [String: String] = [:],
                timeout: Duration? = nil, requestModifier: ImageDownloader.RequestModifier? = nil,
                responseModifier: ImageDownloader.ResponseModifier? = nil, shouldDownload: ShouldDownloadHook? = nil,
                callbackQueue: DispatchQueue? = nil) {
        self.transformer = transformer
        self.cacheKeyFilter = cacheKeyFilter
        self.cache = cache
        self.loader = loader
        self.coders = coders
        self.maxPixelSize = maxPixelSize
        self.priority = priority
        self.headers = headers
        self.timeout = timeout
        self.requestModifier = requestModifier
        self.responseModifier = responseModifier
        self.shouldDownload = shouldDownload
        self.callbackQueue = callbackQueue
    }
}
