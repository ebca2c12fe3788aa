#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The key of one stage of the manager's graph (``PipelineStages``): loads whose keys are
/// equal share the stage.
enum PipelineStageKey: Hashable, Sendable {
    /// Decoding a source's bytes (or adapting a cached image).
    case decode(DecodeStageKey)
    /// The first transforms of a chain applied to a decode's image: `[resize]` and
    /// `[resize, roundCorners]` share the resize.
    case transform(TransformStageKey)
    /// An encoded load's source: read from the data tier, else fetched (as a caller of the
    /// downloader's download) and kept there.
    case source(SourceStageKey)
    /// An encoded load's output: from the remote tier, else rendered from its sources.
    case encode(EncodeStageKey)
}

/// What makes two transform stages the same: the decode they start from, and the transforms
/// applied to its image so far, each by its ``ImageTransformer/hashableIdentifier``.
struct TransformStageKey: Hashable, Sendable {
    /// One step's ``ImageTransformer/hashableIdentifier``, compared as `AnyHashable` compares.
    struct Step: Hashable, Sendable {
        let identity: any Hashable & Sendable

        static func == (lhs: Step, rhs: Step) -> Bool { AnyHashable(lhs.identity) == AnyHashable(rhs.identity) }
        func hash(into hasher: inout Hasher) { hasher.combine(AnyHashable(identity)) }
    }

    var decode: DecodeStageKey
    var steps: [Step]

    init(decode: DecodeStageKey, steps: some Sequence<any ImageTransformer>) {
        self.decode = decode
        self.steps = steps.map { Step(identity: $0.hashableIdentifier) }
    }
}

/// What makes two encoded loads' sources the same: the data tier they are kept in, the
/// downloader that fetches them, the URL and its cache key (`nil`: not cached).
struct SourceStageKey: Hashable, Sendable {
    var dataCache: ObjectIdentifier
    var downloader: ObjectIdentifier
    var url: URL
    var cacheKey: String?
}

/// What makes two encoded outputs the same: the data tier they are kept in and the output key
/// (``ImageRendering/outputKey(sourceKey:)``).
struct EncodeStageKey: Hashable, Sendable {
    var dataCache: ObjectIdentifier
    var outputKey: String
}

/// What makes two decodes the same: the coders, the decode options, the source, and whether
/// partial images are decoded as the bytes arrive.
struct DecodeStageKey: Hashable, Sendable {
    /// Where the bytes come from.
    enum Source: Hashable, Sendable {
        /// The download `key` of the downloader `downloader`: the stage is that download's
        /// caller. `exclusive` is set for a load that screens the response (a response
        /// modifier): the stage is that load's alone, so a rejection fails no one else.
        case download(downloader: ObjectIdentifier, key: DownloadKey, exclusive: UUID?)
        /// What a cache held under `key`: its bytes, or (`memoryImage`) its decoded image.
        case cache(InstanceIdentity, key: String, memoryImage: Bool)
    }

    var coders: ObjectIdentifier
    var options: DecodeOptions
    var progressive: Bool
    var source: Source
}
