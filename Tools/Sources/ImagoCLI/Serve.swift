import ArgumentParser
import CommandLineSupport
import Foundation
import Hummingbird
import Imago
import ImagoAsyncHTTPClient
import ImagoCodecs
import ImagoServer
import Logging
import Metrics
import Prometheus
import ServiceLifecycle

/// `imago serve`: the image server (``ImageServer``) on its own, with `/health`,
/// `/metrics` (Prometheus text), one log line per request on stderr, and a
/// graceful stop on SIGTERM or SIGINT.
struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Serve resized images from signed, imgproxy-style URLs.",
        discussion: """
        URLs: /SIGNATURE/OPTIONS.../plain/PERCENT-ENCODED-SOURCE[@EXT] or /SIGNATURE/OPTIONS.../BASE64URL-SOURCE[.EXT],
        where SIGNATURE = base64url(HMAC-SHA256(key, salt + path)) without padding. /SIGNATURE/info/plain/SOURCE describes \
        the source as JSON. Sources: http(s) URLs, s3://BUCKET/KEY (--use-s3), gs://BUCKET/KEY (--use-gcs), local:///PATH (--local-root). Also GET /health, GET /health/live, GET /health/ready (503 once a drain starts) and GET /metrics.
        Options follow imgproxy, with its sizes to the pixel: rs/resize, s/size, rt/resizing_type \
        (fit|fill|fill-down|force|auto), w, h, mw/min-width, mh/min-height, z/zoom, dpr, el/enlarge, \
        ex/extend and exar/extend_aspect_ratio (with a gravity), g/gravity (ce|no|so|ea|we|noea|nowe|soea|sowe \
        with X:Y offsets, sm, fp:X:Y), t/trim, c/crop (W:H[:GRAVITY], before resizing), pd/padding (CSS order, times dpr), \
        rot/rotate (multiples of 90), fl/flip, bg/background (R:G:B or hex), ar/auto_rotate, \
        mrd/max_result_dimension (with --allow-security-options), bl/blur, sh/sharpen, pix/pixelate, q/quality, \
        fq/format_quality, mb/max_bytes, f/format, pr/preset (--preset), cb/cachebuster, exp/expires, fn/filename, \
        att/return_attachment, wm/watermark (OPACITY:POSITION:X:Y:SCALE, the image of --watermark-*), skp/skip_processing (formats sent as they are), raw (the source streamed unchanged), sm/strip_metadata, kcr/keep_copyright, scp/strip_color_profile; \
        docs/server.md describes each. rs:fit and rs:fill give the pixels of `imago fetch --resize WxH` \
        and `--resize WxH --crop`. \
        Without a format in the URL (or JPEG XL, AVIF or WebP from --auto-jxl, --auto-avif, --auto-webp, --enforce-*): the source's format for JPEG, PNG, WebP and AVIF; \
        PNG for GIF; JPEG for HEIC and JPEG XL; PNG instead of JPEG for an image with alpha; \
        for an SVG source, its sanitised SVG (also with @svg or f:svg; rasterised for any other format). Without q: \
        jpeg 85, webp 80, avif 60, jxl 80. With --max-animation-frames above 1, animations stay animated as WebP, GIF or PNG (APNG): \
        GIF stays GIF, APNG stays PNG, animated WebP, AVIF and JPEG XL become WebP.
        Renders a JPEG and a PNG made in memory on each worker (about 15 ms), so the first requests find the codecs warm, \
        then prints "listening on http://HOST:PORT" once it accepts connections; stops cleanly on SIGTERM or SIGINT.
        """
    )

    @Option(help: "The address to listen on.")
    var host = "127.0.0.1"

    @Option(help: "The port to listen on (0: any free port).")
    var port = 8080

    @Option(name: .customLong("key"), help: "The signing key in hex; repeat with --salt for key rotation. Default: $IMAGO_KEY.")
    var keys: [String] = []

    @Option(name: .customLong("salt"), help: "The salt in hex, one per --key. Default: $IMAGO_SALT.")
    var salts: [String] = []

    @Flag(help: "Accept any signature segment (for development).")
    var unsigned = false

    @Option(name: .customLong("trusted-signature"), help: "A signature accepted as it is, whatever the path; repeatable (IMGPROXY_TRUSTED_SIGNATURES).")
    var trustedSignatures: [String] = []

    @Option(name: .customLong("allowed-option"), help: "An option URLs may name, as written (w and width are two); repeatable; presets' options are not checked. Default: any (IMGPROXY_ALLOWED_PROCESSING_OPTIONS).")
    var allowedOptions: [String] = []

    @Option(help: "A secret image requests must carry as Authorization: Bearer SECRET (IMGPROXY_SECRET).")
    var secret: String?

    @Option(help: "The origin CORS allows, or * (IMGPROXY_ALLOW_ORIGIN): Access-Control-Allow-Origin and -Methods on every answer.")
    var allowOrigin: String?

    @Option(help: "Serve images and /health under this path, such as /img (IMGPROXY_PATH_PREFIX).")
    var pathPrefix: String?

    @Option(help: "Another path that answers as /health does (IMGPROXY_HEALTH_CHECK_PATH).")
    var healthCheckPath: String?

    @Option(help: "Put in front of every source that does not start with it, so URLs may name sources relative to it (IMGPROXY_BASE_URL).")
    var baseUrl: String?

    @Option(help: "Rewrites of a source's start, PATTERN=REPLACEMENT;... with * within a segment and ${1} for what it matched (IMGPROXY_URL_REPLACEMENTS).")
    var urlReplacements: String?

    @Flag(help: "A base64 source is followed by a segment that is only a file name (IMGPROXY_BASE64_URL_INCLUDES_FILENAME).")
    var base64UrlIncludesFilename = false

    @Option(help: "The character between an option's name and arguments, : by default (IMGPROXY_ARGUMENTS_SEPARATOR).")
    var argumentsSeparator = ":"

    @Option(help: "Source formats sent as they are when a URL names no other format, such as jpg,png (svg with --always-rasterize-svg keeps SVG as SVG) (IMGPROXY_SKIP_PROCESSING_FORMATS).")
    var skipProcessingFormats: String?

    @Flag(help: "Draw SVG sources even when a URL names no format (IMGPROXY_ALWAYS_RASTERIZE_SVG).")
    var alwaysRasterizeSvg = false

    @Flag(help: "The client's hints (Sec-CH-DPR, DPR, Sec-CH-Width, Width) set the ratio and width a URL leaves unset (IMGPROXY_ENABLE_CLIENT_HINTS).")
    var enableClientHints = false

    @Option(help: "The Server header (imgproxy sends imgproxy).")
    var serverName = "imago"

    @Option(help: "Answer HEAD of an image URL with the image's headers (rendering it): true or false (false: 200 and nothing else for any path, as imgproxy).")
    var headRenders: Switch = .on

    @Option(help: "Bytes of the HMAC-SHA256 digest a signature carries, 1 to 32 (IMGPROXY_SIGNATURE_SIZE).")
    var signatureSize = 32

    @Option(name: .customLong("allow-host"), help: "A host sources may come from (images.example.com or *.example.com); repeatable. Default: any.")
    var allowedHosts: [String] = []

    @Flag(help: "Allow sources on loopback, private, link-local and other non-public addresses.")
    var allowPrivateNetworks = false

    @Flag(help: "Allow sources on loopback addresses and localhost names (IMGPROXY_ALLOW_LOOPBACK_SOURCE_ADDRESSES).")
    var allowLoopbackSources = false

    @Flag(help: "Allow sources on private addresses: 10/8, 172.16/12, 192.168/16, fc00::/7 (IMGPROXY_ALLOW_PRIVATE_SOURCE_ADDRESSES).")
    var allowPrivateSources = false

    @Flag(help: "Allow sources on link-local addresses, 169.254/16 (cloud metadata) and fe80::/10 (IMGPROXY_ALLOW_LINK_LOCAL_SOURCE_ADDRESSES).")
    var allowLinkLocalSources = false

    @Option(help: "Serve local:///PATH sources from this folder (IMGPROXY_LOCAL_FILESYSTEM_ROOT); a path that leads out of it is refused.")
    var localRoot: String?

    @Flag(help: "Serve s3://BUCKET/KEY sources, signed with AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN (IMGPROXY_USE_S3).")
    var useS3 = false

    @Option(help: "An S3-compatible store's URL, addressed path-style (IMGPROXY_S3_ENDPOINT). Default: AWS.")
    var s3Endpoint: String?

    @Option(help: "The region S3 requests are signed for (IMGPROXY_S3_REGION). Default: AWS_REGION, else us-east-1.")
    var s3Region: String?

    @Flag(help: "Serve gs://BUCKET/KEY sources from Google Cloud Storage through its S3-compatible XML API, signed with the HMAC key in IMAGO_GCS_HMAC_ACCESS_ID and IMAGO_GCS_HMAC_SECRET, unsigned without one (IMGPROXY_USE_GCS; a service-account IMGPROXY_GCS_KEY cannot be used).")
    var useGcs = false

    @Option(help: "The GCS XML API's URL: its scheme, host and port; a path, such as the JSON API's /storage/v1/ in imgproxy's variable, is not used (IMGPROXY_GCS_ENDPOINT). Default: https://storage.googleapis.com.")
    var gcsEndpoint: String?

    @Option(help: "With --use-s3, sign as this IAM role, assumed through STS with the AWS_* credentials (IMGPROXY_S3_ASSUME_ROLE_ARN); AWS_ENDPOINT_URL_STS names another STS.")
    var s3AssumeRoleArn: String?

    @Option(help: "The external ID the role's trust policy asks for (IMGPROXY_S3_ASSUME_ROLE_EXTERNAL_ID).")
    var s3AssumeRoleExternalId: String?

    @Option(help: "With --use-s3, sources may name only these buckets (IMGPROXY_S3_ALLOWED_BUCKETS). Default: any.")
    var s3AllowedBucket: [String] = []

    @Option(help: "With --use-s3, sources may not name these buckets (IMGPROXY_S3_DENIED_BUCKETS).")
    var s3DeniedBucket: [String] = []

    @Option(help: "With --use-gcs, sources may name only these buckets (IMGPROXY_GCS_ALLOWED_BUCKETS). Default: any.")
    var gcsAllowedBucket: [String] = []

    @Option(help: "With --use-gcs, sources may not name these buckets (IMGPROXY_GCS_DENIED_BUCKETS).")
    var gcsDeniedBucket: [String] = []

    @Option(help: "What separates an s3:// or gs:// source's key from the object's version (S3's versionId, GCS's generation); empty: none (IMGPROXY_SOURCE_URL_QUERY_SEPARATOR).")
    var sourceUrlQuerySeparator = "?"

    @Option(help: "Keep rendered images for every replica: file:///DIR, s3://BUCKET/PREFIX with --use-s3, or gs://BUCKET/PREFIX with --use-gcs. A render is written once and answered from the store after.")
    var resultStore: String?

    @Option(help: "The most seconds a result-store lookup or write may take; a slower lookup is a miss, a slower write is given up.")
    var resultStoreTimeout = 3.0

    @Option(help: "Keep source bytes in this folder (replicas may share it).")
    var cacheDir: String?

    @Flag(help: "Keep no source bytes on disk.")
    var noCache = false

    @Option(help: "Images decoded, processed and encoded at once. Default: the number of cores.")
    var workers: Int?

    @Option(help: "The quality of lossy output when a URL names none and --format-quality has no entry for the format (IMGPROXY_QUALITY).")
    var quality = 80

    @Option(help: "Qualities by format, such as jpeg=85,webp=75, over the defaults webp=79,avif=63,jxl=77 (IMGPROXY_FORMAT_QUALITY).")
    var formatQuality: String?

    @Option(help: "The largest source, in megapixels, counted over an animation's frames (IMGPROXY_MAX_SRC_RESOLUTION).")
    var maxSrcResolution = 50.0

    @Option(help: "The largest source, in bytes (IMGPROXY_MAX_SRC_FILE_SIZE).")
    var maxSrcFileSize = 25 * 1024 * 1024

    @Option(help: "The imago-svg-rasterizer executable SVG sources are drawn in (one child process per document). Default: the one beside imago.")
    var svgRasterizer: String?

    @Option(help: "The most seconds one SVG source may take to draw, in its child process; past it the child is killed and the request gets 422. SVG only.")
    var svgRasterizerTimeout = 10.0

    @Option(help: "The address space, in MiB, of the child process that draws an SVG source; a document that needs more gets 422.")
    var svgRasterizerMemory = 1024

    @Option(help: "Distinct images that may wait beyond the workers before requests get 503.")
    var maxQueue = 256

    @Option(help: "Sources downloaded from one host at once; the others wait up to --host-slot-wait seconds, then answer 504. Default: 4 per worker, at least 16.")
    var maxDownloadsPerHost: Int?

    @Option(help: "The most seconds a download waits for a slot of its host.")
    var hostSlotWait = 5.0

    @Option(help: "Megabytes renders may hold at once (source, decoded image, intermediates, encoder); larger renders wait for each other. A quarter more bounds the sources waiting for a worker. Default: half the machine's memory, 512 to 8192.")
    var maxMemory: Int?

    @Option(help: "The memory allocator: malloc (the C library's; with glibc, at most 2 arenas unless MALLOC_ARENA_MAX says otherwise), jemalloc or tcmalloc (from the system's packages, preloaded: imago serve starts itself again with it; Linux). Each keeps a flat footprint under long mixed loads; jemalloc's is the lowest.")
    var malloc: ServeAllocator = .malloc

    @Option(help: "The most seconds a request may take, its wait for a worker, download and render together; past it the answer is 503 and the render stops (IMGPROXY_TIMEOUT).")
    var timeout = 10.0

    @Option(help: "The most seconds from a connection's opening to its whole first request head (IMGPROXY_READ_REQUEST_TIMEOUT).")
    var readRequestTimeout = 10.0

    @Option(help: "The most seconds a connection waits for its next request after a response; 0: one request per connection (IMGPROXY_KEEP_ALIVE_TIMEOUT).")
    var keepAliveTimeout = 10.0

    @Option(help: "The most connections open at once; beyond it the longest-idle connection is closed to make room (IMGPROXY_MAX_CLIENTS). The descriptor limit is raised to fit where the system allows.")
    var maxClients = 2048

    @Option(help: "Cache-Control max-age of images, in seconds; 0: no-cache (IMGPROXY_TTL).")
    var ttl = 31_536_000

    @Option(help: "Send the source's ETag (else a hash of the image) and pass If-None-Match to the source: true or false (IMGPROXY_ETAG_ENABLED).")
    var etag: Switch = .on

    @Option(help: "Tag an image whose source sends no ETag with a hash of its bytes: true or false (false: no ETag, as imgproxy).")
    var etagHash: Switch = .on

    @Option(help: "A prefix that changes every ETag, to make caches drop what they hold (IMGPROXY_ETAG_BUSTER).")
    var etagBuster: String?

    @Option(help: "Send the source's Last-Modified and pass If-Modified-Since to the source: true or false (IMGPROXY_LAST_MODIFIED_ENABLED).")
    var lastModified: Switch = .on

    @Option(help: "An RFC 3339 time no Last-Modified is earlier than (IMGPROXY_LAST_MODIFIED_BUSTER).")
    var lastModifiedBuster: String?

    @Flag(help: "Send the source's Cache-Control (or its Expires as a max-age) instead of --ttl (IMGPROXY_CACHE_CONTROL_PASSTHROUGH).")
    var cacheControlPassthrough = false

    @Option(help: "The Cache-Control of error answers; empty for none, as imgproxy.")
    var errorCacheControl = "no-store"

    @Flag(help: "Answer with WebP when the client accepts it and the URL names no format (adds Vary: Accept).")
    var autoWebp = false

    @Flag(help: "Answer with AVIF when the client accepts it and the URL names no format; preferred to WebP (adds Vary: Accept).")
    var autoAvif = false

    @Flag(help: "Answer with JPEG XL when the client accepts it and the URL names no format; preferred to AVIF and WebP (adds Vary: Accept).")
    var autoJxl = false

    @Flag(help: "Answer with JPEG XL whenever the client accepts it, even when the URL names another format.")
    var enforceJxl = false

    @Flag(help: "Answer with WebP whenever the client accepts it, even when the URL names another format.")
    var enforceWebp = false

    @Flag(help: "Answer with AVIF whenever the client accepts it, even when the URL names another format.")
    var enforceAvif = false

    @Option(name: .customLong("preset"), help: "A preset, NAME=OPTIONS (rs:fill:200:200/q:70), that URLs use with pr:NAME; `default` applies to every URL. Repeatable.")
    var presets: [String] = []

    @Option(help: "A file of presets, NAME=OPTIONS one a line (blank lines and lines starting with # are skipped), after --preset's (IMGPROXY_PRESETS_PATH).")
    var presetsPath: String?

    @Flag(help: "URLs name only presets: the segment after the signature is NAME[:NAME...].")
    var onlyPresets = false

    @Flag(help: "Allow security options in URLs (max_result_dimension), as imgproxy's IMGPROXY_ALLOW_SECURITY_OPTIONS.")
    var allowSecurityOptions = false

    @Option(help: "The watermark image (wm:...) from this file, as imgproxy's IMGPROXY_WATERMARK_PATH.")
    var watermarkPath: String?

    @Option(help: "The watermark image from this URL, loaded once at start (IMGPROXY_WATERMARK_URL).")
    var watermarkUrl: String?

    @Option(help: "The watermark image as base64 (IMGPROXY_WATERMARK_DATA).")
    var watermarkData: String?

    @Option(help: "What every watermark's opacity is multiplied by, 0 to 1 (IMGPROXY_WATERMARK_OPACITY).")
    var watermarkOpacity: Double = 1

    @OptionGroup(title: "Image defaults and limits")
    var imageDefaults: ServeImageDefaults

    @OptionGroup(title: "Listener and answer headers")
    var http: ServeHTTPOptions

    @OptionGroup(title: "Fetching sources")
    var fetch: ServeFetchOptions

    @OptionGroup(title: "Compression")
    var compression: ServeCompressionOptions

    @OptionGroup(title: "Metrics")
    var metrics: ServeMetricsOptions

    @Option(help: "The image answered, processed as asked, when a source cannot be loaded: from this file (IMGPROXY_FALLBACK_IMAGE_PATH).")
    var fallbackImagePath: String?

    @Option(help: "The fallback image from this URL, loaded once at start (IMGPROXY_FALLBACK_IMAGE_URL).")
    var fallbackImageUrl: String?

    @Option(help: "The fallback image as base64 (IMGPROXY_FALLBACK_IMAGE_DATA). With several --fallback-image-*, data wins over a path, a path over a URL.")
    var fallbackImageData: String?

    @Option(help: "The status of a fallback answer, 100 to 599; 0 answers with the failure's own status (IMGPROXY_FALLBACK_IMAGE_HTTP_CODE).")
    var fallbackImageStatus: Int = 200

    @Option(help: "The max-age of a fallback answer in seconds; 0 keeps --ttl (or --error-cache-control for an error status) (IMGPROXY_FALLBACK_IMAGE_TTL).")
    var fallbackImageTtl: Int = 0

    @Option(help: "The most frames of an animation processed; above 1, animated sources asked for as WebP, GIF or PNG stay animated (IMGPROXY_MAX_ANIMATION_FRAMES).")
    var maxAnimationFrames = 1

    @Option(help: "Seconds between SIGTERM and the HTTP server closing: /health/ready answers 503 at once and requests are still served, so load balancers stop sending first.")
    var drainDelay = 0.0

    @Option(help: "The most seconds the HTTP server then waits for the requests in flight.")
    var drainTimeout = 30.0

    @Option(help: "Bytes of log lines kept for a slow reader of standard error; beyond it lines are dropped and counted (imago_log_lines_dropped), so logging never blocks serving.")
    var logBuffer = 1 << 20

    @Option(help: "trace, debug, info, notice, warning, error or critical.")
    var logLevel = "info"

    @Option(help: "Export spans to this OpenTelemetry collector: its base URL, as OTEL_EXPORTER_OTLP_ENDPOINT (over HTTP, spans go to URL/v1/traces). Default: OTEL_EXPORTER_OTLP_TRACES_ENDPOINT or OTEL_EXPORTER_OTLP_ENDPOINT, else no tracing (unless --otlp).")
    var otlpEndpoint: String?

    @Option(help: "How spans are sent: grpc, http/protobuf or http/json (imgproxy's http and https: http/protobuf). Default: OTEL_EXPORTER_OTLP_TRACES_PROTOCOL or OTEL_EXPORTER_OTLP_PROTOCOL, else http/protobuf (grpc with imgproxy's variables, as imgproxy).")
    var otlpProtocol: String?

    @Flag(help: "Export spans even without an endpoint: to the protocol's default collector on localhost (4317 for grpc, 4318 for HTTP), as IMGPROXY_OPEN_TELEMETRY_ENABLE does.")
    var otlp = false

    @Flag(help: "Also export the metrics over OTLP, to the collector spans go to (IMGPROXY_OPEN_TELEMETRY_ENABLE_METRICS); /metrics stays.")
    var otlpMetrics = false

    @Flag(help: "Also export the log lines over OTLP, to the collector spans go to (IMGPROXY_OPEN_TELEMETRY_ENABLE_LOGS); standard error stays.")
    var otlpLogs = false

    @Flag(help: "Continue the trace a client's traceparent names; without it each request starts a trace of its own, as imgproxy does unless IMGPROXY_OPEN_TELEMETRY_PROPAGATE_EXTERNAL.")
    var otlpPropagateExternal = false

    @Flag(help: "Print the effective configuration (flags, IMAGO_* and IMGPROXY_* variables applied; secrets masked) and exit.")
    var printConfig = false

    func validate() throws {
        if cacheDir != nil && noCache { throw ValidationError("--cache-dir and --no-cache exclude each other.") }
        guard (0...65_535).contains(port) else { throw ValidationError("--port must be from 0 to 65535.") }
        if let workers, workers < 1 { throw ValidationError("--workers must be at least 1.") }
        guard resultStoreTimeout > 0, resultStoreTimeout.isFinite else { throw ValidationError("--result-store-timeout must be a positive number of seconds.") }
        if maxQueue < 0 { throw ValidationError("--max-queue cannot be negative.") }
        guard (1...32).contains(signatureSize) else { throw ValidationError("--signature-size must be from 1 to 32.") }
        for (name, value) in [("--timeout", timeout), ("--read-request-timeout", readRequestTimeout)] {
            guard value.isFinite, value > 0, value <= 86_400 else { throw ValidationError("\(name) must be seconds above 0, at most a day.") }
        }
        guard keepAliveTimeout.isFinite, keepAliveTimeout >= 0, keepAliveTimeout <= 86_400 else {
            throw ValidationError("--keep-alive-timeout must be seconds, 0 to a day.")
        }
        if maxClients < 1 { throw ValidationError("--max-clients must be at least 1.") }
        if let maxDownloadsPerHost, maxDownloadsPerHost < 1 { throw ValidationError("--max-downloads-per-host must be at least 1.") }
        guard hostSlotWait.isFinite, hostSlotWait > 0, hostSlotWait <= 86_400 else {
            throw ValidationError("--host-slot-wait must be seconds above 0, at most a day.")
        }
        if let maxMemory, !(16...(1 << 30)).contains(maxMemory) { throw ValidationError("--max-memory must be megabytes, at least 16.") }
        guard svgRasterizerTimeout > 0, svgRasterizerTimeout.isFinite else { throw ValidationError("--svg-rasterizer-timeout must be a positive number of seconds.") }
        guard (64...1_048_576).contains(svgRasterizerMemory) else { throw ValidationError("--svg-rasterizer-memory must be from 64 to 1048576 MiB.") }
        if let resultStore {
            guard let url = URL(string: resultStore), ["file", "s3", "gs"].contains(url.scheme?.lowercased() ?? "") else {
                throw ValidationError("--result-store must be file:///DIR, s3://BUCKET/PREFIX or gs://BUCKET/PREFIX.")
            }
            if url.scheme?.lowercased() == "s3", !useS3 { throw ValidationError("--result-store s3://... needs --use-s3.") }
            if url.scheme?.lowercased() == "gs", !useGcs { throw ValidationError("--result-store gs://... needs --use-gcs.") }
        }
        if let s3Endpoint {
            guard let url = URL(string: s3Endpoint), ["http", "https"].contains(url.scheme?.lowercased() ?? ""), url.host != nil else {
                throw ValidationError("--s3-endpoint must be an http or https URL.")
            }
            if !useS3 { throw ValidationError("--s3-endpoint needs --use-s3.") }
        }
        if s3AssumeRoleArn != nil, !useS3 { throw ValidationError("--s3-assume-role-arn needs --use-s3.") }
        if let gcsEndpoint {
            guard let url = URL(string: gcsEndpoint), ["http", "https"].contains(url.scheme?.lowercased() ?? ""), url.host != nil else {
                throw ValidationError("--gcs-endpoint must be an http or https URL.")
            }
            if !useGcs { throw ValidationError("--gcs-endpoint needs --use-gcs.") }
        }
        if useGcs { _ = try Self.gcsCredentials(ProcessInfo.processInfo.environment) }
        if !(1...100).contains(quality) { throw ValidationError("--quality must be from 1 to 100.") }
        _ = try formatQualities()
        guard maxSrcResolution.isFinite, maxSrcResolution > 0, maxSrcResolution <= 10_000 else {
            throw ValidationError("--max-src-resolution must be megapixels above 0.")
        }
        if maxSrcFileSize < 0 { throw ValidationError("--max-src-file-size must be bytes, 0 or more (0: as much as the memory budget holds).") }
        if let localRoot {
            var isFolder: ObjCBool = false
            guard FileManager.default.fileExists(atPath: localRoot, isDirectory: &isFolder), isFolder.boolValue else {
                throw ValidationError("--local-root \(localRoot) is not a folder.")
            }
        }
        if maxAnimationFrames < 1 { throw ValidationError("--max-animation-frames must be at least 1.") }
        if logBuffer < 4096 { throw ValidationError("--log-buffer must be at least 4096 bytes.") }
        guard drainDelay.isFinite, drainDelay >= 0, drainTimeout.isFinite, drainTimeout >= 0 else {
            throw ValidationError("--drain-delay and --drain-timeout must be seconds, 0 or more.")
        }
        if ttl < 0 { throw ValidationError("--ttl cannot be negative.") }
        for name in (skipProcessingFormats ?? "").split(separator: ",").map({ $0.trimmingCharacters(in: .whitespaces).lowercased() })
        where !name.isEmpty && name != "svg" && ProcessingOptions.OutputFormat(name: name) == nil {
            throw ValidationError("--skip-processing-formats: \(name) is not a format (jpg, png, webp, avif, gif, jxl, heic, tiff, bmp, ico, svg).")
        }
        if let urlReplacements, !urlReplacements.isEmpty, ImageServerURLRules.replacements(parsing: urlReplacements) == nil {
            throw ValidationError("--url-replacements must be PATTERN=REPLACEMENT pairs separated by ;.")
        }
        guard argumentsSeparator.count == 1, argumentsSeparator != "/" else {
            throw ValidationError("--arguments-separator must be one character other than /.")
        }
        if let lastModifiedBuster, Self.rfc3339(lastModifiedBuster) == nil {
            throw ValidationError("--last-modified-buster must be an RFC 3339 time, such as 2026-01-01T00:00:00Z.")
        }
        // The endpoint, the protocol and the OTEL_* variables: a usage error, before anything starts.
        _ = try tracingExport()
        if [watermarkPath, watermarkUrl, watermarkData].compactMap({ $0 }).count > 1 {
            throw ValidationError("Give one of --watermark-path, --watermark-url and --watermark-data.")
        }
        guard fallbackImageStatus == 0 || (100...599).contains(fallbackImageStatus) else {
            throw ValidationError("--fallback-image-status must be 0 or from 100 to 599.")
        }
        guard fallbackImageTtl >= 0 else { throw ValidationError("--fallback-image-ttl must be 0 or more.") }
        guard watermarkOpacity.isFinite, (0...1).contains(watermarkOpacity) else {
            throw ValidationError("--watermark-opacity must be from 0 to 1.")
        }
        guard Self.level(logLevel) != nil else {
            throw ValidationError("--log-level must be one of \(Logger.Level.allCases.map(\.rawValue).joined(separator: ", ")) (or imgproxy's warn).")
        }
        if let cacheDir {
            // Made (or found) now, so a bad folder stops the start instead
            // of failing every write later.
            var isFolder: ObjCBool = false
            do {
                try FileManager.default.createDirectory(atPath: cacheDir, withIntermediateDirectories: true)
            } catch {
                throw ValidationError("--cache-dir \(cacheDir) cannot be made: \(error.localizedDescription)")
            }
            guard FileManager.default.fileExists(atPath: cacheDir, isDirectory: &isFolder), isFolder.boolValue,
                  FileManager.default.isWritableFile(atPath: cacheDir) else {
                throw ValidationError("--cache-dir \(cacheDir) is not a writable folder.")
            }
        }
        let parsedPresets: ImageServerPresets
        let definitions = try allPresets()
        do {
            parsedPresets = try ImageServerPresets(parsing: definitions, onlyPresets: onlyPresets)
        } catch {
            throw ValidationError("--preset: \(error.message).")
        }
        if !allowSecurityOptions, let name = parsedPresets.namesSettingSecurityOptions.first {
            throw ValidationError("--preset \(name) sets a security option (max_result_dimension, max_src_resolution...); add --allow-security-options.")
        }
        try metrics.checkApart(from: http.address(host: host, port: port))
        let keys = try signingKeys()
        if unsigned && !keys.isEmpty { throw ValidationError("--unsigned and a signing key exclude each other.") }
        if !unsigned && keys.isEmpty {
            throw ValidationError("Give --key and --salt (or IMAGO_KEY and IMAGO_SALT), or --unsigned for development.")
        }
    }

    /// The key and salt pairs from the options, else from the environment.
    func signingKeys() throws -> [SigningKey] {
        let environment = ProcessInfo.processInfo.environment
        var keys = self.keys
        var salts = self.salts
        if keys.isEmpty, salts.isEmpty {
            keys = environment["IMAGO_KEY"].map { [$0] } ?? []
            salts = environment["IMAGO_SALT"].map { [$0] } ?? []
        }
        guard keys.count == salts.count else {
            throw ValidationError("Give one salt for each key (\(keys.count) keys, \(salts.count) salts).")
        }
        return try zip(keys, salts).map { key, salt in
            do {
                return try SigningKey(hexKey: key, hexSalt: salt)
            } catch {
                throw ValidationError("\(error).")
            }
        }
    }

    /// The watermark image from `--watermark-path`, `-url` or `-data`,
    /// decoded once; the server does not start when it cannot be read.
    func watermark() async throws -> Image? {
        guard let (bytes, origin) = try await Self.imageBytes(data: watermarkData, path: watermarkPath, url: watermarkUrl, flag: "watermark")
        else { return nil }
        do {
            return try ImageDecoders.all.decode(bytes)
        } catch {
            throw ValidationError("\(origin) is not an image Imago reads: \(error)")
        }
    }

    /// The fallback image from `--fallback-image-data`, `-path` or `-url`
    /// (in that order, as imgproxy), checked once: the server does not
    /// start when it cannot be read or is not an image.
    func fallbackImage() async throws -> FallbackImage? {
        guard let (bytes, origin) = try await Self.imageBytes(data: fallbackImageData, path: fallbackImagePath, url: fallbackImageUrl,
                                                              flag: "fallback-image") else { return nil }
        do {
            _ = try ImageDecoders.info(for: bytes)
        } catch {
            throw ValidationError("\(origin) is not an image Imago reads: \(error)")
        }
        return FallbackImage(data: bytes, status: fallbackImageStatus == 0 ? nil : fallbackImageStatus,
                             timeToLive: fallbackImageTtl > 0 ? fallbackImageTtl : nil)
    }

    /// The bytes of an image given as `--FLAG-data` (base64), `--FLAG-path`
    /// or `--FLAG-url` (loaded once, now), the first given in that order,
    /// with the flag that gave them; `nil` when none is given.
    static func imageBytes(data: String?, path: String?, url: String?, flag: String) async throws -> (Data, origin: String)? {
        if let data {
            guard let bytes = Data(base64Encoded: data, options: .ignoreUnknownCharacters) else {
                throw ValidationError("--\(flag)-data is not base64.")
            }
            return (bytes, "--\(flag)-data")
        }
        guard let source = path ?? url else { return nil }
        let location = path.map { URL(fileURLWithPath: ($0 as NSString).expandingTildeInPath) } ?? SourceLoader.url(for: source)
        let origin = path != nil ? "--\(flag)-path \(source)" : "--\(flag)-url \(source)"
        do {
            return (try await SourceLoader().bytes(of: location), origin)
        } catch {
            throw ValidationError("\(origin) cannot be loaded: \(error)")
        }
    }

    /// The variables that hold the HMAC key `--use-gcs` signs with.
    static let gcsAccessIDVariable = "IMAGO_GCS_HMAC_ACCESS_ID", gcsSecretVariable = "IMAGO_GCS_HMAC_SECRET"

    /// The HMAC key GCS requests are signed with, from `environment`; `nil`
    /// for unsigned requests (public buckets).
    ///
    /// - Throws: `ValidationError` when only one of the two variables is
    ///   set, or when neither is and `IMGPROXY_GCS_KEY` is: a
    ///   service-account key needs Google's OAuth, which this server does
    ///   not speak, and reading unsigned instead would fail on every
    ///   private object.
    static func gcsCredentials(_ environment: [String: String]) throws -> AWSSignatureV4.Credentials? {
        func value(_ name: String) -> String? { environment[name].flatMap { $0.isEmpty ? nil : $0 } }
        switch (value(gcsAccessIDVariable), value(gcsSecretVariable)) {
        case let (id?, secret?):
            return AWSSignatureV4.Credentials(accessKeyID: id, secretAccessKey: secret)
        case (_?, nil), (nil, _?):
            throw ValidationError("--use-gcs needs both \(gcsAccessIDVariable) and \(gcsSecretVariable) (an HMAC key's access ID and secret), or neither for unsigned requests.")
        case (nil, nil):
            if value("IMGPROXY_GCS_KEY") != nil {
                throw ValidationError("""
                    IMGPROXY_GCS_KEY is a service-account key, which imago serve cannot use: it reads GCS through the XML API, signed with an HMAC key. \
                    Create one for the service account (gcloud storage hmac create SERVICE_ACCOUNT_EMAIL) and set \(gcsAccessIDVariable) and \(gcsSecretVariable) \
                    to its access ID and secret, or unset IMGPROXY_GCS_KEY to read public buckets unsigned.
                    """)
            }
            return nil
        }
    }

    /// The effective configuration, one `flag = value` line each, secrets masked.
    func configurationLines() -> [String] {
        func masked(_ values: [String]) -> String { values.isEmpty ? "(none)" : values.map { _ in "***" }.joined(separator: ", ") }
        func list(_ values: [String]) -> String { values.isEmpty ? "(none)" : values.joined(separator: ", ") }
        let tracing = ServeTracing.describe(flag: otlpEndpoint, protocolFlag: otlpProtocol, enabled: otlp,
                                            environment: ProcessInfo.processInfo.environment)
        let pairs: [(String, String)] = [
            ("host", host), ("port", "\(port)"), ("key", masked(keys)), ("salt", masked(salts)), ("unsigned", "\(unsigned)"), ("secret", secret == nil ? "(none)" : "***"), ("trusted-signature", masked(trustedSignatures)),
            ("allowed-option", list(allowedOptions)),
            ("allow-origin", allowOrigin ?? "(none)"), ("path-prefix", pathPrefix ?? "(none)"), ("health-check-path", healthCheckPath ?? "(none)"),
            ("server-name", serverName), ("enable-client-hints", "\(enableClientHints)"),
            ("skip-processing-formats", skipProcessingFormats ?? "(none)"), ("always-rasterize-svg", "\(alwaysRasterizeSvg)"), ("base-url", baseUrl ?? "(none)"), ("url-replacements", urlReplacements ?? "(none)"),
            ("base64-url-includes-filename", "\(base64UrlIncludesFilename)"), ("arguments-separator", argumentsSeparator), ("head-renders", "\(headRenders.isOn)"), ("signature-size", "\(signatureSize)"),
            ("allow-host", list(allowedHosts)), ("allow-private-networks", "\(allowPrivateNetworks)"),
            ("allow-loopback-sources", "\(allowLoopbackSources)"), ("allow-private-sources", "\(allowPrivateSources)"),
            ("allow-link-local-sources", "\(allowLinkLocalSources)"), ("local-root", localRoot ?? "(none)"),
            ("result-store", resultStore ?? "(none)"), ("result-store-timeout", "\(resultStoreTimeout)"), ("use-s3", "\(useS3)"), ("s3-endpoint", s3Endpoint ?? "(AWS)"), ("s3-region", s3Region ?? "(AWS_REGION)"),
            ("s3-assume-role-arn", s3AssumeRoleArn ?? "(none)"), ("s3-assume-role-external-id", s3AssumeRoleExternalId == nil ? "(none)" : "***"),
            ("s3-allowed-bucket", list(s3AllowedBucket)), ("s3-denied-bucket", list(s3DeniedBucket)),
            ("gcs-allowed-bucket", list(gcsAllowedBucket)), ("gcs-denied-bucket", list(gcsDeniedBucket)),
            ("source-url-query-separator", sourceUrlQuerySeparator.isEmpty ? "(none)" : sourceUrlQuerySeparator),
            ("use-gcs", "\(useGcs)"), ("gcs-endpoint", gcsEndpoint ?? "(\(S3DataLoader.Configuration.googleCloudStorageEndpoint.absoluteString))"),
            ("cache-dir", noCache ? "(none)" : cacheDir ?? DataCache.defaultDirectory.path), ("no-cache", "\(noCache)"), ("workers", workers.map(String.init) ?? "(cores)"),
            ("max-queue", "\(maxQueue)"), ("timeout", "\(timeout)"), ("read-request-timeout", "\(readRequestTimeout)"),
            ("keep-alive-timeout", "\(keepAliveTimeout)"), ("max-clients", "\(maxClients)"),
            ("max-memory", maxMemory.map { "\($0)" } ?? "(half the memory)"), ("malloc", malloc.configurationValue()),
            ("max-downloads-per-host", maxDownloadsPerHost.map(String.init) ?? "(4 per worker, at least 16)"), ("host-slot-wait", "\(hostSlotWait)"), ("ttl", "\(ttl)"), ("etag", "\(etag.isOn)"), ("etag-hash", "\(etagHash.isOn)"), ("etag-buster", etagBuster ?? "(none)"),
            ("last-modified", "\(lastModified.isOn)"), ("last-modified-buster", lastModifiedBuster ?? "(none)"),
            ("cache-control-passthrough", "\(cacheControlPassthrough)"), ("error-cache-control", errorCacheControl.isEmpty ? "(none)" : errorCacheControl), ("quality", "\(quality)"),
            ("format-quality", (try? formatQualities())?.sorted { $0.key.rawValue < $1.key.rawValue }.map { "\($0.key.rawValue)=\($0.value)" }.joined(separator: ",") ?? "?"),
            ("max-src-resolution", "\(maxSrcResolution)"), ("max-src-file-size", "\(maxSrcFileSize)"),
            ("svg-rasterizer", svgRasterizer ?? "(beside imago)"), ("svg-rasterizer-timeout", "\(svgRasterizerTimeout)"),
            ("svg-rasterizer-memory", "\(svgRasterizerMemory)"),
            ("auto-webp", "\(autoWebp)"), ("auto-avif", "\(autoAvif)"), ("auto-jxl", "\(autoJxl)"),
            ("enforce-webp", "\(enforceWebp)"), ("enforce-avif", "\(enforceAvif)"), ("enforce-jxl", "\(enforceJxl)"),
            ("preset", list(presets)), ("presets-path", presetsPath ?? "(none)"), ("only-presets", "\(onlyPresets)"), ("allow-security-options", "\(allowSecurityOptions)"),
            ("watermark-path", watermarkPath ?? "(none)"), ("watermark-url", watermarkUrl ?? "(none)"),
            ("watermark-data", watermarkData == nil ? "(none)" : "***"), ("watermark-opacity", "\(watermarkOpacity)"),
            ("fallback-image-path", fallbackImagePath ?? "(none)"), ("fallback-image-url", fallbackImageUrl ?? "(none)"),
            ("fallback-image-data", fallbackImageData == nil ? "(none)" : "***"), ("fallback-image-status", "\(fallbackImageStatus)"),
            ("fallback-image-ttl", "\(fallbackImageTtl)"),
            ("max-animation-frames", "\(maxAnimationFrames)"), ("drain-delay", "\(drainDelay)"), ("drain-timeout", "\(drainTimeout)"),
            ("log-buffer", "\(logBuffer)"), ("log-level", logLevel),
            ("otlp", "\(otlp)"), ("otlp-endpoint", tracing.endpoint), ("otlp-protocol", tracing.protocol),
            ("otlp-metrics", "\(otlpMetrics)"), ("otlp-logs", "\(otlpLogs)"), ("otlp-propagate-external", "\(otlpPropagateExternal)"),
        ] + imageDefaults.configurationLines + http.configurationLines + fetch.configurationLines + compression.configurationLines + metrics.configurationLines
        return pairs.map { "\($0.0) = \($0.1)" }
    }

    /// The tracing the flags and the environment configure; `nil` when off.
    func tracingExport() throws -> ServeTracing.Export? {
        try ServeTracing.export(flag: otlpEndpoint, protocolFlag: otlpProtocol, enabled: otlp, environment: ProcessInfo.processInfo.environment)
    }

    func run() async throws {
        if printConfig {
            for line in configurationLines() { Output.line(line) }
            return
        }
        // First: the process starts again here when the allocator must be preloaded.
        do {
            try malloc.adopt()
        } catch {
            Output.error("imago: serve: --malloc \(malloc.rawValue): \(error)")
            throw ExitCode(1)
        }
        let level = Self.level(logLevel) ?? .info
        // A reader that closes standard error must not end the server.
        signal(SIGPIPE, SIG_IGN)
        let logQueue = LogQueue(capacity: logBuffer)
        defer { logQueue.flush(waitingAtMost: 2) }
        // Metrics and log lines over OTLP too, when asked for: made before
        // the systems are bootstrapped, which take them beside their own.
        let signals: ServeTracing.SignalBackends
        do {
            signals = try ServeTracing.signalBackends(try tracingExport(), metrics: otlpMetrics, logs: otlpLogs,
                                                      environment: ProcessInfo.processInfo.environment)
        } catch {
            Output.error("imago: serve: OpenTelemetry cannot start: \(error)")
            throw ExitCode(1)
        }
        // Lines logged inside a span carry its ids (trace_id, span_id), when tracing is on.
        LoggingSystem.bootstrap({ label, provider in
            var handler = QueuedLogHandler(label: label, queue: logQueue)
            handler.logLevel = level
            handler.metadataProvider = provider
            guard let exported = signals.logs else { return handler }
            var otlp = exported(label)
            otlp.logLevel = level
            otlp.metadataProvider = provider
            return MultiplexLogHandler([handler, otlp])
        }, metadataProvider: ServeTracing.logMetadata)
        let metricsSystem = try metrics.bootstrap(beside: signals.metrics)
        let registry = metricsSystem.registry
        var logger = Logger(label: "imago")
        logger.logLevel = level
        for variable in ServeEnvironment.arguments([], environment: ProcessInfo.processInfo.environment).ignored {
            logger.warning("\(variable) is an imgproxy setting imago serve does not read; it is ignored")
        }
        // Before the server's loaders exist: they trace with the tracer of the moment.
        let tracing: (any Service)?
        do {
            tracing = try ServeTracing.bootstrap(try tracingExport(), environment: ProcessInfo.processInfo.environment, logger: logger)
        } catch {
            Output.error("imago: serve: tracing cannot start: \(error)")
            throw ExitCode(1)
        }

        var configuration = ImageServerConfiguration(signingKeys: try signingKeys(), acceptsUnsignedPaths: unsigned)
        configuration.secret = secret.flatMap { $0.isEmpty ? nil : $0 }
        configuration.trustedSignatures = Set(trustedSignatures)
        configuration.urlRules.allowedOptions = allowedOptions.isEmpty ? nil : Set(allowedOptions)
        configuration.sourcePolicy = SourcePolicy(allowedHosts: allowedHosts.map { HostPattern($0) }, allowsPrivateNetworks: allowPrivateNetworks,
                                                  localRoot: localRoot.map { URL(fileURLWithPath: $0, isDirectory: true) })
        if allowLoopbackSources { configuration.sourcePolicy.allowedAddresses.insert(.loopback) }
        if allowPrivateSources { configuration.sourcePolicy.allowedAddresses.insert(.privateNetworks) }
        if allowLinkLocalSources { configuration.sourcePolicy.allowedAddresses.insert(.linkLocal) }
        if let workers {
            configuration.workers = workers
            configuration.maximumConcurrentDownloads = max(32, 8 * workers)
            configuration.maximumConcurrentStreams = max(32, 8 * workers)
            configuration.maximumDownloadsPerHost = ImageServerConfiguration.downloadsPerHost(workers: workers)
        }
        configuration.maximumQueue = maxQueue
        configuration.signatureSize = signatureSize
        configuration.timeout = timeout
        if let maxMemory { configuration.maximumMemory = maxMemory << 20 }
        if let maxDownloadsPerHost { configuration.maximumDownloadsPerHost = maxDownloadsPerHost }
        configuration.hostSlotWait = hostSlotWait
        if useS3 {
            var s3 = S3DataLoader.Configuration.fromEnvironment(endpoint: s3Endpoint.flatMap(URL.init(string:)))
            if let s3Region { s3.region = s3Region }
            if let arn = s3AssumeRoleArn.flatMap({ $0.isEmpty ? nil : $0 }) {
                let sts = ProcessInfo.processInfo.environment["AWS_ENDPOINT_URL_STS"].flatMap { $0.isEmpty ? nil : URL(string: $0) }
                s3.role = AWSAssumedRole(arn: arn, externalID: s3AssumeRoleExternalId.flatMap { $0.isEmpty ? nil : $0 }, endpoint: sts)
            }
            configuration.s3 = s3
        }
        if useGcs {
            let endpoint = gcsEndpoint.flatMap(URL.init(string:)) ?? S3DataLoader.Configuration.googleCloudStorageEndpoint
            configuration.gcs = .googleCloudStorage(endpoint: endpoint, credentials: try Self.gcsCredentials(ProcessInfo.processInfo.environment))
        }
        if let resultStore, let url = URL(string: resultStore) {
            // The store is the operator's own: the source buckets' lists do not apply to it.
            if let service = S3DataLoader.Service(scheme: url.scheme), let store = service == .s3 ? configuration.s3 : configuration.gcs,
               let bucket = url.host {
                let loader = S3DataLoader(configuration: store, transport: RetryingDataLoader(wrapping: AsyncHTTPClientDataLoader()), service: service)
                configuration.resultStore = S3ResultStore(bucket: bucket, prefix: url.path, loader: loader)
            } else {
                do {
                    configuration.resultStore = try FileResultStore(directory: URL(fileURLWithPath: url.path, isDirectory: true))
                } catch {
                    throw ValidationError("--result-store \(resultStore) cannot be made: \(error.localizedDescription)")
                }
            }
        }
        configuration.resultStoreTimeout = resultStoreTimeout
        // What sources may name in the stores: set after the result store took its copy.
        configuration.s3?.allowedBuckets = Set(s3AllowedBucket)
        configuration.s3?.deniedBuckets = Set(s3DeniedBucket)
        configuration.gcs?.allowedBuckets = Set(gcsAllowedBucket)
        configuration.gcs?.deniedBuckets = Set(gcsDeniedBucket)
        configuration.s3?.versionSeparator = sourceUrlQuerySeparator
        configuration.gcs?.versionSeparator = sourceUrlQuerySeparator
        configuration.maximumSourcePixels = Int(maxSrcResolution * 1_000_000)
        // 0 is imgproxy's "no limit": here the most a source waiting for a worker may hold, a quarter of the memory budget.
        configuration.maximumSourceBytes = maxSrcFileSize > 0 ? maxSrcFileSize : configuration.maximumMemory / 4
        configuration.svgRasterizerExecutable = svgRasterizer.map { URL(fileURLWithPath: $0) }
        configuration.svgRasterizerTimeout = svgRasterizerTimeout
        configuration.svgRasterizerMemoryLimit = svgRasterizerMemory * 1024 * 1024
        configuration.timeToLive = ttl
        configuration.urlRules.baseURL = baseUrl.flatMap { $0.isEmpty ? nil : $0 }
        configuration.urlRules.replacements = urlReplacements.flatMap { $0.isEmpty ? [] : ImageServerURLRules.replacements(parsing: $0) } ?? []
        configuration.urlRules.base64IncludesFilename = base64UrlIncludesFilename
        configuration.urlRules.argumentSeparator = argumentsSeparator.first ?? ":"
        configuration.usesClientHints = enableClientHints
        let skipped = (skipProcessingFormats ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
        configuration.skipProcessingFormats = Set(skipped.compactMap { ProcessingOptions.OutputFormat(name: $0)?.imageFormat })
        configuration.keepsSVGUnprocessed = skipped.contains("svg")
        configuration.alwaysRasterizesSVG = alwaysRasterizeSvg
        configuration.caching.sendsETag = etag.isOn
        configuration.caching.hashesUntaggedAnswers = etagHash.isOn
        configuration.caching.etagBuster = etagBuster.flatMap { $0.isEmpty ? nil : $0 }
        configuration.caching.sendsLastModified = lastModified.isOn
        configuration.caching.lastModifiedBuster = lastModifiedBuster.flatMap(Self.rfc3339)
        configuration.caching.passesSourceCacheControl = cacheControlPassthrough
        configuration.caching.errorCacheControl = errorCacheControl.isEmpty ? nil : errorCacheControl
        configuration.outputPolicy = OutputPolicy(
            automatic: Set([autoWebp ? .webp : nil, autoAvif ? .avif : nil, autoJxl ? .jxl : nil].compactMap { $0 }),
            enforced: Set([enforceWebp ? .webp : nil, enforceAvif ? .avif : nil, enforceJxl ? .jxl : nil].compactMap { $0 }),
            qualities: try formatQualities(),
            defaultQuality: quality
        )
        configuration.allowsSecurityOptions = allowSecurityOptions
        configuration.presets = try ImageServerPresets(parsing: try allPresets(), onlyPresets: onlyPresets)
        configuration.logger = logger
        configuration.watermark = try await watermark()
        configuration.watermarkOpacity = watermarkOpacity
        configuration.fallbackImage = try await fallbackImage()
        imageDefaults.apply(to: &configuration)
        http.apply(to: &configuration)
        configuration.sourceFetching = fetch.settings
        configuration.continuesClientTraces = otlpPropagateExternal
        configuration.encoderSettings = compression.settings
        configuration.maximumAnimationFrames = maxAnimationFrames
        if !noCache {
            let directory = cacheDir.map { URL(fileURLWithPath: $0, isDirectory: true) } ?? DataCache.defaultDirectory
            configuration.dataCache = DataCache(configuration: .init(directory: directory), logger: logger)
        }

        let router = Router()
        router.add(middleware: ImageServerHeadersMiddleware(allowedOrigin: allowOrigin.flatMap { $0.isEmpty ? nil : $0 }))
        let prefix = (pathPrefix ?? "").trimmingCharacters(in: CharacterSet(charactersIn: "/"))
        let routes = prefix.isEmpty ? router.group() : router.group(RouterPath(prefix))
        // No metrics middleware: the image server counts its own requests
        // (responses by status, a latency histogram), and a second count
        // of the same requests would double every request rate.
        let readiness = Readiness()
        // imgproxy's health answer: plain text, never cached.
        let healthy = { @Sendable (_: Request, _: BasicRequestContext) -> Response in
            Response(status: .ok, headers: [.contentType: "text/plain", .cacheControl: "no-cache"], body: ResponseBody(byteBuffer: ByteBuffer(string: "ok")))
        }
        routes.get("health", use: healthy)
        if let healthCheckPath, !healthCheckPath.trimmingCharacters(in: CharacterSet(charactersIn: "/")).isEmpty {
            router.get(RouterPath(healthCheckPath.trimmingCharacters(in: CharacterSet(charactersIn: "/"))), use: healthy)
        }
        routes.get("health/live", use: healthy)
        routes.get("health/ready") { _, _ -> Response in
            readiness.isDraining
                ? Response(status: .serviceUnavailable, body: ResponseBody(byteBuffer: ByteBuffer(string: "draining")))
                : Response(status: .ok, body: ResponseBody(byteBuffer: ByteBuffer(string: "ok")))
        }
        router.get("/metrics") { _, _ in ServeMetrics.response(registry) }
        if !headRenders.isOn {
            // imgproxy answers HEAD of any path 200, without a check or a render.
            routes.head("**") { _, _ in Response(status: .ok, headers: [.contentType: "text/plain"]) }
        }
        let images = ImageServer<BasicRequestContext>(configuration: configuration)
        images.addRoutes(to: routes, head: headRenders.isOn)
        // Before the first request (and before "listening on"): the first requests find the codecs warm.
        let warmUpStarted = ContinuousClock.now
        if await images.warmUp().isEmpty {
            logger.warning("the warm-up render of a JPEG and a PNG failed; the first requests will show why")
        } else {
            logger.debug("warmed up the codecs in \(ContinuousClock.now - warmUpStarted)")
        }

        let address = try http.address(host: host, port: port)
        // Room for every client, and for the sources, caches and stores beside them.
        let descriptors = DescriptorLimit.raise(toFit: maxClients + DescriptorLimit.reserve)
        let clients = min(maxClients, max(1, descriptors - DescriptorLimit.reserve))
        if clients < maxClients {
            logger.warning("the descriptor limit is \(descriptors): at most \(clients) clients, not \(maxClients)")
        }
        let connections = ConnectionGuard(limits: .init(readRequestTimeout: readRequestTimeout, keepAliveTimeout: keepAliveTimeout,
                                                        maximumConnections: clients, writeResponseTimeout: http.writeResponseTimeout))
        var bindAddress: BindAddress
        var reusePort: ReusePortListener?
        switch address {
        case .tcp(let host, let port) where http.soReuseport:
            // Hummingbird cannot set SO_REUSEPORT: the listener of its own accepts for the application.
            let listener = try ReusePortListener(host: host, port: port, backlog: 1024, logger: logger) { bound in
                Output.line("listening on http://\(host.contains(":") ? "[\(host)]" : host):\(bound)")
            }
            bindAddress = listener.applicationAddress
            reusePort = listener
        case .tcp(let host, let port): bindAddress = .hostname(host, port: port)
        case .unix(let path):
            // A socket left by a server that crashed is replaced; any other file is not.
            var status = stat()
            if lstat(path, &status) == 0, (status.st_mode & S_IFMT) == S_IFSOCK { unlink(path) }
            bindAddress = .unixDomainSocket(path: path)
        }
        let listener = reusePort
        let app = Application(
            router: router,
            server: listener?.builder(connections.http1Configuration()) ?? .http1(configuration: connections.http1Configuration()),
            configuration: .init(address: bindAddress, serverName: serverName, backlog: 1024),
            onServerRunning: { channel in
                if listener != nil { return }
                switch address {
                case .tcp(let host, _):
                    let bound = channel.localAddress?.port ?? 0
                    Output.line("listening on http://\(host.contains(":") ? "[\(host)]" : host):\(bound)")
                case .unix(let path):
                    Output.line("listening on unix:\(path)")
                }
            },
            logger: logger
        )
        // Shut down in reverse order: the drain first, then the HTTP server,
        // then the span exporter (which sends the last spans), then the
        // metrics listener and the DogStatsD flusher (the last metrics),
        // then the OTLP metrics and log exporters.
        let drain = DrainService(readiness: readiness, delay: .milliseconds(Int(drainDelay * 1000)))
        let services: [any Service] = signals.services + metricsSystem.services(logger: logger) + (tracing.map { [$0] } ?? [])
            + [app] + (listener.map { [$0] } ?? []) + [drain]
        var group = ServiceGroupConfiguration(services: services, gracefulShutdownSignals: [.sigterm, .sigint], logger: logger)
        group.maximumGracefulShutdownDuration = .milliseconds(Int((drainDelay + drainTimeout) * 1000))
        // The folder of the application's unreached socket goes with the server.
        defer { if let listener { try? FileManager.default.removeItem(at: listener.folder) } }
        do {
            try await ServiceGroup(configuration: group).run()
        } catch {
            Output.error("imago: serve: \(error)")
            throw ExitCode(1)
        }
    }

    /// Qualities by format: imgproxy's defaults (WebP 79, AVIF 63, JPEG XL
    /// 77) with `--format-quality`'s `FORMAT=QUALITY` pairs over them.
    func formatQualities() throws -> [ImageFormat: Int] {
        var qualities: [ImageFormat: Int] = [.webp: 79, .avif: 63, .jxl: 77]
        for pair in (formatQuality ?? "").split(separator: ",") {
            let parts = pair.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
            guard parts.count == 2, let format = ProcessingOptions.OutputFormat(name: parts[0])?.imageFormat, let value = Int(parts[1]), (1...100).contains(value) else {
                throw ValidationError("--format-quality must be FORMAT=QUALITY pairs, such as jpeg=85,webp=75, not \(pair).")
            }
            qualities[format] = value
        }
        return qualities
    }

    /// `--preset`'s definitions, then the lines of `--presets-path` (blank and `#` lines skipped).
    func allPresets() throws -> [String] {
        let given = presets.map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty && !$0.hasPrefix("#") }
        guard let presetsPath else { return given.map(withColons) }
        // Read through a handle (a device such as /dev/null reads as empty), at most 1 MB.
        guard let handle = FileHandle(forReadingAtPath: presetsPath), let data = try? handle.read(upToCount: 1 << 20) ?? Data() else {
            throw ValidationError("--presets-path \(presetsPath) cannot be read.")
        }
        try? handle.close()
        let text = String(decoding: data, as: UTF8.self)
        let lines = text.split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }
        return (given + lines.filter { !$0.isEmpty && !$0.hasPrefix("#") }).map(withColons)
    }

    /// A preset definition with `--arguments-separator` written as `:`.
    func withColons(_ definition: String) -> String {
        guard argumentsSeparator != ":", let equals = definition.firstIndex(of: "=") else { return definition }
        return definition[...equals] + definition[definition.index(after: equals)...].replacingOccurrences(of: argumentsSeparator, with: ":")
    }

    /// The level `name` names, in any case; imgproxy's `warn` is `warning`.
    static func level(_ name: String) -> Logger.Level? {
        let lowered = name.lowercased()
        return Logger.Level(rawValue: lowered == "warn" ? "warning" : lowered)
    }

    /// An RFC 3339 time (`2026-01-01T00:00:00Z`, fractions and offsets allowed).
    static func rfc3339(_ text: String) -> Date? {
        let formatter = ISO8601DateFormatter()
        if let date = formatter.date(from: text) { return date }
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter.date(from: text)
    }
}

/// A setting that is on or off, in imgproxy's and Go's spellings
/// (`true`, `1`, `t`, `yes`, `on`; `false`, `0`, `f`, `no`, `off`).
struct Switch: ExpressibleByArgument, Sendable {
    let isOn: Bool
    static let on = Switch(isOn: true)

    private init(isOn: Bool) { self.isOn = isOn }

    init?(argument: String) {
        switch argument.lowercased() {
        case "1", "t", "true", "yes", "on": isOn = true
        case "0", "f", "false", "no", "off": isOn = false
        default: return nil
        }
    }

    var defaultValueDescription: String { isOn ? "true" : "false" }
}
