import ArgumentParser
import CommandLineSupport
import Foundation
import Hummingbird
import Logging
import Metrics
import Prometheus
import ServiceLifecycle

/// `imago serve`'s metrics settings: imgproxy's Prometheus variables
/// (`IMGPROXY_PROMETHEUS_BIND`, `IMGPROXY_PROMETHEUS_NAMESPACE`) and its
/// DogStatsD ones (`IMGPROXY_DATADOG_ENABLE_ADDITIONAL_METRICS` with the
/// agent at `DD_AGENT_HOST` and `DD_DOGSTATSD_PORT`, tagged with
/// `DD_SERVICE`, `DD_ENV`, `DD_VERSION`; see ``ServeEnvironment``).
struct ServeMetricsOptions: ParsableArguments {
    @Option(help: ArgumentHelp("Also send every metric to the DogStatsD agent at HOST:PORT over UDP, batched and flushed every second; a send that fails is dropped and counted (imago_dogstatsd_dropped_datagrams) (IMGPROXY_DATADOG_ENABLE_ADDITIONAL_METRICS with DD_AGENT_HOST and DD_DOGSTATSD_PORT).", valueName: "host:port"))
    var dogstatsd: String?

    @Option(name: .customLong("dogstatsd-tag"), help: ArgumentHelp("A tag on every DogStatsD metric, KEY:VALUE; repeatable (DD_SERVICE, DD_ENV and DD_VERSION give service:, env: and version:).", valueName: "key:value"))
    var dogstatsdTags: [String] = []

    @Option(help: ArgumentHelp("Also serve /metrics on this address, HOST:PORT or :PORT, apart from the images' listener (IMGPROXY_PROMETHEUS_BIND).", valueName: "host:port"))
    var prometheusBind: String?

    @Option(help: ArgumentHelp("A prefix for the name of every metric on /metrics: NAMESPACE_name (IMGPROXY_PROMETHEUS_NAMESPACE).", valueName: "namespace"))
    var prometheusNamespace: String?

    func validate() throws {
        if let dogstatsd {
            guard try Self.address(dogstatsd, flag: "--dogstatsd").port != 0 else { throw ValidationError("--dogstatsd needs a port other than 0.") }
        }
        if let prometheusBind { _ = try Self.address(prometheusBind, flag: "--prometheus-bind") }
        if let namespace = prometheusNamespace, !namespace.isEmpty {
            let allowed = CharacterSet.alphanumerics.union(CharacterSet(charactersIn: "_:"))
            guard namespace.unicodeScalars.allSatisfy({ $0.isASCII && allowed.contains($0) }), !("0"..."9").contains(namespace.first!) else {
                throw ValidationError("--prometheus-namespace must be a Prometheus name: letters, digits, _ and :, not starting with a digit.")
            }
        }
    }

    /// Throws unless `--prometheus-bind` listens apart from the images'
    /// listener at `main` (as imgproxy refuses the same address for both).
    func checkApart(from main: ServeHTTPOptions.Address) throws {
        guard let prometheusBind, case .tcp(let host, let port) = main else { return }
        let metrics = try Self.address(prometheusBind, flag: "--prometheus-bind")
        let wildcards: Set = ["0.0.0.0", "::"]
        if port != 0, metrics.port == port, metrics.host == host || wildcards.contains(metrics.host) || wildcards.contains(host) {
            throw ValidationError("--prometheus-bind \(prometheusBind) is the images' own address: give the metrics another port.")
        }
    }

    /// `HOST:PORT` (`:PORT` for every address, `[::1]:PORT` for IPv6), read as `--bind` reads it.
    static func address(_ text: String, flag: String) throws -> (host: String, port: Int) {
        guard let options = try? ServeHTTPOptions.parse(["--bind", text]), case .tcp(let host, let port)? = try? options.address(host: "", port: 0) else {
            throw ValidationError("\(flag) must be HOST:PORT or :PORT, not \(text).")
        }
        return (host, port)
    }

    /// Bootstraps swift-metrics: the Prometheus registry that /metrics
    /// shows, with the DogStatsD backend beside it when `--dogstatsd` is
    /// given, and `other` (OTLP's, with `--otlp-metrics`).
    ///
    /// - Throws: `ExitCode(1)`, with the reason on standard error, when the agent's address cannot be used.
    func bootstrap(beside other: (any MetricsFactory)? = nil) throws -> ServeMetrics {
        var prometheus = PrometheusMetricsFactory(registry: PrometheusCollectorRegistry())
        if let namespace = prometheusNamespace, !namespace.isEmpty {
            prometheus.nameAndLabelSanitizer = { name, labels in (namespace + "_" + name, labels) }
        }
        var dogStatsD: DogStatsDMetricsFactory?
        if let dogstatsd {
            do {
                let (host, port) = try Self.address(dogstatsd, flag: "--dogstatsd")
                dogStatsD = DogStatsDMetricsFactory(sender: try DogStatsDSender(host: host, port: port), tags: dogstatsdTags)
            } catch {
                Output.error("imago: serve: --dogstatsd \(dogstatsd) cannot be used: \(error)")
                throw ExitCode(1)
            }
        }
        let factories: [any MetricsFactory] = [prometheus] + (dogStatsD.map { [$0] } ?? []) + (other.map { [$0] } ?? [])
        if factories.count > 1 {
            MetricsSystem.bootstrap(MultiplexMetricsHandler(factories: factories))
        } else {
            MetricsSystem.bootstrap(prometheus)
        }
        return ServeMetrics(registry: prometheus.registry, dogStatsD: dogStatsD,
                            prometheusAddress: try prometheusBind.map { try Self.address($0, flag: "--prometheus-bind") })
    }

    /// The settings, one `flag = value` line each, for `--print-config`.
    var configurationLines: [(String, String)] {
        [("dogstatsd", dogstatsd ?? "(none)"), ("dogstatsd-tag", dogstatsdTags.isEmpty ? "(none)" : dogstatsdTags.joined(separator: ", ")),
         ("prometheus-bind", prometheusBind ?? "(none: /metrics on the images' listener only)"), ("prometheus-namespace", prometheusNamespace ?? "(none)")]
    }
}

/// The metrics `imago serve` keeps: the Prometheus registry, and what runs beside the server.
struct ServeMetrics {
    let registry: PrometheusCollectorRegistry
    let dogStatsD: DogStatsDMetricsFactory?
    let prometheusAddress: (host: String, port: Int)?

    /// GET /metrics: the registry in Prometheus's text format.
    static func response(_ registry: PrometheusCollectorRegistry) -> Response {
        var bytes: [UInt8] = []
        registry.emit(into: &bytes)
        return Response(status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
                        body: ResponseBody(byteBuffer: ByteBuffer(bytes: bytes)))
    }

    /// The services to run before the server's (so they stop after it):
    /// the DogStatsD flusher, and the listener of `--prometheus-bind`,
    /// which answers GET /metrics only and logs where it listens.
    func services(logger: Logger) -> [any Service] {
        var services: [any Service] = dogStatsD.map { [DogStatsDFlusher(factory: $0)] } ?? []
        if let address = prometheusAddress {
            let (host, port) = address
            let router = Router()
            let registry = registry
            router.get("/metrics") { _, _ in Self.response(registry) }
            services.append(Application(
                router: router,
                configuration: .init(address: .hostname(host, port: port)),
                onServerRunning: { channel in
                    let shown = host.contains(":") ? "[\(host)]" : host
                    logger.info("metrics listening on http://\(shown):\(channel.localAddress?.port ?? port)/metrics")
                },
                logger: logger
            ))
        }
        return services
    }
}
