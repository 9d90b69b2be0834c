import Foundation

/// `imago serve`'s flags from the environment: `IMAGO_<FLAG>` for every
/// flag (`IMAGO_PORT`, `IMAGO_AUTO_WEBP=true`...), and imgproxy's own
/// variables for the settings both servers share, so that a team switches
/// by swapping the binary and keeping its environment.
///
/// The environment is turned into flags placed before the command line's
/// own, and only for flags the command line does not give: a flag given
/// wins over `IMAGO_*`, which wins over `IMGPROXY_*`. The flags then go
/// through the same parsing and checks.
enum ServeEnvironment {
    /// What a flag takes.
    enum Kind {
        /// A value (`--port 8080`).
        case option
        /// A value that may be given several times (`--preset`); a
        /// variable holds a comma-separated list.
        case repeated
        /// No value (`--auto-webp`); the variable's truth turns it on.
        case flag
    }

    /// Every flag of `imago serve`, by its long name.
    static let flags: [String: Kind] = [
        "host": .option, "port": .option, "key": .repeated, "salt": .repeated, "unsigned": .flag,
        "secret": .option, "trusted-signature": .repeated, "allowed-option": .repeated, "allow-origin": .option, "path-prefix": .option, "health-check-path": .option, "server-name": .option, "base-url": .option, "url-replacements": .option, "base64-url-includes-filename": .flag,
        "arguments-separator": .option, "enable-client-hints": .flag, "skip-processing-formats": .option, "always-rasterize-svg": .flag, "head-renders": .option,
        "allow-host": .repeated, "allow-private-networks": .flag,
        "allow-loopback-sources": .flag, "allow-private-sources": .flag, "allow-link-local-sources": .flag, "local-root": .option, "cache-dir": .option,
        "s3-assume-role-arn": .option, "s3-assume-role-external-id": .option, "s3-allowed-bucket": .repeated, "s3-denied-bucket": .repeated, "gcs-allowed-bucket": .repeated, "gcs-denied-bucket": .repeated,
        "source-url-query-separator": .option,
        "use-s3": .flag, "s3-endpoint": .option, "s3-region": .option, "use-gcs": .flag, "gcs-endpoint": .option, "result-store": .option, "result-store-timeout": .option,
        "no-cache": .flag, "workers": .option, "max-queue": .option, "signature-size": .option, "timeout": .option, "read-request-timeout": .option,
        "etag": .option, "etag-hash": .option, "etag-buster": .option, "last-modified": .option, "last-modified-buster": .option,
        "cache-control-passthrough": .flag, "error-cache-control": .option,
        "keep-alive-timeout": .option, "max-clients": .option, "max-memory": .option, "malloc": .option, "max-downloads-per-host": .option, "host-slot-wait": .option, "ttl": .option, "quality": .option,
        "max-src-resolution": .option, "format-quality": .option, "max-src-file-size": .option,
        "svg-rasterizer": .option, "svg-rasterizer-timeout": .option, "svg-rasterizer-memory": .option,
        "png-unlimited": .flag, "svg-unlimited": .flag,
        "auto-webp": .flag, "auto-avif": .flag, "auto-jxl": .flag, "enforce-webp": .flag, "enforce-avif": .flag, "enforce-jxl": .flag,
        "preset": .repeated, "presets-path": .option, "only-presets": .flag, "allow-security-options": .flag,
        "watermark-path": .option, "watermark-url": .option, "watermark-data": .option, "watermark-opacity": .option,
        "strip-metadata": .option, "keep-copyright": .option, "strip-color-profile": .option, "auto-rotate": .option,
        "enforce-thumbnail": .flag, "preferred-formats": .option, "sanitize-svg": .option, "preserve-hdr": .flag, "max-result-dimension": .option, "max-animation-frame-resolution": .option,
        "jpeg-progressive": .flag, "png-interlaced": .flag, "png-quantize": .flag, "png-quantization-colors": .option, "webp-preset": .option,
        "webp-effort": .option, "avif-speed": .option, "jxl-effort": .option,
        "bind": .option, "network": .option, "so-reuseport": .flag, "write-response-timeout": .option, "debug-headers": .flag, "canonical-header": .flag,
        "development-errors": .flag, "cookie-passthrough": .flag, "cookie-passthrough-all": .flag, "cookie-base-url": .option,
        "fallback-image-path": .option, "fallback-image-url": .option, "fallback-image-data": .option, "fallback-image-status": .option, "fallback-image-ttl": .option,
        "max-animation-frames": .option, "drain-delay": .option, "drain-timeout": .option, "log-buffer": .option,
        "log-level": .option, "otlp": .flag, "otlp-endpoint": .option, "otlp-protocol": .option, "print-config": .flag,
        "otlp-metrics": .flag, "otlp-logs": .flag, "otlp-propagate-external": .flag,
        // Fetching sources (ServeFetchOptions).
        "user-agent": .option, "download-timeout": .option, "max-redirects": .option, "client-keep-alive-timeout": .option,
        "ignore-ssl-verification": .flag,
        // Metrics (ServeMetricsOptions).
        "dogstatsd": .option, "dogstatsd-tag": .repeated, "prometheus-bind": .option, "prometheus-namespace": .option,
    ]

