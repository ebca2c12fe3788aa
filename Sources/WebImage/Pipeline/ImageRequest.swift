#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// One request of the manager, whole: the URL, the options, the context (its parts, transforms,
/// headers, priority) and, for encoded loads, the output's rendering. A load
/// (``ImageManager/imageTask(with:)-(ImageRequest)``) returns a decoded image; an encoded load
/// (``ImageManager/encodedImage(for:)``) returns bytes.
public struct ImageRequest: Sendable {
    /// The source.
    public var url: URL
    /// How the load behaves.
    public var options: ImageLoadOptions
    /// The parts and settings that override the manager's.
    public var context: ImageLoadContext
    /// For an encoded load: how the source becomes bytes (decode, transforms, encoding).
    public var rendering: (any ImageRendering)?
    /// For an encoded load: wraps the fetch of each source the load's stage starts (a span
    /// around it, a log line, an error of the caller's own).
    public var sourceFetch: (any ImageRequest.SourceFetchInterceptor)?

    /// A request.
    public init(url: URL, options: ImageLoadOptions = [], context: ImageLoadContext = ImageLoadContext(),
                rendering: (any ImageRendering)? = nil, sourceFetch: (any ImageRequest.SourceFetchInterceptor)? = nil) {
        self.url = url
        self.options = options
        self.context = context
        self.rendering = rendering
        self.sourceFetch = sourceFetch
    }

    /// The priority, in one place: the context's, else ``ImageLoadOptions/highPriority`` or
    /// ``ImageLoadOptions/lowPriority``, else normal. Setting it sets the context's, which
    /// overrides the options. (A load under way changes its own with ``ImageTask/setPriority(_:)``.)
    public var priority: LoadPriority {
        get {
            if let priority = context.priority { return priority }
            if options.contains(.highPriority) { return .high }
            if options.contains(.lowPriority) { return .low }
            return .normal
        }
        set { context.priority = newValue }
    }
}

extension ImageRequest {
    /// Wraps the fetch of an encoded load's sources (``ImageRequest/sourceFetch``).
    public protocol SourceFetchInterceptor: Sendable {
        /// Fetches the source at `url` by calling `next` (with headers to add to the request, such
        /// as a trace context), and returns or rethrows what it gives, or throws an error of its own.
        func fetch(_ url: URL, next: @Sendable (_ headers: [String: String]) async throws -> SourceImage) async throws -> SourceImage
    }
}
