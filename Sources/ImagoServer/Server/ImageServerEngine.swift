#if Server
import Crypto
import Dispatch
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Imago
import ImagoSVG
import ImagoCodecs
import Logging
import Metrics
import Tracing

/// What the server answers, before any HTTP framework sees it.
struct ImageServerReply: Sendable {
    var status: Int
    var headers: [(name: String, value: String)]
    var body: Data
    /// How it was answered, for the request log: `hit` (the output cache),
    /// `store` (the result store), `miss` (rendered), `joined` (another
    /// request's render), or the error code.
    var outcome: String
    /// What follows ``body`` when the answer is streamed (a `raw` path).
    var stream: StreamedBody? = nil
}

/// The server without HTTP plumbing: parse and check the path, join or
/// admit the job, load, process and encode, answer with the right headers.
///
/// It uses the package's concurrency primitives: renders are shared jobs
/// (a ``JobRegistry`` with a limit, the bounded queue), their resizing and
/// encoding take the pipeline's decode slots, and encoded outputs are kept
/// in an ``LRUStore`` by bytes.
final class ImageServerEngine: Sendable {
    let configuration: ImageServerConfiguration
    let pipeline: ImagePipeline
    let renders: JobRegistry<RenderIdentity, RenderedImage>
    /// `/info` answers in progress, by source: JSON bodies.
    let descriptions: JobRegistry<URL, Data>
    /// The guarded loader the pipeline uses, for `/info`'s raw bytes.
    let loader: GuardedDataLoader
    let outputs: LRUStore<RenderIdentity, RenderedImage>
    let metrics: ServerMetrics
    /// How many `raw` sources are being streamed; at most ``ImageServerConfiguration/maximumConcurrentStreams``.
    let streams = Locked(0)
    /// The S3 loader sources and an `s3://` result store use, when S3 is configured.
    let s3Loader: S3DataLoader?
    /// How many sources were decoded, for tests of merged work.
    let decodes = Locked(0)
    /// The bytes renders may hold at once.
    let memory: MemoryBudget
    /// The pipeline's decoder, which draws SVG sources in a child process.
    let svgDecoder: SVGAwareDecoder

    /// How many sources were decoded (a still or an animation each).
    var decodeCount: Int { decodes.withLock { $0 } }

