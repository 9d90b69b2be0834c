import ArgumentParser
import Foundation
import Logging
import Metrics
#if OTLP
import OTel
#endif
import ServiceLifecycle

/// `imago serve`'s tracing: spans exported over OTLP by swift-otel, over
/// gRPC or HTTP (protobuf or JSON), when tracing is configured, and nothing
/// at all otherwise.
///
/// Tracing is on with an endpoint: `--otlp-endpoint` (or
/// `IMAGO_OTLP_ENDPOINT`), a collector's base URL as
/// `OTEL_EXPORTER_OTLP_ENDPOINT` is; without it,
/// `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` (used as it is) or
/// `OTEL_EXPORTER_OTLP_ENDPOINT`. `--otlp` (imgproxy's
/// `IMGPROXY_OPEN_TELEMETRY_ENABLE`) turns it on without one: the
/// protocol's default on localhost (4317 for gRPC, 4318 for HTTP).
/// Over HTTP, spans go to a base URL's `/v1/traces`.
///
/// The protocol is `--otlp-protocol`, else `OTEL_EXPORTER_OTLP_TRACES_PROTOCOL`
/// or `OTEL_EXPORTER_OTLP_PROTOCOL`: `grpc`, `http/protobuf` (the default)
/// or `http/json`; imgproxy's `http` and `https` mean `http/protobuf`.
/// `OTEL_SDK_DISABLED=true` or `OTEL_TRACES_EXPORTER=none` turn tracing
/// off. The other `OTEL_*` variables swift-otel reads apply
/// (`OTEL_SERVICE_NAME`, default `imago`; `OTEL_RESOURCE_ATTRIBUTES`,
/// `OTEL_TRACES_SAMPLER`, `OTEL_BSP_*`, `OTEL_EXPORTER_OTLP_HEADERS`...).
/// With `--otlp-metrics` and `--otlp-logs` (imgproxy's
/// `IMGPROXY_OPEN_TELEMETRY_ENABLE_METRICS` and `_ENABLE_LOGS`), the
/// metrics and the log lines also go to the same collector (over HTTP, to
/// `/v1/metrics` and `/v1/logs` beside `/v1/traces`), besides Prometheus's
/// `/metrics` and standard error.
///
/// A build without the exporter (`IMAGO_WITHOUT_OTLP`, see Tools/Package.swift)
/// refuses configured tracing instead.
enum ServeTracing {
    /// Whether this build has the exporter.
    static var isBuiltIn: Bool {
        #if OTLP
        true
        #else
        false
        #endif
    }

    /// OTLP's transports, by the names `OTEL_EXPORTER_OTLP_PROTOCOL` takes.
    enum WireProtocol: String, CaseIterable {
        case grpc
        case httpProtobuf = "http/protobuf"
        case httpJSON = "http/json"

        /// The protocol `name` stands for: the standard names, and
        /// imgproxy's `http` and `https` (both `http/protobuf`).
        init?(named name: String) {
            switch name.lowercased() {
            case "http", "https": self = .httpProtobuf
            default: self.init(rawValue: name.lowercased())
            }
        }

        /// The collector OpenTelemetry's SDKs send to when none is named.
        var defaultEndpoint: String { self == .grpc ? "http://localhost:4317" : "http://localhost:4318" }

        #if OTLP
        /// swift-otel's name for it.
        var otel: OTel.Configuration.OTLPExporterConfiguration.`Protocol` {
            switch self {
            case .grpc: .grpc
            case .httpProtobuf: .httpProtobuf
            case .httpJSON: .httpJSON
            }
        }
        #endif
    }

    /// Where spans go, how, and what said so.
    struct Export: Equatable {
        /// The URL the exporter sends to (over HTTP, with `/v1/traces`).
        var url: String
        /// What gave the endpoint: a flag, a variable, or the protocol's default.
        var endpointOrigin: String
        var wireProtocol: WireProtocol
        /// What gave the protocol.
        var protocolOrigin: String

        /// The URL another signal (`metrics`, `logs`) goes to: the same
        /// over gRPC, the sibling of `/v1/traces` over HTTP.
        ///
        /// - Throws: `ValidationError` when spans go to a URL of their own
        ///   (`OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`), which names no collector.
        func url(for signal: String) throws -> String {
            if wireProtocol == .grpc { return url }
            guard url.hasSuffix("/v1/traces") else {
                throw ValidationError("OTLP \(signal) need a collector's base URL (--otlp-endpoint or OTEL_EXPORTER_OTLP_ENDPOINT), not the traces URL \(url).")
            }
            return String(url.dropLast("traces".count)) + signal
        }
    }

