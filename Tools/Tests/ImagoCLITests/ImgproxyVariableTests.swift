import Foundation
import CommandLineSupport
@testable import ImagoCLI
import Testing

/// Every `IMGPROXY_*` variable `imago serve` reads, one row each: the
/// variable with a value that is not the default, and the effective setting
/// it must produce (as `--print-config` shows it). A variable added to
/// ``ServeEnvironment`` without a row here fails
/// ``everyReadVariableHasARow()``; a row whose setting the variable no
/// longer changes fails ``eachVariableChangesItsSetting(_:)``.
///
/// What each setting then does is tested where it is built (the in-process
/// server tests, ServeTests, the ported imgproxy tables); this table proves
/// the variable reaches it.
@Suite struct ImgproxyVariableTests {
    struct Row: CustomTestStringConvertible, Sendable {
        /// The variables set (the first is the one under test; others are what it needs beside it).
        let environment: [(String, String)]
        /// `--print-config` lines that must appear, none of which is a default.
        let expected: [String]
        var variable: String { environment[0].0 }
        var testDescription: String { variable }

        /// Where the variable's effect is checked when `--print-config` cannot show it.
        let testedBy: String?

        init(_ variable: String, _ value: String, _ expected: String..., with companions: [(String, String)] = [], testedBy: String? = nil) {
            self.environment = [(variable, value)] + companions
            self.expected = expected
            self.testedBy = testedBy
        }
    }

    /// A folder that exists, for the local root.
    static let folder = FileManager.default.temporaryDirectory.path
    /// A presets file that exists and reads as empty (nothing written, nothing left behind).
    static let presetsFile = "/dev/null"