    init(configuration: ImageServerConfiguration) {
        self.configuration = configuration
        let transport = configuration.transport
            ?? ImageServerConfiguration.defaultTransport(logger: configuration.logger, maximumBytes: configuration.maximumSourceBytes,
                                                         maximumConnectionsPerHost: configuration.maximumDownloadsPerHost,
                                                         fetching: configuration.sourceFetching)
        var policy = configuration.sourcePolicy
        policy.allowsS3 = policy.allowsS3 || configuration.s3 != nil
        policy.allowsGCS = policy.allowsGCS || configuration.gcs != nil
        let s3Loader = configuration.s3.map { S3DataLoader(configuration: $0, transport: RetryingDataLoader(wrapping: transport)) }
        self.s3Loader = s3Loader
        let gcsLoader = configuration.gcs.map {
            S3DataLoader(configuration: $0, transport: RetryingDataLoader(wrapping: transport), service: .googleCloudStorage)
        }
        let loader = GuardedDataLoader(
            transport: transport,
            policy: policy,
            resolver: configuration.resolver,
            maximumRedirects: max(0, configuration.sourceFetching.maximumRedirects),
            userAgent: configuration.sourceFetching.userAgent,
            files: FileDataLoader(maximumResponseSize: configuration.maximumSourceBytes),
            s3: s3Loader,
            gcs: gcsLoader,
            downloadsPerHost: configuration.maximumDownloadsPerHost,
            totalDownloads: configuration.maximumConcurrentDownloads,
            hostSlotWait: configuration.hostSlotWait
        )
        self.loader = loader
        var pipelineConfiguration = ImagePipeline.Configuration.withCodecs
        svgDecoder = SVGAwareDecoder(wrapping: pipelineConfiguration.decoder, rasterizer: Self.svgRasterizer(configuration),
                                     sanitizer: Self.svgSanitizer(configuration))
        pipelineConfiguration.decoder = svgDecoder
        pipelineConfiguration.dataLoader = loader
        pipelineConfiguration.dataCache = configuration.dataCache
        // Outputs are kept encoded (`outputs`); bitmaps are not kept.
        pipelineConfiguration.imageCache = nil
        // A still output needs an animation's first frame only (so only it
        // counts against the pixel limit); animations are decoded frame by
        // frame, by `animated(...)`.
        pipelineConfiguration.decodingOptions.frameIndex = 0
        pipelineConfiguration.decodingOptions.maximumPixelCount = max(1, configuration.maximumSourcePixels)
        pipelineConfiguration.decodingOptions.liftsPNGChunkLimits = configuration.liftsPNGChunkLimits
        pipelineConfiguration.logger = configuration.logger
        // The loader limits downloads, per host then in all (`DownloadSlots`): the data stage
        // does not, or a slow host's waiting downloads would hold its slots and delay every host.
        pipelineConfiguration.maximumConcurrentDownloads = max(1, configuration.workers + configuration.maximumQueue,
                                                               configuration.maximumConcurrentDownloads)
        pipelineConfiguration.maximumConcurrentDecodes = max(1, configuration.workers)
        pipelineConfiguration.maximumConcurrentProcessing = max(1, configuration.workers)
        pipeline = ImagePipeline(configuration: pipelineConfiguration)
        renders = JobRegistry(queue: pipeline.decodeSlots, limit: max(1, configuration.workers) + max(0, configuration.maximumQueue))
        // At most as many `/info` loads at once as source downloads.
        descriptions = JobRegistry(queue: pipeline.decodeSlots, limit: max(1, configuration.maximumConcurrentDownloads))
        // An output larger than a quarter of the budget is not kept.
        outputs = LRUStore(costLimit: configuration.outputCacheCapacity, entryCostLimit: configuration.outputCacheCapacity / 4)
        metrics = ServerMetrics()
        memory = MemoryBudget(limit: configuration.maximumMemory)
    }

    /// How many distinct jobs are admitted and not finished.
    var jobsInProgress: Int { renders.count }

    /// Answers a GET (or HEAD) for `path`, the part after the mount point,
    /// exactly as sent.
    func reply(path: String, headers: RequestHeaders) async -> ImageServerReply {
        metrics.inFlight.increment()
        let started = DispatchTime.now().uptimeNanoseconds
        defer { metrics.inFlight.decrement() }
        let reply: ImageServerReply
        do {
            // The request's deadline: past it, a 503 at once; the render
            // (which has the same deadline) stops at its next check.
            reply = try await withinDeadline(configuration.timeout, timeout: { _ in ImageServerError.timedOut }) { [self] in
                try await answer(path: path, headers: headers)
            }
        } catch {
            reply = errorReply(ImageServerError(answering: error))
        }
        metrics.responded(reply, nanoseconds: DispatchTime.now().uptimeNanoseconds - started)
        return reply
    }