    /// The backends for metrics and log lines exported over OTLP.
    struct SignalBackends {
        /// Exports metrics, beside Prometheus's registry.
        var metrics: (any MetricsFactory)?
        /// Makes a handler that exports a logger's lines, beside standard error.
        var logs: (@Sendable (String) -> any LogHandler)?
        /// What sends them (run beside the server, stopped after it).
        var services: [any Service] = []
    }

    /// The tracing configured by the flags and the environment, or `nil`
    /// when tracing is off.
    ///
    /// - Throws: `ValidationError` for a protocol or an endpoint that is not one.
    static func export(flag: String?, protocolFlag: String?, enabled: Bool, environment: [String: String]) throws -> Export? {
        // The flag is checked even with tracing off, as every flag is.
        if let flag { try checkURL(flag, origin: "--otlp-endpoint") }
        if environment["OTEL_SDK_DISABLED"].map(ServeEnvironment.isTrue) ?? false { return nil }
        if environment["OTEL_TRACES_EXPORTER"]?.lowercased() == "none" { return nil }
        // (value, origin, used as it is rather than as a base URL)
        var endpoint: (String, String, asIs: Bool)?
        if let flag {
            endpoint = (flag, "--otlp-endpoint", false)
        } else if let url = environment["OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"], !url.isEmpty {
            endpoint = (url, "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", true)
        } else if let url = environment["OTEL_EXPORTER_OTLP_ENDPOINT"], !url.isEmpty {
            endpoint = (url, "OTEL_EXPORTER_OTLP_ENDPOINT", false)
        }
        var wire = (WireProtocol.httpProtobuf, "the default")
        let named = protocolFlag.map { ($0, "--otlp-protocol") }
            ?? ["OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL"].lazy
                .compactMap { name in environment[name].flatMap { $0.isEmpty ? nil : ($0, name) } }.first
        if let (name, origin) = named {
            guard let parsed = WireProtocol(named: name) else {
                throw ValidationError("\(origin) \(name) is not an OTLP protocol: give grpc, http/protobuf or http/json.")
            }
            wire = (parsed, origin)
        }
        guard endpoint != nil || enabled else { return nil }
        if let exporter = environment["OTEL_TRACES_EXPORTER"], !["", "otlp"].contains(exporter.lowercased()) {
            throw ValidationError("OTEL_TRACES_EXPORTER \(exporter): imago serve exports spans over OTLP only (otlp, or none for no tracing).")
        }
        let (base, origin, asIs) = endpoint ?? (wire.0.defaultEndpoint, "the default for \(wire.0.rawValue)", false)
        try checkURL(base, origin: origin)
        let sent = wire.0 == .grpc || asIs ? base : base.hasSuffix("/") ? base + "v1/traces" : base + "/v1/traces"
        return Export(url: sent, endpointOrigin: origin, wireProtocol: wire.0, protocolOrigin: wire.1)
    }

    /// Throws unless `text` is an http or https URL with a host.
    private static func checkURL(_ text: String, origin: String) throws {
        guard let url = URL(string: text), ["http", "https"].contains(url.scheme?.lowercased() ?? ""), url.host != nil else {
            throw ValidationError("\(origin) \(text) is not an http or https URL.")
        }
    }

    /// What `--print-config` shows for `otlp-endpoint` and `otlp-protocol`.
    static func describe(flag: String?, protocolFlag: String?, enabled: Bool, environment: [String: String]) -> (endpoint: String, protocol: String) {
        let export: Export?
        do {
            export = try Self.export(flag: flag, protocolFlag: protocolFlag, enabled: enabled, environment: environment)
        } catch {
            return ("(refused: \(error))", "(refused)")
        }
        guard let export else { return ("(none: no tracing)", "(none: no tracing)") }
        let refused = isBuiltIn ? "" : " (refused: built without the OTLP exporter)"
        let endpoint = export.endpointOrigin == "--otlp-endpoint" ? export.url : "\(export.url) (\(export.endpointOrigin))"
        let wire = export.protocolOrigin == "--otlp-protocol" ? export.wireProtocol.rawValue : "\(export.wireProtocol.rawValue) (\(export.protocolOrigin))"
        return (endpoint + refused, wire)
    }

    #if OTLP
    /// Adds `trace_id`, `span_id` and `trace_flags` to lines logged inside a
    /// span (nothing outside one, or with tracing off).
    static let logMetadata: Logger.MetadataProvider? = OTel.makeLoggingMetadataProvider()

