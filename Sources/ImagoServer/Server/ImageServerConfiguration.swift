#if Server
import Foundation
import Imago
import ImagoSVG
import ImagoAsyncHTTPClient
import ImagoCodecs
import Logging

/// How an ``ImageServer`` checks, loads, limits and answers.
///
/// ```swift
/// var configuration = ImageServerConfiguration(signingKeys: [try SigningKey(hexKey: key, hexSalt: salt)])
/// configuration.sourcePolicy = SourcePolicy(allowedHosts: ["images.example.com", "*.cdn.example.com"])
/// configuration.dataCache = try DataCache(directory: cacheURL)
/// ```
public struct ImageServerConfiguration: Sendable {
    /// The keys a path's signature may be made with; several allow a key rotation.
    public var signingKeys: [SigningKey]
    /// Whether any signature segment is accepted (`insecure` by convention):
    /// for development only.
    public var acceptsUnsignedPaths: Bool
    /// Signatures accepted as they are, whatever the path (imgproxy's
    /// `IMGPROXY_TRUSTED_SIGNATURES`), for URLs a trusted party made by
    /// hand. Default: none.
    public var trustedSignatures: Set<String>
    /// A secret every image request must carry as `Authorization: Bearer
    /// SECRET` (imgproxy's `IMGPROXY_SECRET`), for a server only a CDN or a
    /// proxy that adds it may reach; without it the answer is 403
    /// ``ImageServerError/Code/badSecret``. Default: none.
    public var secret: String?
    /// How many bytes of the HMAC-SHA256 digest a signature carries, 1 to 32
    /// (imgproxy's `IMGPROXY_SIGNATURE_SIZE`). Default: 32, the whole digest.
    public var signatureSize: Int
    /// Which sources may be fetched.
    public var sourcePolicy: SourcePolicy
    /// How many images are decoded, processed and encoded at once. Default: the cores.
    public var workers: Int
    /// How many distinct images may wait beyond those the workers hold
    /// before the server answers 503 with `Retry-After`. Requests for an
    /// image already in progress join it and take no place.
    public var maximumQueue: Int
    /// The most seconds a request may take, its wait for a worker, its
    /// download and its render together (imgproxy's `IMGPROXY_TIMEOUT`).
    /// Past it the answer is 503 (``ImageServerError/Code/timedOut``), and
    /// the render stops at its next check (every row of the resampler, the
    /// canvas, watermark, trim, blur and sharpen loops, every frame of an
    /// animation) instead of running on. Default: 10.
    public var timeout: Double
    /// How many sources download at once. Default: 8 per worker, at least 32.
    public var maximumConcurrentDownloads: Int
    /// How many sources download from one host at once; the others wait,
    /// each for at most ``hostSlotWait`` seconds, then fail as a timed-out
    /// source (504). A download takes its host's slot before one of
    /// ``maximumConcurrentDownloads``, so one slow host holds at most this
    /// many of those, and never delays another host's. Default: half of
    /// ``maximumConcurrentDownloads`` (4 per worker, at least 16): enough
    /// for one origin (a bucket, a CDN) with a 20 ms round trip to keep
    /// every worker busy, as most deployments fetch from a single host
    /// (`Benchmarks/workers.md`).
    public var maximumDownloadsPerHost: Int
    /// The most seconds a download waits for a slot of its host. Default: 5
    /// (imgproxy's `IMGPROXY_DOWNLOAD_TIMEOUT`).
    public var hostSlotWait: Double
    /// How many `raw` sources stream at once, apart from the image
    /// downloads: beyond it a `raw` request is answered 503. Default:
    /// ``maximumConcurrentDownloads``.
    public var maximumConcurrentStreams: Int
    /// `Cache-Control: max-age=` this many seconds, `public`; 0: `no-cache`
    /// (imgproxy's `IMGPROXY_TTL`). Default: one year.
    public var timeToLive: Int
    /// How answers are cached and revalidated: the source's `ETag` and
    /// `Last-Modified`, conditional requests passed to the source, the
    /// source's `Cache-Control` passed on.
    public var caching: HTTPCaching
    /// How the output format and quality are chosen, the library's one
    /// decision (``Imago/OutputPolicy``): formats picked from the client's
    /// `Accept` (imgproxy's `IMGPROXY_AUTO_*` and `IMGPROXY_ENFORCE_*`),
    /// the formats animations stay animated in (GIF and WebP, as imgproxy),
    /// and the quality when a path names none (`nil`: each format's own
    /// default, the same as the library's and `imago fetch`'s: JPEG 85,
    /// WebP 80, AVIF 60). Default: nothing negotiated.
    ///
    /// ```swift
    /// configuration.outputPolicy = OutputPolicy(automatic: [.avif, .webp], defaultQuality: 80)
    /// ```
    public var outputPolicy: OutputPolicy
    /// Whether a path without a format gets WebP when the client's `Accept`
    /// lists it: WebP among ``outputPolicy``'s automatic formats.
    public var automaticWebP: Bool {
        get { outputPolicy.automatic.contains(.webp) }
        set { if newValue { outputPolicy.automatic.insert(.webp) } else { outputPolicy.automatic.remove(.webp) } }
    }
    /// The largest width or height of an output image, padding and
    /// extension included: a larger result is scaled down to fit.
    public var maximumOutputSide: Int
    /// Whether paths may set security options (`max_result_dimension`);
    /// otherwise such a path is refused with 403, as imgproxy does unless
    /// `IMGPROXY_ALLOW_SECURITY_OPTIONS` is on. Default: `false`.
    public var allowsSecurityOptions: Bool
    /// How a path's source is read beyond its encoding: imgproxy's URL
    /// replacements, base URL, file name after base64, argument separator.
    public var urlRules: ImageServerURLRules
    /// Whether the client's hints set the width and the device pixel ratio
    /// a path leaves unset (`Sec-CH-Width` or `Width`, divided by the ratio;
    /// `Sec-CH-DPR` or `DPR`, up to 8), answered with `Vary` on them
    /// (imgproxy's `IMGPROXY_ENABLE_CLIENT_HINTS`). Default: `false`.
    public var usesClientHints: Bool
    /// Source formats sent as they are whenever the path names no other
    /// format, as if every path said `skip_processing` with them (imgproxy's
    /// `IMGPROXY_SKIP_PROCESSING_FORMATS`). Default: none.
    public var skipProcessingFormats: Set<ImageFormat>
    /// Whether an SVG source is drawn even when the path names no format
    /// (imgproxy's `IMGPROXY_ALWAYS_RASTERIZE_SVG`), unless
    /// ``keepsSVGUnprocessed``. Default: `false`: it is answered with its
    /// sanitised document.
    public var alwaysRasterizesSVG: Bool
    /// Whether an SVG source stays SVG when ``alwaysRasterizesSVG`` is on
    /// (`svg` in `IMGPROXY_SKIP_PROCESSING_FORMATS`). Default: `false`.
    public var keepsSVGUnprocessed: Bool
    /// The options every path starts from, before the `default` preset and
    /// the path's own: where a server changes imgproxy's defaults, such as
    /// `stripsMetadata`, `keepsCopyright`, `stripsColorProfile`,
    /// `autoRotates`, `enforcesThumbnail` (imgproxy's `IMGPROXY_STRIP_METADATA`,
    /// `_KEEP_COPYRIGHT`, `_STRIP_COLOR_PROFILE`, `_AUTO_ROTATE`,
    /// `_ENFORCE_THUMBNAIL`). Security options set here are the server's
    /// own, not checked against ``allowsSecurityOptions``. Default: `ProcessingOptions()`.
    public var defaultOptions: ProcessingOptions
    /// Whether an SVG answered as SVG is sanitised first (scripts, event
    /// handlers, external references and unsafe styles removed); `false`
    /// sends it as the source gave it, still under a sandboxing
    /// `Content-Security-Policy` (imgproxy's `IMGPROXY_SANITIZE_SVG`). Default: `true`.
    public var sanitizesSVG: Bool
    /// Whether PNG sources' ancillary chunks (text, EXIF, colour profiles)
    /// may exceed libspng's standard limits (imgproxy's
    /// `IMGPROXY_PNG_UNLIMITED`): the decoders'
    /// ``Imago/ImageDecodingOptions/liftsPNGChunkLimits``, which says what
    /// stays bounded (the chunks' memory, at most 4 bytes per pixel of
    /// ``maximumSourcePixels``; the pixel and frame limits; the source's
    /// size, by ``maximumSourceBytes``). Default: `false`: a source over the
    /// standard limits is answered `422 source_too_large`.
    public var liftsPNGChunkLimits: Bool
    /// Whether SVG sources are read with libxml2's limits for huge
    /// documents lifted (imgproxy's `IMGPROXY_SVG_UNLIMITED`, librsvg's
    /// `RSVG_HANDLE_FLAG_UNLIMITED`), by the sanitiser and by librsvg in the
    /// rasterizer's child: documents and attribute values (path data,
    /// embedded images) over 10 MB, names over 50,000 bytes, and elements
    /// nested deeper than 256 (up to 2,048). What stays: the source's size
    /// (``maximumSourceBytes``), the sanitiser's element, instance, filter
    /// and embedded-pixel limits, the pixel limit, librsvg's own element
    /// and reference limits, and the child's memory limit
    /// (``svgRasterizerMemoryLimit``) and timeout (``svgRasterizerTimeout``),
    /// the real bounds on what a document costs. Default: `false`: a source
    /// over the size limits is answered `422 source_too_large`, one nested
    /// deeper than 256 `422 undecodable`.
    public var liftsSVGXMLLimits: Bool
    /// Whether a `raw` answer passes the client's `Cookie` to the source
    /// (imgproxy's `IMGPROXY_COOKIE_PASSTHROUGH`). Default: `nil`, never.
    public var cookiePassthrough: CookiePassthrough?
    /// How the encoders write: progressive JPEG, interlaced or quantized
    /// PNG, WebP's preset and effort, AVIF's speed, JPEG XL's effort
    /// (imgproxy's compression variables). Default: each encoder's own.
    public var encoderSettings: EncoderSettings
    /// Whether processed answers carry `X-Origin-Width`, `X-Origin-Height`,
    /// `X-Origin-Content-Length`, `X-Result-Width` and `X-Result-Height`
    /// (imgproxy's `IMGPROXY_ENABLE_DEBUG_HEADERS`). Default: `false`.
    public var sendsDebugHeaders: Bool
    /// Whether answers for HTTP and HTTPS sources carry
    /// `Link: <SOURCE>; rel="canonical"` (imgproxy's `IMGPROXY_SET_CANONICAL_HEADER`),
    /// so search engines credit the source. Default: `false`.
    public var sendsCanonicalLink: Bool
    /// The presets paths may use (`preset:NAME`); the `default` one applies
    /// to every path. Default: none.
    public var presets: ImageServerPresets
    /// The image answered in place of a source that cannot be loaded
    /// (``FallbackImage``); `nil` (the default) answers the failure's error.
    public var fallbackImage: FallbackImage?
    /// The image `watermark` draws, decoded once (colour-managed to sRGB
    /// by the decoder), for example `try ImageDecoders.all.decode(data)`;
    /// `nil` (the default): paths that ask for a watermark get none, as
    /// with imgproxy when no watermark is configured.
    public var watermark: Image?
    /// What every path's watermark opacity is multiplied by (imgproxy's
    /// `IMGPROXY_WATERMARK_OPACITY`), from 0 to 1. Default: 1.
    public var watermarkOpacity: Double
    /// The most frames of an animated source that are processed (imgproxy's
    /// `IMGPROXY_MAX_ANIMATION_FRAMES`): with more than 1, an animated
    /// GIF, WebP, APNG, AVIF or JPEG XL source written in one of
    /// ``outputPolicy``'s animated formats (GIF and WebP) stays animated,
    /// its first this-many frames resized one at a time; with 1 (the default, as imgproxy), animations give their first frame.
    public var maximumAnimationFrames: Int
    /// When set, animations are checked frame by frame against this many
    /// pixels instead of in total against ``maximumSourcePixels``
    /// (imgproxy's `IMGPROXY_MAX_ANIMATION_FRAME_RESOLUTION`). Default: `nil`.
    public var maximumAnimationFramePixels: Int?
    /// Where rendered images are kept for every replica (``FileResultStore``,
    /// ``S3ResultStore``); `nil` (the default): none. A result older than
    /// ``timeToLive`` is rendered again; replicas sharing a store must share
    /// their configuration (watermark, presets, qualities).
    public var resultStore: (any ResultStore)?
    /// The most seconds a result-store lookup or write may take; a lookup
    /// that takes longer is a miss, a write that takes longer is given up
    /// (each with a warning and a metric). Default: 3.
    public var resultStoreTimeout: Double
    /// How `s3://BUCKET/KEY` sources are loaded; `nil` (the default)
    /// refuses them. Setting it allows them in ``sourcePolicy``.
    public var s3: S3DataLoader.Configuration?
    /// How `gs://BUCKET/KEY` sources are loaded from Google Cloud Storage,
    /// through its S3-compatible XML API with an HMAC key
    /// (``S3DataLoader/Configuration/googleCloudStorage(endpoint:credentials:)``);
    /// `nil` (the default) refuses them. Setting it allows them in ``sourcePolicy``.
    public var gcs: S3DataLoader.Configuration?
    /// The most pixels a source may decode to, counted over an animation's
    /// frames (imgproxy's `IMGPROXY_MAX_SRC_RESOLUTION`). Default: 50 megapixels.
    public var maximumSourcePixels: Int
    /// The largest source, in bytes, read from a `local:///` file; the
    /// default HTTP transport has the same limit. Default: 25 MB.
    public var maximumSourceBytes: Int
    /// The largest EXIF block a result keeps (with `strip_metadata:0` or
    /// `keep_copyright`); a larger one is not copied, with a log line.
    /// Default: 64 KB, what a JPEG `APP1` segment holds.
    public var maximumKeptExifBytes: Int
    /// The largest colour profile a result keeps (`strip_color_profile:0`);
    /// with a larger one the pixels are converted to sRGB instead, with a
    /// log line. Default: 1 MB.
    public var maximumKeptProfileBytes: Int
    /// The bytes renders may hold at once: each reserves what it will
    /// allocate (its source, decoded canvas, intermediates and the
    /// encoder's working set for its format and size) before it decodes,
    /// so concurrent large renders queue instead of growing the process; a
    /// render larger than the budget runs alone. Memory is handed back to
    /// the system after large renders. A quarter more holds the downloaded
    /// sources waiting for a worker: a source that does not fit is answered
    /// 503 `saturated` rather than kept waiting with its bytes. Default:
    /// half the machine's memory, from 512 MB to 8 GB. (The output cache,
    /// ``outputCacheCapacity``, comes on top.)
    public var maximumMemory: Int
    /// The `imago-svg-rasterizer` executable SVG sources are drawn in, one
    /// child process per document; `nil` (the default): the one
    /// `IMAGO_SVG_RASTERIZER` names, else the one beside the running
    /// executable (``SVGRasterizerProcess/defaultExecutable(environment:)``).
    /// When it is missing the server logs it once at start and answers SVG
    /// sources asked for as raster images with `422`.
    public var svgRasterizerExecutable: URL?
    /// The most seconds one SVG document may take to draw, in its child
    /// process, wall-clock (its CPU time is limited to the same, rounded
    /// up); past it the child is killed and the request answered `422`.
    /// Only SVG sources: it is not a deadline for other renders. Default: 10.
    public var svgRasterizerTimeout: Double
    /// The address space (`RLIMIT_AS`) of the child process that draws an
    /// SVG document, in bytes; a document that needs more is answered
    /// `422`. Default: 1 GiB.
    public var svgRasterizerMemoryLimit: Int
    /// How many bytes of encoded output the server keeps in memory. Default: 64 MB.
    public var outputCacheCapacity: Int
    /// Where source bytes are kept between requests and replicas (`nil`: nowhere).
    public var dataCache: (any DataCaching)?
    /// Whether a request's span continues the trace its `traceparent`
    /// header names (a span a middleware opened is continued either way).
    /// Off, each request starts a trace of its own, and a client cannot
    /// choose trace ids or turn sampling on (imgproxy's default: its
    /// `IMGPROXY_OPEN_TELEMETRY_PROPAGATE_EXTERNAL` turns it on). Default:
    /// `true`, as OpenTelemetry's HTTP servers do.
    public var continuesClientTraces: Bool
    /// How `http` and `https` sources are fetched: the user agent, the
    /// download timeout, redirects, kept-alive connections, certificates.
    public var sourceFetching: SourceFetching
    /// The network loader; it must not follow redirects, since the server
    /// follows and checks them itself. `nil` (the default): an
    /// `AsyncHTTPClientDataLoader` with redirects off, set up from
    /// ``sourceFetching``.
    public var transport: (any DataLoading)?
    /// How host names are resolved for the source check.
    public var resolver: any HostResolving
    /// Where the server logs: one line per request at `info`, failures of
    /// sources at `info`, its own faults at `error`.
    public var logger: Logger

