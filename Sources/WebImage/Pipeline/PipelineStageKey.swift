#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The key of one stage of the manager's graph (``PipelineStages``): loads whose keys are
/// equal share the stage.
enum PipelineStageKey: Hashable, Sendable {
    /// Fetching a URL's bytes through a loader.
    case fetch(FetchStageKey)
    /// Decoding a source's bytes (or adapting a cached image).
    case decode(DecodeStageKey)
    /// The first transforms of a chain, by identifier, applied to that decode's image:
    /// `[resize]` and `[resize, roundCorners]` share the resize.
    case transform(DecodeStageKey, prefix: [String])
}

/// What makes two fetches the same: the loader, the URL and everything that shapes the request.
struct FetchStageKey: Hashable, Sendable {
    var loader: InstanceIdentity
    var url: String
    /// `name=value`, sorted by name.
    var headers: [String]
    var validators: CacheValidators?
    var progressive: Bool
    var timeout: Duration?
    /// Set for a load with its own request or response modifier: it shares with no one.
    var exclusive: UUID?
}

/// What makes two decodes the same: the coders, the decode options and the source.
struct DecodeStageKey: Hashable, Sendable {
    /// Where the bytes come from.
    enum Source: Hashable, Sendable {
        /// A fetch stage.
        case fetch(FetchStageKey)
        /// What `cache` held under `key`: its bytes, or (`memoryImage`) its decoded image.
        case cache(InstanceIdentity, key: String, memoryImage: Bool)
    }

    var coders: ObjectIdentifier
    var options: DecodeOptions
    var source: Source
}