    static let rows: [Row] = [
        // Server.
        Row("IMGPROXY_BIND", "0.0.0.0:9090", "host = 0.0.0.0", "port = 9090"),
        Row("IMGPROXY_NETWORK", "unix", "network = unix", "bind = /tmp/imago-test.sock", with: [("IMGPROXY_BIND", "/tmp/imago-test.sock")]),
        Row("IMGPROXY_SO_REUSEPORT", "true", "so-reuseport = true"),
        Row("IMGPROXY_WORKERS", "3", "workers = 3"),
        Row("IMGPROXY_CONCURRENCY", "5", "workers = 5"),
        Row("IMGPROXY_MALLOC", "jemalloc", "malloc = jemalloc"),
        Row("IMGPROXY_REQUESTS_QUEUE_SIZE", "17", "max-queue = 17"),
        Row("IMGPROXY_MAX_CLIENTS", "99", "max-clients = 99"),
        Row("IMGPROXY_TIMEOUT", "7", "timeout = 7.0"),
        Row("IMGPROXY_READ_REQUEST_TIMEOUT", "4", "read-request-timeout = 4.0"),
        Row("IMGPROXY_WRITE_RESPONSE_TIMEOUT", "6", "write-response-timeout = 6.0"),
        Row("IMGPROXY_KEEP_ALIVE_TIMEOUT", "3", "keep-alive-timeout = 3.0"),
        Row("IMGPROXY_GRACEFUL_STOP_TIMEOUT", "12", "drain-timeout = 12.0"),
        Row("IMGPROXY_PATH_PREFIX", "/img", "path-prefix = /img"),
        Row("IMGPROXY_HEALTH_CHECK_PATH", "/up", "health-check-path = /up"),
        Row("IMGPROXY_ALLOW_ORIGIN", "https://app.example.com", "allow-origin = https://app.example.com"),
        Row("IMGPROXY_ENABLE_DEBUG_HEADERS", "true", "debug-headers = true"),
        Row("IMGPROXY_SET_CANONICAL_HEADER", "true", "canonical-header = true"),
        Row("IMGPROXY_DEVELOPMENT_ERRORS_MODE", "true", "development-errors = true"),
        Row("IMGPROXY_LOG_LEVEL", "debug", "log-level = debug"),
        // Security.
        Row("IMGPROXY_KEY", "6b6579", "key = ***", with: [("IMGPROXY_SALT", "73616c74")]),
        Row("IMGPROXY_SALT", "73616c74", "salt = ***", with: [("IMGPROXY_KEY", "6b6579")]),
        Row("IMGPROXY_SECRET", "s3cret", "secret = ***"),
        Row("IMGPROXY_SIGNATURE_SIZE", "8", "signature-size = 8"),
        Row("IMGPROXY_TRUSTED_SIGNATURES", "abc,def", "trusted-signature = ***, ***"),
        Row("IMGPROXY_ALLOWED_PROCESSING_OPTIONS", "rs,q", "allowed-option = rs, q"),
        Row("IMGPROXY_ALLOWED_SOURCES", "https://images.example.com/", "allow-host = images.example.com"),
        Row("IMGPROXY_ALLOW_LOOPBACK_SOURCE_ADDRESSES", "true", "allow-loopback-sources = true"),
        Row("IMGPROXY_ALLOW_PRIVATE_SOURCE_ADDRESSES", "true", "allow-private-sources = true"),
        Row("IMGPROXY_ALLOW_LINK_LOCAL_SOURCE_ADDRESSES", "true", "allow-link-local-sources = true"),
        Row("IMGPROXY_ALLOW_SECURITY_OPTIONS", "true", "allow-security-options = true"),
        Row("IMGPROXY_MAX_SRC_RESOLUTION", "12.5", "max-src-resolution = 12.5"),
        Row("IMGPROXY_MAX_SRC_FILE_SIZE", "1000000", "max-src-file-size = 1000000"),
        Row("IMGPROXY_MAX_ANIMATION_FRAMES", "24", "max-animation-frames = 24"),
        Row("IMGPROXY_MAX_ANIMATION_FRAME_RESOLUTION", "2.5", "max-animation-frame-resolution = 2.5"),
        Row("IMGPROXY_MAX_RESULT_DIMENSION", "4000", "max-result-dimension = 4000"),
        Row("IMGPROXY_PNG_UNLIMITED", "true", "png-unlimited = true"),
        Row("IMGPROXY_SVG_UNLIMITED", "true", "svg-unlimited = true"),
        Row("IMGPROXY_COOKIE_PASSTHROUGH", "true", "cookie-passthrough = true"),
        Row("IMGPROXY_COOKIE_PASSTHROUGH_ALL", "true", "cookie-passthrough-all = true"),
        Row("IMGPROXY_COOKIE_BASE_URL", "https://example.com/", "cookie-base-url = https://example.com/"),
        // URLs.
        Row("IMGPROXY_BASE_URL", "https://origin.example.com/", "base-url = https://origin.example.com/"),
        Row("IMGPROXY_URL_REPLACEMENTS", "^s3://=https://s3.example.com/", "url-replacements = ^s3://=https://s3.example.com/"),
        Row("IMGPROXY_BASE64_URL_INCLUDES_FILENAME", "true", "base64-url-includes-filename = true"),
        Row("IMGPROXY_ARGUMENTS_SEPARATOR", ";", "arguments-separator = ;"),
        // Caching.
        Row("IMGPROXY_TTL", "60", "ttl = 60"),
        Row("IMGPROXY_USE_ETAG", "false", "etag = false"),
        Row("IMGPROXY_ETAG_ENABLED", "false", "etag = false"),
        Row("IMGPROXY_ETAG_BUSTER", "b1", "etag-buster = b1"),
        Row("IMGPROXY_USE_LAST_MODIFIED", "false", "last-modified = false"),
        Row("IMGPROXY_LAST_MODIFIED_ENABLED", "false", "last-modified = false"),
        Row("IMGPROXY_LAST_MODIFIED_BUSTER", "2026-01-01T00:00:00Z", "last-modified-buster = 2026-01-01T00:00:00Z"),
        Row("IMGPROXY_CACHE_CONTROL_PASSTHROUGH", "true", "cache-control-passthrough = true"),
        Row("IMGPROXY_FALLBACK_IMAGE_DATA", "aGVsbG8=", "fallback-image-data = ***"),
        Row("IMGPROXY_FALLBACK_IMAGE_PATH", "/srv/fallback.png", "fallback-image-path = /srv/fallback.png"),
        Row("IMGPROXY_FALLBACK_IMAGE_URL", "https://example.com/fallback.png", "fallback-image-url = https://example.com/fallback.png"),
        Row("IMGPROXY_FALLBACK_IMAGE_HTTP_CODE", "404", "fallback-image-status = 404", with: [("IMGPROXY_FALLBACK_IMAGE_DATA", "aGVsbG8=")]),
        Row("IMGPROXY_FALLBACK_IMAGE_TTL", "30", "fallback-image-ttl = 30", with: [("IMGPROXY_FALLBACK_IMAGE_DATA", "aGVsbG8=")]),
        // Compression.
        Row("IMGPROXY_QUALITY", "70", "quality = 70"),
        Row("IMGPROXY_FORMAT_QUALITY", "webp=60,avif=50", "format-quality = avif=50,jxl=77,webp=60"),
        Row("IMGPROXY_JPEG_PROGRESSIVE", "true", "jpeg-progressive = true"),
        Row("IMGPROXY_PNG_INTERLACED", "true", "png-interlaced = true"),
        Row("IMGPROXY_PNG_QUANTIZE", "true", "png-quantize = true"),
        Row("IMGPROXY_PNG_QUANTIZATION_COLORS", "64", "png-quantization-colors = 64"),
        Row("IMGPROXY_WEBP_PRESET", "photo", "webp-preset = photo"),
        Row("IMGPROXY_WEBP_EFFORT", "6", "webp-effort = 6"),
        Row("IMGPROXY_AVIF_SPEED", "4", "avif-speed = 4"),
        Row("IMGPROXY_JXL_EFFORT", "7", "jxl-effort = 7"),
        // Formats.
        Row("IMGPROXY_AUTO_WEBP", "true", "auto-webp = true"),
        Row("IMGPROXY_ENABLE_WEBP_DETECTION", "true", "auto-webp = true"),
        Row("IMGPROXY_ENFORCE_WEBP", "true", "enforce-webp = true"),
        Row("IMGPROXY_AUTO_AVIF", "true", "auto-avif = true"),
        Row("IMGPROXY_ENABLE_AVIF_DETECTION", "true", "auto-avif = true"),
        Row("IMGPROXY_ENFORCE_AVIF", "true", "enforce-avif = true"),
        Row("IMGPROXY_AUTO_JXL", "true", "auto-jxl = true"),
        Row("IMGPROXY_ENFORCE_JXL", "true", "enforce-jxl = true"),
        Row("IMGPROXY_PREFERRED_FORMATS", "png,webp", "preferred-formats = png,webp"),
        Row("IMGPROXY_SKIP_PROCESSING_FORMATS", "svg,gif", "skip-processing-formats = svg,gif"),
        Row("IMGPROXY_ALWAYS_RASTERIZE_SVG", "true", "always-rasterize-svg = true"),
        Row("IMGPROXY_SANITIZE_SVG", "false", "sanitize-svg = false"),
        Row("IMGPROXY_ENABLE_CLIENT_HINTS", "true", "enable-client-hints = true"),
        // Image defaults.
        Row("IMGPROXY_STRIP_METADATA", "false", "strip-metadata = false"),
        Row("IMGPROXY_KEEP_COPYRIGHT", "false", "keep-copyright = false"),
        Row("IMGPROXY_STRIP_COLOR_PROFILE", "false", "strip-color-profile = false"),
        Row("IMGPROXY_AUTO_ROTATE", "false", "auto-rotate = false"),
        Row("IMGPROXY_ENFORCE_THUMBNAIL", "true", "enforce-thumbnail = true"),
        Row("IMGPROXY_PRESERVE_HDR", "true", "preserve-hdr = true"),
        // Presets.
        Row("IMGPROXY_PRESETS", "thumb=rs:fill:64:64", "preset = thumb=rs:fill:64:64"),
        // Without the separator, "a=w:10;b=h:4" is one preset, which does not parse.
        Row("IMGPROXY_PRESETS_SEPARATOR", ";", "preset = a=w:10, b=h:4", with: [("IMGPROXY_PRESETS", "a=w:10;b=h:4")]),
        Row("IMGPROXY_PRESETS_PATH", presetsFile, "presets-path = \(presetsFile)"),
        Row("IMGPROXY_ONLY_PRESETS", "true", "only-presets = true"),
        // Watermark.
        Row("IMGPROXY_WATERMARK_DATA", "aGVsbG8=", "watermark-data = ***"),
        Row("IMGPROXY_WATERMARK_PATH", "/srv/mark.png", "watermark-path = /srv/mark.png"),
        Row("IMGPROXY_WATERMARK_URL", "https://example.com/mark.png", "watermark-url = https://example.com/mark.png"),
        Row("IMGPROXY_WATERMARK_OPACITY", "0.5", "watermark-opacity = 0.5"),
        // Sources.
        Row("IMGPROXY_LOCAL_FILESYSTEM_ROOT", folder, "local-root = \(folder)"),
        Row("IMGPROXY_USE_S3", "true", "use-s3 = true"),
        Row("IMGPROXY_S3_ENDPOINT", "http://127.0.0.1:9000", "s3-endpoint = http://127.0.0.1:9000", with: [("IMGPROXY_USE_S3", "true")]),
        Row("IMGPROXY_S3_REGION", "eu-west-1", "s3-region = eu-west-1", with: [("IMGPROXY_USE_S3", "true")]),
        Row("IMGPROXY_S3_ASSUME_ROLE_ARN", "arn:aws:iam::123456789012:role/reader", "s3-assume-role-arn = arn:aws:iam::123456789012:role/reader",
            with: [("IMGPROXY_USE_S3", "true")]),
        Row("IMGPROXY_S3_ASSUME_ROLE_EXTERNAL_ID", "thumbs", "s3-assume-role-external-id = ***", with: [("IMGPROXY_USE_S3", "true")]),
        Row("IMGPROXY_S3_ALLOWED_BUCKETS", "photos,avatars", "s3-allowed-bucket = photos, avatars", with: [("IMGPROXY_USE_S3", "true")]),
        Row("IMGPROXY_S3_DENIED_BUCKETS", "private", "s3-denied-bucket = private", with: [("IMGPROXY_USE_S3", "true")]),
        Row("IMGPROXY_GCS_ALLOWED_BUCKETS", "photos", "gcs-allowed-bucket = photos", with: [("IMGPROXY_USE_GCS", "true")]),
        Row("IMGPROXY_GCS_DENIED_BUCKETS", "private,backups", "gcs-denied-bucket = private, backups", with: [("IMGPROXY_USE_GCS", "true")]),
        // Empty is a value here: no separator (imgproxy reads it so).
        Row("IMGPROXY_SOURCE_URL_QUERY_SEPARATOR", "", "source-url-query-separator = (none)"),
        Row("IMGPROXY_USE_GCS", "true", "use-gcs = true"),
        Row("IMGPROXY_GCS_ENDPOINT", "http://127.0.0.1:4443", "gcs-endpoint = http://127.0.0.1:4443", with: [("IMGPROXY_USE_GCS", "true")]),
        Row("IMGPROXY_USER_AGENT", "thumbs/%current_version", "user-agent = thumbs/\(ImagoVersion.current)"),
        Row("IMGPROXY_DOWNLOAD_TIMEOUT", "8", "download-timeout = 8.0"),
        Row("IMGPROXY_MAX_REDIRECTS", "3", "max-redirects = 3"),
        Row("IMGPROXY_CLIENT_KEEP_ALIVE_TIMEOUT", "30", "client-keep-alive-timeout = 30.0"),
        Row("IMGPROXY_IGNORE_SSL_VERIFICATION", "true", "ignore-ssl-verification = true"),
        // Metrics and tracing.
        Row("IMGPROXY_PROMETHEUS_BIND", "127.0.0.1:9464", "prometheus-bind = 127.0.0.1:9464"),
        Row("IMGPROXY_PROMETHEUS_NAMESPACE", "imgproxy", "prometheus-namespace = imgproxy"),
        Row("IMGPROXY_DATADOG_ENABLE_ADDITIONAL_METRICS", "true", "dogstatsd = localhost:8125"),
        Row("IMGPROXY_OPEN_TELEMETRY_ENABLE", "true", "otlp = true"),
        Row("IMGPROXY_OPEN_TELEMETRY_ENABLE_METRICS", "true", "otlp-metrics = true", with: [("IMGPROXY_OPEN_TELEMETRY_ENABLE", "true")]),
        Row("IMGPROXY_OPEN_TELEMETRY_ENABLE_LOGS", "true", "otlp-logs = true", with: [("IMGPROXY_OPEN_TELEMETRY_ENABLE", "true")]),
        Row("IMGPROXY_OPEN_TELEMETRY_PROPAGATE_EXTERNAL", "true", "otlp-propagate-external = true"),
        Row("IMGPROXY_OPEN_TELEMETRY_ENDPOINT", "collector:4317", "otlp-endpoint = http://collector:4317"),
        Row("IMGPROXY_OPEN_TELEMETRY_PROTOCOL", "http", "otlp-protocol = http/protobuf",
            with: [("IMGPROXY_OPEN_TELEMETRY_ENDPOINT", "collector:4318")]),
        Row("IMGPROXY_OPEN_TELEMETRY_GRPC_INSECURE", "false", "otlp-endpoint = https://collector:4317",
            with: [("IMGPROXY_OPEN_TELEMETRY_ENDPOINT", "collector:4317")]),
        // The service name is not a setting --print-config shows: TracingTests'
        // imgproxy3 case exports a span to a real OTLP receiver and reads the name there.
        Row("IMGPROXY_OPEN_TELEMETRY_SERVICE_NAME", "thumbs", with: [("IMGPROXY_OPEN_TELEMETRY_ENABLE", "true")], testedBy: "TracingTests/imgproxy3"),
    ]

