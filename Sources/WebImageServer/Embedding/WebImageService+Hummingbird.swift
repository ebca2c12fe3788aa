#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import HTTPTypes
import Hummingbird
import NIOCore

extension WebImageService {
    /// The service's endpoints as routes of an application's `router`, under `prefix`
    /// (`/img` gives `/img/image` and `/img/info`), behind the application's own middleware and
    /// with its request context: each request logs to the context's logger. `HEAD` comes with
    /// the router's `.autoGenerateHeadEndpoints` option, as for the application's own routes.
    public func addRoutes<Context: RequestContext>(to router: Router<Context>, atPath prefix: String = "/") {
        let group = router.group(RouterPath(prefix))
        for endpoint in Self.endpoints {
            group.get(RouterPath(endpoint)) { request, context in
                await self.respond(to: ServiceRequest(request, path: "/" + endpoint), logger: context.logger).hummingbird
            }
        }
        // A dialect's paths as sent (percent-encoded, `//` kept), below the service's mount point.
        let mountPoint = DialectMount(name: .imgproxy, prefix: prefix)
        for dialect in configuration.dialects {
            let below = dialect.prefix == "/" ? "**" : String(dialect.prefix.dropFirst()) + "/**"
            group.get(RouterPath(below)) { request, context in
                let path = mountPoint.relativePath(of: request.uri.path).map { "/" + $0 } ?? request.uri.path
                return await self.respond(to: ServiceRequest(request, path: path), logger: context.logger).hummingbird
            }
        }
    }

    /// The paths the service answers, below its mount point.
    static let endpoints = ["image", "info"]
}

extension ServiceRequest {
    /// A Hummingbird request as the service reads it, at `path` below the mount point.
    init(_ request: Request, path: String) {
        self.init(method: request.method.rawValue, path: path, query: request.uri.query ?? "",
                  headers: request.headers.map { (name: $0.name.canonicalName, value: $0.value) })
    }
}

extension ServiceResponse {
    /// The Hummingbird response that sends this one.
    var hummingbird: Response {
        var fields = HTTPFields()
        for (name, value) in headers {
            if let name = HTTPField.Name(name) { fields.append(HTTPField(name: name, value: value)) }
        }
        return Response(status: HTTPResponse.Status(code: status), headers: fields,
                        body: body.isEmpty ? ResponseBody() : ResponseBody(byteBuffer: ByteBuffer(bytes: body)))
    }
}
