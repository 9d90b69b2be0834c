import ArgumentParser
import Foundation
import Logging
#if OTLP
import OTel
#endif
import ServiceLifecycle

/// `imago serve`'s tracing: spans exported over OTLP/HTTP (protobuf) by
/// swift-otel, when an endpoint is configured, and nothing at all otherwise.
///
/// The endpoint is `--otlp-endpoint` (or `IMAGO_OTLP_ENDPOINT`), a
/// collector's base URL as `OTEL_EXPORTER_OTLP_ENDPOINT` is (spans go to
/// `URL/v1/traces`); without it, `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` or
/// `OTEL_EXPORTER_OTLP_ENDPOINT`. `OTEL_SDK_DISABLED=true` or
/// `OTEL_TRACES_EXPORTER=none` turn it off. The other `OTEL_*` variables
/// swift-otel reads apply (`OTEL_SERVICE_NAME`, default `imago`;
/// `OTEL_RESOURCE_ATTRIBUTES`, `OTEL_TRACES_SAMPLER`, `OTEL_BSP_*`,
/// `OTEL_EXPORTER_OTLP_HEADERS`...). Only traces: metrics stay Prometheus's
/// and logs standard error's.
///
/// A build without the exporter (`IMAGO_WITHOUT_OTLP`, see Tools/Package.swift)
/// refuses a configured endpoint instead.
enum ServeTracing {
    /// Whether this build has the exporter.
    static var isBuiltIn: Bool {
        #if OTLP
        true
        #else
        false
        #endif
    }

    /// Where spans go and what said so, or `nil` when tracing is off.
    static func endpoint(flag: String?, environment: [String: String]) -> (url: String, origin: String)? {
        if environment["OTEL_SDK_DISABLED"].map(ServeEnvironment.isTrue) ?? false { return nil }
        if environment["OTEL_TRACES_EXPORTER"]?.lowercased() == "none" { return nil }
        if let flag { return (flag, "--otlp-endpoint") }
        for variable in ["OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_ENDPOINT"] {
            if let url = environment[variable], !url.isEmpty { return (url, variable) }
        }
        return nil
    }

    /// What `--print-config` shows for `otlp-endpoint`.
    static func describe(flag: String?, environment: [String: String]) -> String {
        guard let (url, origin) = endpoint(flag: flag, environment: environment) else { return "(none: no tracing)" }
        let described = origin == "--otlp-endpoint" ? url : "\(url) (\(origin))"
        return isBuiltIn ? described : described + " (refused: built without the OTLP exporter)"
    }

    #if OTLP
    /// Adds `trace_id`, `span_id` and `trace_flags` to lines logged inside a
    /// span (nothing outside one, or with tracing off).
    static let logMetadata: Logger.MetadataProvider? = OTel.makeLoggingMetadataProvider()

    /// Bootstraps the tracer when an endpoint is configured; the service
    /// that exports the spans (run it beside the server, stopped after it
    /// so the last spans go out), or `nil` when tracing is off.
    static func bootstrap(flag: String?, environment: [String: String], logger: Logger) throws -> (any Service)? {
        guard endpoint(flag: flag, environment: environment) != nil else { return nil }
        var configuration = OTel.Configuration.default
        configuration.serviceName = "imago"
        configuration.logs.enabled = false
        configuration.metrics.enabled = false
        // swift-otel's own messages (export failures) go to the server's log.
        configuration.diagnosticLogger = .custom(logger)
        configuration.diagnosticLogLevel = .warning
        var environment = environment
        // Read above; swift-otel would turn logs and metrics back on with `false`.
        environment["OTEL_SDK_DISABLED"] = nil
        if let flag {
            // The flag wins over the variables, as every serve flag does.
            configuration.traces.otlpExporter.endpoint = flag.hasSuffix("/") ? flag + "v1/traces" : flag + "/v1/traces"
            environment["OTEL_EXPORTER_OTLP_ENDPOINT"] = nil
            environment["OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"] = nil
        }
        return try OTel.bootstrap(configuration: configuration, environment: environment)
    }
    #else
    /// No span ids without the exporter.
    static let logMetadata: Logger.MetadataProvider? = nil

    /// `nil`; a configured endpoint is an error in a build without the exporter.
    static func bootstrap(flag: String?, environment: [String: String], logger: Logger) throws -> (any Service)? {
        guard let (url, origin) = endpoint(flag: flag, environment: environment) else { return nil }
        throw ValidationError("\(origin) \(url): this imago was built without the OTLP exporter (IMAGO_WITHOUT_OTLP).")
    }
    #endif
}
