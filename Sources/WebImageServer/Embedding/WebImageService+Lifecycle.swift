import ServiceLifecycle

extension WebImageService {
    /// The service's background work as a swift-service-lifecycle `Service`: add it to the
    /// application's `ServiceGroup` before the HTTP server, so it is shut down after the server
    /// (a group shuts its services down in reverse order). On graceful shutdown it waits for the
    /// disk and result-store writes under way, then closes the service's connections.
    public var backgroundService: some Service { WebImageBackgroundService(service: self) }
}

/// See ``WebImageService/backgroundService``.
struct WebImageBackgroundService: Service {
    let service: WebImageService

    func run() async throws {
        // Returns when the group shuts down gracefully, throws when it is cancelled: either way, finish.
        try? await gracefulShutdown()
        await service.shutdown()
    }
}