    /// imgproxy's variables and the flag each sets; `IMGPROXY_BIND`,
    /// `IMGPROXY_ALLOWED_SOURCES` and the private-address switches are read apart.
    static let imgproxy: [String: String] = [
        "IMGPROXY_KEY": "key", "IMGPROXY_SALT": "salt", "IMGPROXY_SECRET": "secret", "IMGPROXY_TRUSTED_SIGNATURES": "trusted-signature",
        "IMGPROXY_ALLOWED_PROCESSING_OPTIONS": "allowed-option", "IMGPROXY_ALLOW_ORIGIN": "allow-origin",
        "IMGPROXY_PATH_PREFIX": "path-prefix", "IMGPROXY_ENABLE_CLIENT_HINTS": "enable-client-hints",
        "IMGPROXY_SKIP_PROCESSING_FORMATS": "skip-processing-formats", "IMGPROXY_ALWAYS_RASTERIZE_SVG": "always-rasterize-svg", "IMGPROXY_BASE_URL": "base-url", "IMGPROXY_URL_REPLACEMENTS": "url-replacements",
        "IMGPROXY_BASE64_URL_INCLUDES_FILENAME": "base64-url-includes-filename", "IMGPROXY_ARGUMENTS_SEPARATOR": "arguments-separator", "IMGPROXY_HEALTH_CHECK_PATH": "health-check-path", "IMGPROXY_TTL": "ttl", "IMGPROXY_QUALITY": "quality", "IMGPROXY_FORMAT_QUALITY": "format-quality",
        "IMGPROXY_MAX_SRC_RESOLUTION": "max-src-resolution", "IMGPROXY_MAX_SRC_FILE_SIZE": "max-src-file-size",
        "IMGPROXY_LOCAL_FILESYSTEM_ROOT": "local-root", "IMGPROXY_WORKERS": "workers", "IMGPROXY_CONCURRENCY": "workers",
        "IMGPROXY_REQUESTS_QUEUE_SIZE": "max-queue", "IMGPROXY_SIGNATURE_SIZE": "signature-size", "IMGPROXY_TIMEOUT": "timeout",
        "IMGPROXY_READ_REQUEST_TIMEOUT": "read-request-timeout", "IMGPROXY_KEEP_ALIVE_TIMEOUT": "keep-alive-timeout",
        "IMGPROXY_MAX_CLIENTS": "max-clients", "IMGPROXY_MALLOC": "malloc",
        "IMGPROXY_ETAG_ENABLED": "etag", "IMGPROXY_USE_ETAG": "etag", "IMGPROXY_ETAG_BUSTER": "etag-buster",
        "IMGPROXY_LAST_MODIFIED_ENABLED": "last-modified", "IMGPROXY_USE_LAST_MODIFIED": "last-modified",
        "IMGPROXY_LAST_MODIFIED_BUSTER": "last-modified-buster", "IMGPROXY_CACHE_CONTROL_PASSTHROUGH": "cache-control-passthrough",
        "IMGPROXY_USE_S3": "use-s3", "IMGPROXY_S3_ENDPOINT": "s3-endpoint", "IMGPROXY_S3_REGION": "s3-region",
        // IMGPROXY_GCS_KEY is not mapped: a service-account key cannot be used (Serve.gcsCredentials says so at start).
        "IMGPROXY_S3_ASSUME_ROLE_ARN": "s3-assume-role-arn", "IMGPROXY_S3_ASSUME_ROLE_EXTERNAL_ID": "s3-assume-role-external-id",
        "IMGPROXY_S3_ALLOWED_BUCKETS": "s3-allowed-bucket", "IMGPROXY_S3_DENIED_BUCKETS": "s3-denied-bucket",
        "IMGPROXY_GCS_ALLOWED_BUCKETS": "gcs-allowed-bucket", "IMGPROXY_GCS_DENIED_BUCKETS": "gcs-denied-bucket",
        "IMGPROXY_USE_GCS": "use-gcs", "IMGPROXY_GCS_ENDPOINT": "gcs-endpoint",
        "IMGPROXY_ENABLE_WEBP_DETECTION": "auto-webp", "IMGPROXY_AUTO_WEBP": "auto-webp", "IMGPROXY_ENFORCE_WEBP": "enforce-webp",
        "IMGPROXY_ENABLE_AVIF_DETECTION": "auto-avif", "IMGPROXY_AUTO_AVIF": "auto-avif", "IMGPROXY_ENFORCE_AVIF": "enforce-avif",
        "IMGPROXY_AUTO_JXL": "auto-jxl", "IMGPROXY_ENFORCE_JXL": "enforce-jxl",
        "IMGPROXY_PRESETS": "preset", "IMGPROXY_PRESETS_PATH": "presets-path", "IMGPROXY_ONLY_PRESETS": "only-presets",
        "IMGPROXY_ALLOW_SECURITY_OPTIONS": "allow-security-options",
        "IMGPROXY_WATERMARK_PATH": "watermark-path", "IMGPROXY_WATERMARK_URL": "watermark-url",
        "IMGPROXY_WATERMARK_DATA": "watermark-data", "IMGPROXY_WATERMARK_OPACITY": "watermark-opacity",
        "IMGPROXY_STRIP_METADATA": "strip-metadata", "IMGPROXY_KEEP_COPYRIGHT": "keep-copyright",
        "IMGPROXY_STRIP_COLOR_PROFILE": "strip-color-profile", "IMGPROXY_AUTO_ROTATE": "auto-rotate",
        "IMGPROXY_ENFORCE_THUMBNAIL": "enforce-thumbnail", "IMGPROXY_PREFERRED_FORMATS": "preferred-formats",
        "IMGPROXY_SANITIZE_SVG": "sanitize-svg", "IMGPROXY_PRESERVE_HDR": "preserve-hdr",
        "IMGPROXY_PNG_UNLIMITED": "png-unlimited", "IMGPROXY_SVG_UNLIMITED": "svg-unlimited",
        "IMGPROXY_MAX_RESULT_DIMENSION": "max-result-dimension", "IMGPROXY_MAX_ANIMATION_FRAME_RESOLUTION": "max-animation-frame-resolution",
        "IMGPROXY_JPEG_PROGRESSIVE": "jpeg-progressive", "IMGPROXY_PNG_INTERLACED": "png-interlaced", "IMGPROXY_PNG_QUANTIZE": "png-quantize",
        "IMGPROXY_PNG_QUANTIZATION_COLORS": "png-quantization-colors", "IMGPROXY_WEBP_PRESET": "webp-preset", "IMGPROXY_WEBP_EFFORT": "webp-effort",
        "IMGPROXY_AVIF_SPEED": "avif-speed", "IMGPROXY_JXL_EFFORT": "jxl-effort",
        "IMGPROXY_ALLOW_LOOPBACK_SOURCE_ADDRESSES": "allow-loopback-sources", "IMGPROXY_ALLOW_PRIVATE_SOURCE_ADDRESSES": "allow-private-sources",
        "IMGPROXY_ALLOW_LINK_LOCAL_SOURCE_ADDRESSES": "allow-link-local-sources",
        "IMGPROXY_COOKIE_PASSTHROUGH": "cookie-passthrough", "IMGPROXY_COOKIE_PASSTHROUGH_ALL": "cookie-passthrough-all",
        "IMGPROXY_COOKIE_BASE_URL": "cookie-base-url",
        "IMGPROXY_NETWORK": "network", "IMGPROXY_SO_REUSEPORT": "so-reuseport", "IMGPROXY_WRITE_RESPONSE_TIMEOUT": "write-response-timeout",
        "IMGPROXY_GRACEFUL_STOP_TIMEOUT": "drain-timeout", "IMGPROXY_ENABLE_DEBUG_HEADERS": "debug-headers",
        "IMGPROXY_SET_CANONICAL_HEADER": "canonical-header", "IMGPROXY_DEVELOPMENT_ERRORS_MODE": "development-errors",
        "IMGPROXY_FALLBACK_IMAGE_PATH": "fallback-image-path", "IMGPROXY_FALLBACK_IMAGE_URL": "fallback-image-url",
        "IMGPROXY_FALLBACK_IMAGE_DATA": "fallback-image-data", "IMGPROXY_FALLBACK_IMAGE_HTTP_CODE": "fallback-image-status",
        "IMGPROXY_FALLBACK_IMAGE_TTL": "fallback-image-ttl",
        "IMGPROXY_MAX_ANIMATION_FRAMES": "max-animation-frames", "IMGPROXY_LOG_LEVEL": "log-level",
        "IMGPROXY_OPEN_TELEMETRY_ENABLE": "otlp", "IMGPROXY_OPEN_TELEMETRY_PROPAGATE_EXTERNAL": "otlp-propagate-external",
        "IMGPROXY_USER_AGENT": "user-agent", "IMGPROXY_DOWNLOAD_TIMEOUT": "download-timeout", "IMGPROXY_MAX_REDIRECTS": "max-redirects",
        "IMGPROXY_CLIENT_KEEP_ALIVE_TIMEOUT": "client-keep-alive-timeout", "IMGPROXY_IGNORE_SSL_VERIFICATION": "ignore-ssl-verification",
        // Metrics (ServeMetricsOptions); IMGPROXY_DATADOG_ENABLE_ADDITIONAL_METRICS is read apart.
        "IMGPROXY_PROMETHEUS_BIND": "prometheus-bind", "IMGPROXY_PROMETHEUS_NAMESPACE": "prometheus-namespace",
    ]

