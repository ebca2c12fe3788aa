#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import WebImage

/// The service's render of one `GET /image` (decode, resize, encode, through the same
/// renderer the service runs) with no HTTP and no fetch: what `webimage bench-render`
/// times as the ceiling the service's throughput is compared with.
public struct RenderBenchmark: Sendable {
    private let renderer: ImageRenderer
    private let parameters: ImageParameters
    private let choice: FormatNegotiation.Choice

    /// A render for `query`, the `/image` parameters other than `url` (for example
    /// `w=300&h=300&fit=cover&format=jpeg&q=80`); `accept` plays the request's `Accept` for `format=auto`.
    /// - Throws: ``ServiceError`` 400 for a parameter `GET /image` would refuse.
    public init(query: String, accept: String? = nil, configuration: ServerConfiguration = ServerConfiguration()) throws {
        // The URL only names the source in the ETag; nothing is fetched.
        parameters = try ImageParameters(query: "url=http%3A%2F%2Fbenchmark.invalid%2Fsource&" + query)
        let coders = ImageCodersManager.shared
        renderer = ImageRenderer(coders: coders, maxSourcePixels: configuration.maxSourcePixels,
                                 animationByteLimit: configuration.animationByteLimit,
                                 settings: try RenderSettings(configuration, coders: coders), limits: RenderLimits(configuration))
        choice = FormatNegotiation.choice(for: parameters.format, accept: accept, autoFormats: configuration.autoFormats,
                                          canEncode: coders.canEncode)
    }

    /// Renders `source` once and returns the output's size in bytes.
    public func render(_ source: Data) throws -> Int {
        try renderer.render(source, sourceValidators: "benchmark", parameters: parameters, choice: choice).body.count
    }
}
