#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Logging
import Tracing
import WebImage

/// One `/image` output as the manager's encode stage renders it: the service's ``ImageRenderer``
/// with the request's parameters and negotiated format, its limits and memory estimate, the
/// request's trace and log.
struct ServiceRendering: ImageRendering {
    let renderer: ImageRenderer
    let parameters: ImageParameters
    let choice: FormatNegotiation.Choice
    /// thumbor's watermark image, fetched through the source rules and caches as the source is.
    let additionalSources: [ImageRequest]
    let tracer: any Tracer
    /// The request's span context: the render's thread has no task-local one.
    let context: ServiceContext
    let metrics: ServiceMetrics
    let logger: Logger

    /// The output cache key: the source, the options, the choice and the settings the render
    /// uses (the source key is the URL: the service filters no key).
    func outputKey(sourceKey: String) -> String {
        renderer.outputKey(parameters, choice: choice)
    }

    /// The limits, from the header, before any memory is taken (413 or 422), and the estimate.
    /// A header whose size cannot be read takes the whole budget, and a pixel limit that keeps it within.
    func prepare(_ sources: [SourceImage], memoryBudget: Int?) throws -> ImageManager.PreparedRender {
        guard let source = sources.first else { throw WebImageError.emptyData }
        let mark = sources.dropFirst().first?.data
        let frames = try renderer.limits.check(source.data, parameters: parameters, choice: choice)
        let estimate = RenderEstimate.bytes(source: source.data, parameters: parameters, choice: choice,
                                            animationByteLimit: renderer.animationByteLimit, frames: frames)
        let renderer = estimate != nil || memoryBudget == nil ? self.renderer : ImageRenderer(coders: self.renderer.coders, maxSourcePixels: min(self.renderer.maxSourcePixels, (memoryBudget ?? 0) / 10),
            animationByteLimit: self.renderer.animationByteLimit, settings: self.renderer.settings, limits: self.renderer.limits)
        let reserved = estimate ?? memoryBudget ?? 0
        let parameters = parameters, choice = choice, tracer = tracer, context = context, metrics = metrics, logger = logger
        return ImageManager.PreparedRender(bytes: reserved) { cancellation in
            let start = ContinuousClock.now
            let stages = RenderStages(tracer: tracer, context: context, cancellation: cancellation)
            let image: EncodedImage
            do {
                image = try renderer.render(source.data, sourceValidators: source.validators, parameters: parameters, choice: choice,
                                            stages: stages, overlay: mark)
            } catch let error as WebImageError {
                // Only a broken image is answered here (a truncated one is 415, not a failed
                // fetch); a stop at a checkpoint (`CancellationError`) goes up as it is.
                throw ServiceError.fromSourceBytes(error)
            }
            metrics.rendered()
            logger.debug("rendered", metadata: [
                "source.bytes": "\(source.data.count)", "output.bytes": "\(image.body.count)", "output.type": "\(image.contentType)",
                "estimate.bytes": "\(reserved)", "render": "\(ContinuousClock.now - start)",
            ])
            return image
        }
    }
}