    /// `--print-config` for an environment, as `imago serve` reads it at start.
    static func configuration(_ environment: [String: String]) throws -> [String] {
        // Unsigned unless the environment gives a key (the two exclude each other).
        let given = environment["IMGPROXY_KEY"] == nil ? ["--unsigned"] : []
        let arguments = ServeEnvironment.arguments(given, environment: environment).arguments
        // A build without the OTLP exporter (the sanitizers') shows the endpoint with that note after it.
        return try Serve.parse(arguments).configurationLines().map { $0.replacingOccurrences(of: " (refused: built without the OTLP exporter)", with: "") }
    }

    /// `--print-config` with no variable set.
    static let defaults: Set<String>? = (try? configuration([:])).map(Set.init)

    @Test func everyReadVariableHasARow() {
        let read = Set(ServeEnvironment.imgproxy.keys).union(ServeEnvironment.readApart)
        let rows = Set(Self.rows.map(\.variable))
        #expect(rows.count == Self.rows.count, "a variable has two rows")
        #expect(read.subtracting(rows).isEmpty, "read but no row: \(read.subtracting(rows).sorted())")
        #expect(rows.subtracting(read).isEmpty, "a row for a variable not read: \(rows.subtracting(read).sorted())")
    }

    @Test(arguments: rows) func eachVariableChangesItsSetting(_ row: Row) throws {
        let defaults = try #require(Self.defaults)
        let lines = try Self.configuration(Dictionary(uniqueKeysWithValues: row.environment))
        #expect(!row.expected.isEmpty || row.testedBy != nil, "a row must name a setting or the test that checks it")
        for line in row.expected {
            #expect(!defaults.contains(line), "\(line) is the default: the row proves nothing")
            #expect(lines.contains(line), "\(row.variable) did not give \(line); got \(lines.filter { $0.hasPrefix(line.prefix { $0 != " " } + " ") })")
        }
        // The variable is read, not warned about.
        #expect(!ServeEnvironment.arguments([], environment: Dictionary(uniqueKeysWithValues: row.environment)).ignored.contains(row.variable))
    }
}
