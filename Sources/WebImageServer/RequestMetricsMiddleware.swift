import HTTPTypes
import Hummingbird
import Logging

/// Around every request: the request id (Hummingbird's, in the logger's metadata) sent back as
/// `X-Request-Id`, one log line, the status counted and the latency recorded. A route that
/// throws (404 for an unknown path) still answers in the service's JSON error shape.
struct RequestMetricsMiddleware<Context: RequestContext>: RouterMiddleware {
    let metrics: ServiceMetrics
    private var requestID: HTTPField.Name { HTTPField.Name("X-Request-Id")! }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let start = ContinuousClock.now
        var response: Response
        do {
            response = try await next(request, context)
        } catch let error as HTTPError {
            let status = Int(error.status.code)
            response = ImageResponses.error(status == 404
                ? .notFound("no endpoint \(request.method.rawValue) \(request.uri.path)")
                : ServiceError(status: status, code: "httpError", message: error.body ?? error.status.reasonPhrase)).hummingbird
        } catch {
            response = ImageResponses.error(ServiceError.from(error)).hummingbird
        }
        let duration = ContinuousClock.now - start
        response.headers[requestID] = context.id
        metrics.request(status: Int(response.status.code), duration: duration)
        context.logger.info("request", metadata: [
            "method": "\(request.method.rawValue)", "path": "\(request.uri.path)",
            "status": "\(response.status.code)", "duration": "\(duration)",
        ])
        return response
    }
}