    /// imgproxy variables read apart from ``imgproxy``.
    static let readApart: Set<String> = [
        "IMGPROXY_BIND", "IMGPROXY_ALLOWED_SOURCES", "IMGPROXY_PRESETS_SEPARATOR", "IMGPROXY_SOURCE_URL_QUERY_SEPARATOR",
        "IMGPROXY_OPEN_TELEMETRY_ENDPOINT", "IMGPROXY_OPEN_TELEMETRY_PROTOCOL", "IMGPROXY_OPEN_TELEMETRY_GRPC_INSECURE",
        "IMGPROXY_OPEN_TELEMETRY_SERVICE_NAME", "IMGPROXY_OPEN_TELEMETRY_ENABLE_METRICS", "IMGPROXY_OPEN_TELEMETRY_ENABLE_LOGS",
        // Metrics: --dogstatsd and --dogstatsd-tag from DD_* (below).
        "IMGPROXY_DATADOG_ENABLE_ADDITIONAL_METRICS",
    ]

    /// `arguments` (after `serve`) with the environment's flags before them.
    ///
    /// - Returns: The arguments, and the `IMGPROXY_*` variables that were
    ///   set but mean nothing to `imago serve` (to warn about).
    static func arguments(_ arguments: [String], environment: [String: String]) -> (arguments: [String], ignored: [String]) {
        let given = Set(arguments.compactMap { argument -> String? in
            guard argument.hasPrefix("--") else { return nil }
            return String(argument.dropFirst(2).prefix { $0 != "=" })
        })
        var chosen: [String: [String]] = [:]   // flag -> values ("" for a flag)
        func set(_ name: String, _ raw: String, separator: String = ",", emptyIsUnset: Bool = true) {
            // An empty imgproxy variable counts as unset, as in imgproxy 4; an empty IMAGO_* value is a value.
            guard !raw.isEmpty || !emptyIsUnset, let kind = flags[name], !given.contains(name), chosen[name] == nil else { return }
            switch kind {
            case .option: chosen[name] = [raw]
            case .repeated: chosen[name] = raw.components(separatedBy: separator).map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
            case .flag: if isTrue(raw) { chosen[name] = [""] }
            }
        }
        // IMAGO_* first: they win over imgproxy's names.
        for (name, _) in flags {
            let variable = "IMAGO_" + name.uppercased().replacingOccurrences(of: "-", with: "_")
            if let raw = environment[variable] { set(name, raw, emptyIsUnset: false) }
        }
        for (variable, name) in imgproxy.sorted(by: { $0.key < $1.key }) {
            // IMGPROXY_PRESETS is split by IMGPROXY_PRESETS_SEPARATOR (read as it is), so values may hold commas.
            let separator = variable == "IMGPROXY_PRESETS" ? (environment["IMGPROXY_PRESETS_SEPARATOR"].flatMap { $0.isEmpty ? nil : $0 } ?? ",") : ","
            if let raw = environment[variable] { set(name, raw, separator: separator) }
        }
        // HOST:PORT becomes --host and --port; anything else (a socket path
        // for IMGPROXY_NETWORK=unix, or a value that is not HOST:PORT) goes
        // to --bind, which reads it, or refuses it so the server does not start.
        if let bind = environment["IMGPROXY_BIND"], !bind.isEmpty {
            let network = environment["IMGPROXY_NETWORK"]?.lowercased() ?? "tcp"
            if network != "unix", let colon = bind.lastIndex(of: ":"), Int(bind[bind.index(after: colon)...]) != nil {
                let host = bind[..<colon].trimmingCharacters(in: CharacterSet(charactersIn: "[]"))
                set("host", host.isEmpty ? (network == "tcp6" ? "::" : "0.0.0.0") : host)
                set("port", String(bind[bind.index(after: colon)...]))
            } else {
                set("bind", bind)
            }
        }
        // Set but empty means no separator in imgproxy, not unset.
        if let separator = environment["IMGPROXY_SOURCE_URL_QUERY_SEPARATOR"] {
            set("source-url-query-separator", separator, emptyIsUnset: false)
        }
        if let sources = environment["IMGPROXY_ALLOWED_SOURCES"] {
            // URL prefixes (`https://images.example.com/`, `https://*.cdn.example.com/`): their hosts.
            let hosts = sources.split(separator: ",").compactMap { item -> String? in
                let text = item.trimmingCharacters(in: .whitespaces)
                guard let schemeEnd = text.range(of: "://") else { return nil }
                let host = text[schemeEnd.upperBound...].prefix { $0 != "/" && $0 != ":" }
                return host.isEmpty ? nil : String(host)
            }
            if !hosts.isEmpty { set("allow-host", hosts.joined(separator: ",")) }
        }
        // Each of imgproxy's three address switches is a flag of its own.

        // imgproxy's OpenTelemetry: IMGPROXY_OPEN_TELEMETRY_ENABLE (above), or
        // imgproxy 3's endpoint (host:port, which alone turned tracing on),
        // unless the standard variables name one; then gRPC, imgproxy's
        // default, unless a protocol is named (IMGPROXY_OPEN_TELEMETRY_PROTOCOL:
        // grpc, http or https). IMGPROXY_OPEN_TELEMETRY_SERVICE_NAME is read
        // where tracing starts.
        let standardEndpoint = ["OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_ENDPOINT"].contains { !(environment[$0] ?? "").isEmpty }
        let legacyProtocol = environment["IMGPROXY_OPEN_TELEMETRY_PROTOCOL"].flatMap { $0.isEmpty ? nil : $0.lowercased() }
        var imgproxyTraces = environment["IMGPROXY_OPEN_TELEMETRY_ENABLE"].map(isTrue) ?? false
        if let endpoint = environment["IMGPROXY_OPEN_TELEMETRY_ENDPOINT"], !endpoint.isEmpty, !standardEndpoint {
            let insecure = environment["IMGPROXY_OPEN_TELEMETRY_GRPC_INSECURE"].map(isTrue) ?? true
            let secure = legacyProtocol == "https" || ((legacyProtocol ?? "grpc") == "grpc" && !insecure)
            set("otlp-endpoint", endpoint.contains("://") ? endpoint : (secure ? "https://" : "http://") + endpoint)
            imgproxyTraces = true
        }
        let standardProtocol = ["OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL"].contains { !(environment[$0] ?? "").isEmpty }
        if imgproxyTraces, !standardProtocol { set("otlp-protocol", legacyProtocol ?? "grpc") }
        // Metrics and logs over OTLP: with imgproxy's tracing on, as imgproxy
        // reads them (without it, imgproxy exports nothing, and neither does this).
        if imgproxyTraces {
            if environment["IMGPROXY_OPEN_TELEMETRY_ENABLE_METRICS"].map(isTrue) ?? false { set("otlp-metrics", "true") }
            if environment["IMGPROXY_OPEN_TELEMETRY_ENABLE_LOGS"].map(isTrue) ?? false { set("otlp-logs", "true") }
        }

        // imgproxy's DogStatsD metrics: the agent at DD_AGENT_HOST (default
        // localhost) and DD_DOGSTATSD_PORT (default 8125), and DD_SERVICE,
        // DD_ENV and DD_VERSION as tags when set.
        if environment["IMGPROXY_DATADOG_ENABLE_ADDITIONAL_METRICS"].map(isTrue) ?? false {
            func value(_ name: String) -> String? { environment[name].flatMap { $0.isEmpty ? nil : $0 } }
            let host = value("DD_AGENT_HOST") ?? "localhost"
            set("dogstatsd", (host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host) + ":" + (value("DD_DOGSTATSD_PORT") ?? "8125"))
            let tags = [("service", "DD_SERVICE"), ("env", "DD_ENV"), ("version", "DD_VERSION")].compactMap { tag, name in value(name).map { tag + ":" + $0 } }
            if !tags.isEmpty { set("dogstatsd-tag", tags.joined(separator: ",")) }
        }

        var prefix: [String] = []
        for name in chosen.keys.sorted() {
            for value in chosen[name]! {
                prefix.append("--" + name)
                if !value.isEmpty || flags[name] != .flag { prefix.append(value) }
            }
        }
        let ignored = environment.keys.filter { $0.hasPrefix("IMGPROXY_") && imgproxy[$0] == nil && !readApart.contains($0) }.sorted()
        return (prefix + arguments, ignored)
    }

    /// imgproxy's and Go's spellings of true.
    static func isTrue(_ text: String) -> Bool {
        ["1", "t", "true", "yes", "on"].contains(text.lowercased())
    }
}