    /// What every signal's configuration starts from: imgproxy's name for
    /// the service (its 3.x variable) unless OTEL_SERVICE_NAME gives one,
    /// and swift-otel's own messages from warnings up.
    private static func baseConfiguration(_ environment: [String: String]) -> OTel.Configuration {
        var configuration = OTel.Configuration.default
        configuration.serviceName = environment["IMGPROXY_OPEN_TELEMETRY_SERVICE_NAME"].flatMap { $0.isEmpty ? nil : $0 } ?? "imago"
        configuration.diagnosticLogLevel = .warning
        return configuration
    }

    /// Bootstraps the tracer when tracing is configured; the service that
    /// exports the spans (run it beside the server, stopped after it so the
    /// last spans go out), or `nil` when tracing is off.
    static func bootstrap(_ export: Export?, environment: [String: String], logger: Logger) throws -> (any Service)? {
        guard let export else { return nil }
        var configuration = baseConfiguration(environment)
        configuration.logs.enabled = false
        configuration.metrics.enabled = false
        // swift-otel's own messages (export failures) go to the server's log.
        configuration.diagnosticLogger = .custom(logger)
        configuration.traces.otlpExporter.endpoint = export.url
        configuration.traces.otlpExporter.protocol = export.wireProtocol.otel
        var environment = environment
        // Read above, where the flags win over them; swift-otel would turn
        // logs and metrics back on with OTEL_SDK_DISABLED=false.
        for variable in ["OTEL_SDK_DISABLED", "OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
                         "OTEL_EXPORTER_OTLP_PROTOCOL", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"] {
            environment[variable] = nil
        }
        return try OTel.bootstrap(configuration: configuration, environment: environment)
    }
    /// The backends for `--otlp-metrics` and `--otlp-logs`: swift-otel's,
    /// exporting to the collector spans go to, with the protocol they use.
    /// Made before the logging and metrics systems are bootstrapped, which
    /// take them beside their own.
    ///
    /// - Throws: `ValidationError` when either is asked for without a collector.
    static func signalBackends(_ export: Export?, metrics: Bool, logs: Bool, environment: [String: String]) throws -> SignalBackends {
        guard metrics || logs else { return SignalBackends() }
        guard let export else {
            throw ValidationError("--otlp-metrics and --otlp-logs export to the OTLP collector spans go to: name one (--otlp-endpoint, OTEL_EXPORTER_OTLP_ENDPOINT, or --otlp).")
        }
        var configuration = baseConfiguration(environment)
        configuration.traces.enabled = false
        let wire = export.wireProtocol.otel
        var backends = SignalBackends()
        if metrics {
            var metricsConfiguration = configuration
            metricsConfiguration.logs.enabled = false
            metricsConfiguration.metrics.otlpExporter.endpoint = try export.url(for: "metrics")
            metricsConfiguration.metrics.otlpExporter.protocol = wire
            let (factory, service) = try OTel.makeMetricsBackend(configuration: metricsConfiguration)
            backends.metrics = factory
            backends.services.append(service)
        }
        if logs {
            var logsConfiguration = configuration
            logsConfiguration.metrics.enabled = false
            logsConfiguration.logs.otlpExporter.endpoint = try export.url(for: "logs")
            logsConfiguration.logs.otlpExporter.protocol = wire
            let (factory, service) = try OTel.makeLoggingBackend(configuration: logsConfiguration)
            backends.logs = factory
            backends.services.append(service)
        }
        return backends
    }
    #else
    /// No span ids without the exporter.
    static let logMetadata: Logger.MetadataProvider? = nil

    /// `nil`; configured tracing is an error in a build without the exporter.
    static func bootstrap(_ export: Export?, environment: [String: String], logger: Logger) throws -> (any Service)? {
        guard let export else { return nil }
        throw ValidationError("\(export.endpointOrigin) \(export.url): this imago was built without the OTLP exporter (IMAGO_WITHOUT_OTLP).")
    }

    /// No backends; asking for them is an error in a build without the exporter.
    static func signalBackends(_ export: Export?, metrics: Bool, logs: Bool, environment: [String: String]) throws -> SignalBackends {
        guard metrics || logs else { return SignalBackends() }
        throw ValidationError("--otlp-metrics and --otlp-logs: this imago was built without the OTLP exporter (IMAGO_WITHOUT_OTLP).")
    }
    #endif
}