    func answer(path: String, headers request: RequestHeaders) async throws(ImageServerError) -> ImageServerReply {
        let (accept, ifNoneMatch) = (request["accept"], request["if-none-match"])
        if let secret = configuration.secret, !Self.constantTimeEquals(request["authorization"] ?? "", "Bearer " + secret) {
            throw ImageServerError(.badSecret, "the request does not carry the server's secret (Authorization: Bearer ...)")
        }
        var path = try ImageServerPath(parsing: path, presets: configuration.presets, rules: configuration.urlRules,
                                       defaults: configuration.defaultOptions)
        if configuration.usesClientHints { path.options.applyClientHints(request) }
        path.options.skipProcessingFormats.formUnion(configuration.skipProcessingFormats)
        let parsed = path
        try checkSignature(of: parsed)
        if let expires = parsed.options.expires, Date().timeIntervalSince1970 > Double(expires) {
            throw ImageServerError(.expired, "the URL expired at Unix time \(expires)")
        }
        if !configuration.allowsSecurityOptions, let option = ProcessingOptionSpec.securityOptions(in: parsed.options, beyond: configuration.defaultOptions).first {
            throw ImageServerError(.forbiddenOption, "\(option) is a security option, which this server does not allow in paths")
        }
        try loader.policy.check(parsed.source)
        let expires = parsed.options.expires
        if parsed.isInfo { return try await describe(parsed.source, expires: expires, ifNoneMatch: ifNoneMatch) }
        let disposition = ContentDisposition(source: parsed.source, filename: parsed.options.filename,
                                             attachment: parsed.options.returnsAttachment)
        if parsed.options.isRaw { return try await streamed(parsed.source, request: request, disposition: disposition, expires: expires) }
        // A path that names svg leaves nothing to negotiate.
        let policy = configuration.outputPolicy
        let requested = parsed.options.format?.imageFormat
        let choice = parsed.options.requestsSVG ? (format: nil, variesWithAccept: false)
            : policy.negotiated(requested: requested, accept: accept)
        var chosen = parsed.options
        // Negotiation picks only formats the server writes.
        chosen.format = choice.format.flatMap(ProcessingOptions.OutputFormat.init)
        // What only shapes the headers is not part of the render's identity.
        (chosen.filename, chosen.returnsAttachment, chosen.expires) = (nil, false, nil)
        let options = chosen
        let animates = SourceLimits(configuration, options: options).animates
        let animatedChoice = policy.negotiated(requested: requested, accept: accept, animated: true)
        let key = RenderIdentity(source: parsed.source, options: options,
                                 requestedFormat: options.skipProcessingFormats.isEmpty ? nil : parsed.options.format,
                                 animatedFormat: animates ? animatedChoice.format.flatMap(ProcessingOptions.OutputFormat.init) : nil)

        if let kept = outputs.value(for: key) {
            metrics.outputCache(hit: "hit")
            return okReply(kept, variesWithAccept: choice.variesWithAccept, disposition: disposition, expires: expires,
                           request: request, source: parsed.source, outcome: "hit")
        }
        // A client that holds a version asks the source whether it changed: a 304 costs no render.
        if let unchanged = await sourceNotModified(parsed.source, request: request, variesWithAccept: choice.variesWithAccept, expires: expires) {
            return unchanged
        }
        let (rendered, outcome): (RenderedImage, String)
        do {
            (rendered, outcome) = try await joinedOrRendered(key) { [self] job in
                try await render(parsed.source, options: options, key: key, job: job)
            }
        } catch where error.failedLoading && FallbackImage.answers(error) {
            guard let fallback = configuration.fallbackImage else { throw error }
            return try await fallbackReply(for: key, failure: error, fallback: fallback, variesWithAccept: choice.variesWithAccept,
                                           disposition: disposition, expires: expires)
        }
        return okReply(rendered, variesWithAccept: choice.variesWithAccept, disposition: disposition, expires: expires,
                       request: request, source: parsed.source, outcome: outcome)
    }

    /// The render under `key`: another request's when one is under way
    /// (`joined`), else a new job that runs `render` (`miss`, or `store`
    /// when it found its output in the result store).
    func joinedOrRendered(
        _ key: RenderIdentity, render: @escaping @Sendable (SharedJob<RenderedImage>) async throws -> RenderedImage
    ) async throws(ImageServerError) -> (RenderedImage, outcome: String) {
        let ticket: JobRegistry<RenderIdentity, RenderedImage>.Ticket
        do {
            ticket = try renders.enter(key, subscription: JobSubscription(priority: .normal), work: render)
        } catch {
            throw ImageServerError(.saturated, "the server is busy; retry in a moment")
        }
        let outcome = ticket.joined ? "joined" : "miss"
        metrics.outputCache(hit: outcome)
        // Waited for in a task of its own, which a client that hangs up does
        // not cancel: the render finishes, keeps its output for the next
        // request and gives its place back.
        let result = await Task { [renders] in
            do {
                return Result<RenderedImage, ImageServerError>.success(try await renders.value(of: ticket))
            } catch {
                return .failure(error as? ImageServerError ?? ImageServerError(answering: error))
            }
        }.value
        let rendered = try result.get()
        // A job that found its output in the result store made none.
        return (rendered, outcome == "miss" && rendered.sourceLayer == RenderedImage.storeLayer ? "store" : outcome)
    }