    /// The default ``maximumDownloadsPerHost`` for `workers` workers: 4 each, at least 16.
    public static func downloadsPerHost(workers: Int) -> Int { max(16, 4 * workers) }

    /// Creates a configuration with the defaults above.
    public init(signingKeys: [SigningKey] = [], acceptsUnsignedPaths: Bool = false) {
        self.signingKeys = signingKeys
        self.acceptsUnsignedPaths = acceptsUnsignedPaths
        self.secret = nil
        self.trustedSignatures = []
        self.signatureSize = SigningKey.digestSize
        self.sourcePolicy = SourcePolicy()
        let cores = max(1, ProcessInfo.processInfo.activeProcessorCount)
        self.workers = cores
        self.maximumQueue = 256
        self.timeout = 10
        self.maximumConcurrentDownloads = max(32, 8 * cores)
        self.maximumDownloadsPerHost = Self.downloadsPerHost(workers: cores)
        self.hostSlotWait = 5
        self.maximumConcurrentStreams = max(32, 8 * cores)
        self.timeToLive = 31_536_000
        self.caching = HTTPCaching()
        self.outputPolicy = OutputPolicy()
        self.maximumOutputSide = ImageServerPath.maximumOutputSide
        self.allowsSecurityOptions = false
        self.presets = .none
        self.defaultOptions = ProcessingOptions()
        self.sendsDebugHeaders = false
        self.encoderSettings = EncoderSettings()
        self.cookiePassthrough = nil
        self.sanitizesSVG = true
        self.liftsPNGChunkLimits = false
        self.liftsSVGXMLLimits = false
        self.sendsCanonicalLink = false
        self.skipProcessingFormats = []
        self.alwaysRasterizesSVG = false
        self.keepsSVGUnprocessed = false
        self.usesClientHints = false
        self.urlRules = ImageServerURLRules()
        self.maximumAnimationFrames = 1
        self.maximumAnimationFramePixels = nil
        self.watermark = nil
        self.fallbackImage = nil
        self.watermarkOpacity = 1
        self.s3 = nil
        self.gcs = nil
        self.resultStore = nil
        self.resultStoreTimeout = 3
        self.maximumSourcePixels = ImageDecodingOptions.defaultMaximumPixelCount
        self.maximumSourceBytes = DataLoader.defaultMaximumResponseSize
        self.svgRasterizerExecutable = nil
        self.svgRasterizerTimeout = 10
        self.svgRasterizerMemoryLimit = 1 << 30
        self.outputCacheCapacity = 64 * 1024 * 1024
        self.maximumMemory = MemoryBudget.defaultLimit
        self.maximumKeptExifBytes = 65_533
        self.maximumKeptProfileBytes = 1 << 20
        self.dataCache = nil
        self.continuesClientTraces = true
        self.sourceFetching = SourceFetching()
        self.transport = nil
        self.resolver = SystemHostResolver()
        self.logger = Logger(label: "imago.server")
    }

    /// The loader used when ``transport`` is `nil`.
    static func defaultTransport(logger: Logger, maximumBytes: Int = DataLoader.defaultMaximumResponseSize,
                                 maximumConnectionsPerHost: Int = 8, fetching: SourceFetching = SourceFetching()) -> any DataLoading {
        var loader = AsyncHTTPClientDataLoader.Configuration()
        loader.maximumResponseSize = maximumBytes
        loader.followsRedirects = false
        loader.totalTimeout = fetching.downloadTimeout
        loader.connectionIdleTimeout = fetching.keepAliveTimeout
        loader.verifiesCertificates = fetching.verifiesCertificates
        loader.maximumConnectionsPerHost = maximumConnectionsPerHost
        return AsyncHTTPClientDataLoader(configuration: loader, logger: logger)
    }
}
#endif
