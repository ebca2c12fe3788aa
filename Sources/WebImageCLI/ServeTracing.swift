import Logging
import OTel
import ServiceLifecycle

/// `webimage serve`'s tracer: swift-otel, bootstrapped as the process's tracer, so the service's
/// spans (`GET /image`, `fetch source`, `decode`, `transform`, `encode`) leave the process and a
/// request's W3C `traceparent` continues to the source fetch.
///
/// With an endpoint (`--otel-endpoint`, or the standard `OTEL_EXPORTER_OTLP_ENDPOINT` or
/// `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`) the spans are exported over OTLP/HTTP with protobuf
/// bodies (the one protocol this build carries: swift-otel's `OTLPHTTP` trait only, no gRPC
/// stack); the other standard `OTEL_*` variables (`OTEL_SERVICE_NAME`, `OTEL_TRACES_SAMPLER`,
/// `OTEL_BSP_*`, `OTEL_PROPAGATORS`...) apply as swift-otel reads them. Without one, nothing is
/// exported but the trace context still propagates: an incoming `traceparent` reaches the origin.
/// Only traces: metrics stay with Prometheus (`/metrics`), logs with stderr.
enum ServeTracing {
    /// The `OTEL_*` variable an `--otel-endpoint` stands for: the base URL, traces go to `/v1/traces` under it.
    static let endpointVariable = "OTEL_EXPORTER_OTLP_ENDPOINT"

    /// Whether spans are exported: an endpoint is given by the setting or the environment.
    static func exports(endpoint: String?, environment: [String: String]) -> Bool {
        endpoint != nil || [endpointVariable, "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"].contains { environment[$0]?.isEmpty == false }
    }

    /// Bootstraps the process's tracer (once per process) and returns the service that exports
    /// its spans, to run beside the server (before it in the group, so it stops after it and
    /// exports the last requests' spans).
    /// - Throws: swift-otel's error for a configuration it cannot use (`OTEL_EXPORTER_OTLP_PROTOCOL=grpc`).
    static func bootstrap(endpoint: String?, environment: [String: String]) throws -> any Service {
        var environment = environment
        if let endpoint { environment[endpointVariable] = endpoint }
        var configuration = OTel.Configuration.default
        configuration.serviceName = "webimage"
        configuration.propagators = [.traceContext]
        configuration.metrics.enabled = false
        configuration.logs.enabled = false
        configuration.traces.enabled = true
        configuration.traces.exporter = exports(endpoint: endpoint, environment: environment) ? .otlp : .none
        configuration.traces.otlpExporter.protocol = .httpProtobuf
        return try OTel.bootstrap(configuration: configuration, environment: environment)
    }
}