    /// The answer with the ``FallbackImage`` in place of a source that did
    /// not load (`failure`), rendered with the request's options (and kept
    /// in the output cache under ``FallbackImage/source``): its status, and
    /// its time to live (no later than the URL's `expires`); no validators.
    func fallbackReply(
        for key: RenderIdentity, failure: ImageServerError, fallback: FallbackImage, variesWithAccept: Bool,
        disposition: ContentDisposition, expires: Int?
    ) async throws(ImageServerError) -> ImageServerReply {
        configuration.logger.warning("the source could not be loaded; answering with the fallback image: \(failure)")
        let fallbackKey = RenderIdentity(source: FallbackImage.source, options: key.options, requestedFormat: key.requestedFormat,
                                         animatedFormat: key.animatedFormat)
        let rendered: RenderedImage
        if let kept = outputs.value(for: fallbackKey) {
            rendered = kept
        } else {
            let bytes = SourceBytes(data: fallback.data, source: .memory, duration: 0)
            (rendered, _) = try await joinedOrRendered(fallbackKey) { [self] job in
                try await render(FallbackImage.source, options: fallbackKey.options, key: fallbackKey, job: job, fallback: bytes)
            }
        }
        let status = fallback.status ?? failure.status
        var headers: [(name: String, value: String)] = []
        if let cacheControl = configuration.caching.fallbackCacheControl(
            timeToLive: configuration.timeToLive, fallbackTimeToLive: fallback.timeToLive, expires: expires, status: status
        ) {
            headers.append(("Cache-Control", cacheControl))
        }
        if let vary = vary(variesWithAccept: variesWithAccept) { headers.append(("Vary", vary)) }
        headers.append(("Content-Type", rendered.mimeType))
        headers.append(("Content-Disposition", disposition.value(extension: rendered.fileExtension)))
        return ImageServerReply(status: status, headers: headers, body: rendered.data, outcome: "fallback")
    }

    /// Whether `given` equals `expected`, in a time that does not depend on where they differ.
    static func constantTimeEquals(_ given: String, _ expected: String) -> Bool {
        let (left, right) = (Array(given.utf8), Array(expected.utf8))
        var difference = UInt8(left.count == right.count ? 0 : 1)
        for index in 0..<right.count { difference |= (index < left.count ? left[index] : 0) ^ right[index] }
        return difference == 0
    }

    func checkSignature(of path: ImageServerPath) throws(ImageServerError) {
        guard !configuration.acceptsUnsignedPaths, !configuration.trustedSignatures.contains(path.signature) else { return }
        guard !configuration.signingKeys.isEmpty else {
            throw ImageServerError(.badSignature, "the server has no signing key and does not accept unsigned paths")
        }
        // Every key is tried, so the time taken does not tell which matched.
        var valid = false
        for key in configuration.signingKeys {
            valid = key.isValid(signature: path.signature, forPath: path.signedPart, size: configuration.signatureSize) || valid
        }
        guard valid else { throw ImageServerError(.badSignature, "the signature does not match the path") }
    }

    func okReply(_ rendered: RenderedImage, variesWithAccept: Bool, disposition: ContentDisposition, expires: Int?,
                 request: RequestHeaders, source sourceURL: URL, outcome: String) -> ImageServerReply {
        let caching = configuration.caching
        let source = rendered.sourceCacheHeaders
        var headers = validatorHeaders(etag: caching.etag(source: source, bytesTag: rendered.etag), lastModified: caching.lastModified(source: source),
                                       cacheControl: caching.cacheControl(timeToLive: configuration.timeToLive, expires: expires, source: source),
                                       variesWithAccept: variesWithAccept)
        if caching.isNotModified(ifNoneMatch: caching.sendsETag ? request["if-none-match"] : nil,
                                 ifModifiedSince: caching.sendsLastModified ? request["if-modified-since"] : nil,
                                 etag: headers.first { $0.name == "ETag" }?.value, lastModified: headers.first { $0.name == "Last-Modified" }?.value) {
            return ImageServerReply(status: 304, headers: headers, body: Data(), outcome: outcome)
        }
        headers.append(("Content-Type", rendered.mimeType))
        headers.append(("Content-Disposition", disposition.value(extension: rendered.fileExtension)))
        headers += rendered.documentHeaders
        headers.append(("Server-Timing", rendered.serverTiming))
        headers += canonicalLink(sourceURL) + debugHeaders(rendered)
        return ImageServerReply(status: 200, headers: headers, body: rendered.data, outcome: outcome)
    }

    /// `Link: <SOURCE>; rel="canonical"` for an HTTP or HTTPS source, when the server sends it.
    func canonicalLink(_ source: URL) -> [(name: String, value: String)] {
        guard configuration.sendsCanonicalLink, ["http", "https"].contains(source.scheme?.lowercased() ?? "") else { return [] }
        return [("Link", "<\(source.absoluteString)>; rel=\"canonical\"")]
    }

    /// The sizes of the source and the result, when the server sends them
    /// (the source's only when it was read for this render, not for one
    /// found in the result store).
    func debugHeaders(_ rendered: RenderedImage) -> [(name: String, value: String)] {
        guard configuration.sendsDebugHeaders, rendered.format != nil else { return [] }
        var headers: [(name: String, value: String)] = []
        if let size = rendered.sourceSize {
            headers += [("X-Origin-Width", "\(size.width)"), ("X-Origin-Height", "\(size.height)")]
        }
        if let bytes = rendered.sourceByteCount { headers.append(("X-Origin-Content-Length", "\(bytes)")) }
        if let result = try? ImageDecoders.info(for: rendered.data) {
            headers += [("X-Result-Width", "\(result.width)"), ("X-Result-Height", "\(result.height)")]
        }
        return headers
    }

    /// The headers a 200 and a 304 share: `Cache-Control`, `ETag`, `Last-Modified`, `Vary`.
    func validatorHeaders(etag: String?, lastModified: String?, cacheControl: String, variesWithAccept: Bool) -> [(name: String, value: String)] {
        var headers: [(name: String, value: String)] = [("Cache-Control", cacheControl)]
        if let etag { headers.append(("ETag", etag)) }
        if let lastModified { headers.append(("Last-Modified", lastModified)) }
        if let vary = vary(variesWithAccept: variesWithAccept) { headers.append(("Vary", vary)) }
        return headers
    }

    /// The answer's `Vary`: `Accept` when the format was negotiated, and the client hints when they are read.
    func vary(variesWithAccept: Bool) -> String? {
        let vary = (variesWithAccept ? ["Accept"] : []) + (configuration.usesClientHints ? ProcessingOptions.clientHintHeaders : [])
        return vary.isEmpty ? nil : vary.joined(separator: ", ")
    }

    func errorReply(_ error: ImageServerError) -> ImageServerReply {
        var headers: [(name: String, value: String)] = [("Content-Type", "application/json")]
        if let cacheControl = configuration.caching.errorCacheControl { headers.append(("Cache-Control", cacheControl)) }
        if error.code == .saturated { headers.append(("Retry-After", "1")) }
        return ImageServerReply(status: error.status, headers: headers, body: error.jsonBody, outcome: error.code.name)
    }
}

#endif
