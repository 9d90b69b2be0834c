#if Server
import Crypto
import Dispatch
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Imago
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
    private let renders: JobRegistry<RenderIdentity, RenderedImage>
    /// `/info` answers in progress, by source: JSON bodies.
    private let descriptions: JobRegistry<URL, Data>
    /// The guarded loader the pipeline uses, for `/info`'s raw bytes.
    private let loader: GuardedDataLoader
    private let outputs: LRUStore<RenderIdentity, RenderedImage>
    private let metrics: ServerMetrics
    /// How many `raw` sources are being streamed; at most ``ImageServerConfiguration/maximumConcurrentStreams``.
    private let streams = Locked(0)
    /// The S3 loader sources and an `s3://` result store use, when S3 is configured.
    let s3Loader: S3DataLoader?
    /// How many sources were decoded, for tests of merged work.
    private let decodes = Locked(0)
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
                                                         maximumConnectionsPerHost: configuration.maximumDownloadsPerHost)
        var policy = configuration.sourcePolicy
        policy.allowsS3 = policy.allowsS3 || configuration.s3 != nil
        let s3Loader = configuration.s3.map { S3DataLoader(configuration: $0, transport: RetryingDataLoader(wrapping: transport)) }
        self.s3Loader = s3Loader
        let loader = GuardedDataLoader(
            transport: transport,
            policy: policy,
            resolver: configuration.resolver,
            files: FileDataLoader(maximumResponseSize: configuration.maximumSourceBytes),
            s3: s3Loader,
            downloadsPerHost: configuration.maximumDownloadsPerHost,
            totalDownloads: configuration.maximumConcurrentDownloads,
            hostSlotWait: configuration.hostSlotWait
        )
        self.loader = loader
        var pipelineConfiguration = ImagePipeline.Configuration.withCodecs
        svgDecoder = SVGAwareDecoder(wrapping: pipelineConfiguration.decoder, rasterizer: Self.svgRasterizer(configuration))
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

    /// What a render of `source` with `options` will allocate (``RenderCost``),
    /// from the header's size (`header`, parsed once per render) and the
    /// plan's; a header that does not parse counts its bytes alone (the
    /// decode then fails on its own).
    private func renderCost(of source: Data, header: ImageInfo?, options: ProcessingOptions) -> Int {
        guard let info = header else { return source.count }
        let plan = ResizePlan(sourceWidth: info.width, sourceHeight: info.height, options: options, maximumSide: configuration.maximumOutputSide)
        let output = max(plan.scaledWidth * plan.scaledHeight, plan.resultWidth * plan.resultHeight)
        // An animation is decoded a frame at a time, over a canvas of the same size.
        let decoded = info.width.multipliedReportingOverflow(by: info.height * (info.frameCount > 1 ? 2 : 1))
        return RenderCost.estimate(sourceBytes: source.count, sourceFormat: info.format, decodedPixels: decoded.overflow ? .max / 16 : decoded.partialValue,
                                   outputPixels: output, format: options.format?.imageFormat ?? info.format)
    }

    /// How many distinct jobs are admitted and not finished.
    var jobsInProgress: Int { renders.count }

    /// Answers a GET (or HEAD) for `path`, the part after the mount point,
    /// exactly as sent.
    func reply(path: String, accept: String?, ifNoneMatch: String?) async -> ImageServerReply {
        metrics.inFlight.increment()
        let started = DispatchTime.now().uptimeNanoseconds
        defer { metrics.inFlight.decrement() }
        let reply: ImageServerReply
        do {
            // The request's deadline: past it, a 503 at once; the render
            // (which has the same deadline) stops at its next check.
            reply = try await withinDeadline(configuration.timeout, timeout: { _ in ImageServerError.timedOut }) { [self] in
                try await answer(path: path, accept: accept, ifNoneMatch: ifNoneMatch)
            }
        } catch {
            reply = errorReply(ImageServerError(answering: error))
        }
        metrics.responded(reply, nanoseconds: DispatchTime.now().uptimeNanoseconds - started)
        return reply
    }

    private func answer(path: String, accept: String?, ifNoneMatch: String?) async throws(ImageServerError) -> ImageServerReply {
        let parsed = try ImageServerPath(parsing: path, presets: configuration.presets)
        try checkSignature(of: parsed)
        if let expires = parsed.options.expires, Date().timeIntervalSince1970 > Double(expires) {
            throw ImageServerError(.expired, "the URL expired at Unix time \(expires)")
        }
        if !configuration.allowsSecurityOptions, let option = ProcessingOptionSpec.securityOptions(in: parsed.options).first {
            throw ImageServerError(.forbiddenOption, "\(option) is a security option, which this server does not allow in paths")
        }
        try loader.policy.check(parsed.source)
        let maximumAge = maximumAge(expiring: parsed.options.expires)
        if parsed.isInfo { return try await describe(parsed.source, maximumAge: maximumAge, ifNoneMatch: ifNoneMatch) }
        let disposition = ContentDisposition(source: parsed.source, filename: parsed.options.filename,
                                             attachment: parsed.options.returnsAttachment)
        if parsed.options.isRaw { return try await streamed(parsed.source, disposition: disposition, maximumAge: maximumAge) }
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
        let animates = configuration.maximumAnimationFrames > 1
        let animatedChoice = policy.negotiated(requested: requested, accept: accept, animated: true)
        let key = RenderIdentity(source: parsed.source, options: options,
                                 requestedFormat: options.skipProcessingFormats.isEmpty ? nil : parsed.options.format,
                                 animatedFormat: animates ? animatedChoice.format.flatMap(ProcessingOptions.OutputFormat.init) : nil)

        if let kept = outputs.value(for: key) {
            metrics.outputCache(hit: "hit")
            return okReply(kept, variesWithAccept: choice.variesWithAccept, disposition: disposition, maximumAge: maximumAge,
                           ifNoneMatch: ifNoneMatch, outcome: "hit")
        }
        let ticket: JobRegistry<RenderIdentity, RenderedImage>.Ticket
        do {
            ticket = try renders.enter(key, subscription: JobSubscription(priority: .normal)) { [self] job in
                try await render(parsed.source, options: options, key: key, job: job)
            }
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
        let made = outcome == "miss" && rendered.sourceLayer == RenderedImage.storeLayer ? "store" : outcome
        return okReply(rendered, variesWithAccept: choice.variesWithAccept, disposition: disposition, maximumAge: maximumAge,
                       ifNoneMatch: ifNoneMatch, outcome: made)
    }

    /// Answers a `raw` path: the source's bytes streamed through unchanged
    /// as they arrive, through the guarded loader (the source policy on
    /// every redirect, the size limit), with no decode and no content
    /// check. The status comes from the source's headers and first chunk:
    /// a failure before them is answered as for images; a failure later
    /// (the size limit crossed) cuts the body short. The source's
    /// `Content-Type` is passed on only when it names an image, and the
    /// answer forbids sniffing and scripts, so a source cannot put a page
    /// on the server's origin.
    private func streamed(_ source: URL, disposition: ContentDisposition, maximumAge: Int) async throws(ImageServerError) -> ImageServerReply {
        guard let lease = StreamLease(count: streams, limit: max(1, configuration.maximumConcurrentStreams)) else {
            throw ImageServerError(.saturated, "the server is busy; retry in a moment")
        }
        do {
            // The span covers the response's head; the body streams on after it.
            // Counted by `streams`, not in the image downloads' total.
            let loaded = try await withSpan(SpanName.sourceFetch) { _ in try await loader.withoutTotalLimit.load(URLRequest(url: source)) }
            guard let response = loaded.response else {
                throw ImageServerError(.sourceFailed, "the source sent no response")
            }
            let checked = try CheckedResponse(response, for: source, accepting: .anything)
            var chunks = loaded.body.makeAsyncIterator()
            let first = try await chunks.next() ?? Data()
            let type = checked.contentType.flatMap(Self.imageType(_:))
            let headers: [(name: String, value: String)] = [
                ("Cache-Control", "public, max-age=\(maximumAge)"),
                ("Content-Type", type ?? "application/octet-stream"),
                ("Content-Disposition", disposition.value(extension: type.map(Self.fileExtension(forImageType:)) ?? "bin")),
                ("X-Content-Type-Options", "nosniff"),
                ("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; sandbox"),
            ]
            return ImageServerReply(status: 200, headers: headers, body: first, outcome: "raw",
                                    stream: StreamedBody(rest: loaded.body, lease: lease))
        } catch {
            let failure = ImageServerError(answering: error)
            metrics.failed(failure)
            throw failure
        }
    }

    /// `image/SUBTYPE` from a `Content-Type` (parameters dropped, lower-cased), or `nil` for anything else.
    static func imageType(_ contentType: String) -> String? {
        let type = contentType.split(separator: ";").first?.trimmingCharacters(in: .whitespaces).lowercased() ?? ""
        guard type.hasPrefix("image/"), type.count > 6, type.count <= 64,
              type.dropFirst(6).allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "+-.".contains($0)) }) else { return nil }
        return type
    }

    /// The file extension for an image type: `jpg` for JPEG, `svg` for SVG, else the subtype.
    static func fileExtension(forImageType type: String) -> String {
        switch type {
        case "image/jpeg", "image/pjpeg": "jpg"
        case "image/svg+xml": "svg"
        default: String(type.dropFirst(6).prefix { $0.isLetter || $0.isNumber })
        }
    }

    /// Answers `/info`: the source's description as JSON, worked out once
    /// for requests that arrive together, in one of the decode slots.
    private func describe(_ source: URL, maximumAge: Int, ifNoneMatch: String?) async throws(ImageServerError) -> ImageServerReply {
        let ticket: JobRegistry<URL, Data>.Ticket
        do {
            ticket = try descriptions.enter(source, subscription: JobSubscription(priority: .normal)) { [self] job in
                try await description(of: source, job: job)
            }
        } catch {
            throw ImageServerError(.saturated, "the server is busy; retry in a moment")
        }
        let result = await Task { [descriptions] in
            do {
                return Result<Data, ImageServerError>.success(try await descriptions.value(of: ticket))
            } catch {
                return .failure(error as? ImageServerError ?? ImageServerError(answering: error))
            }
        }.value
        let body = try result.get()
        let etag = "\"" + SHA256.hash(data: body).lowercaseHex + "\""
        var headers: [(name: String, value: String)] = [
            ("Cache-Control", "public, max-age=\(maximumAge)"),
            ("ETag", etag),
        ]
        if EntityTag.matches(ifNoneMatch, etag: etag) {
            return ImageServerReply(status: 304, headers: headers, body: Data(), outcome: ticket.joined ? "joined" : "info")
        }
        headers.append(("Content-Type", "application/json"))
        return ImageServerReply(status: 200, headers: headers, body: body, outcome: ticket.joined ? "joined" : "info")
    }

    /// Loads the source through the guard (status, content type and size
    /// checked as for images) and describes it.
    private func description(of source: URL, job: SharedJob<Data>) async throws(ImageServerError) -> Data {
        do {
            let (data, response) = try await withSpan(SpanName.sourceFetch) { _ in try await loader.data(for: URLRequest(url: source)) }
            let checked = try ResponseHandler<Data>(accepting: .images) { $0 }.handle(data, response: response, for: source)
            let workQueue = pipeline.configuration.workQueue
            return try await job.withSlot {
                try await workQueue.perform { try ImageInfoReport(describing: checked).json() }
            }
        } catch {
            let failure = ImageServerError(answering: error)
            metrics.failed(failure)
            throw failure
        }
    }

    private func checkSignature(of path: ImageServerPath) throws(ImageServerError) {
        guard !configuration.acceptsUnsignedPaths else { return }
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

    /// Loads, processes and encodes one output; keeps it before the job ends,
    /// so a request that arrives after finds it kept. Resizing and encoding
    /// hold one of the job's slots (the pipeline's decode slots) and run on
    /// the pipeline's work queue.
    private func render(
        _ source: URL, options: ProcessingOptions, key: RenderIdentity, job: SharedJob<RenderedImage>
    ) async throws(ImageServerError) -> RenderedImage {
        // The work queue's closures run under it (`Dispatching.perform`), and their loops check it;
        // the job itself ends at it too, cancelling a download still under way, so its place is free.
        let deadline = WorkDeadline(secondsFromNow: configuration.timeout)
        do {
            return try await withinDeadline(configuration.timeout, timeout: { _ in ImageServerError.timedOut }) { [self] in
                try await WorkDeadline.$current.withValue(deadline) {
                    try await renderUnderDeadline(source, options: options, key: key, job: job)
                }
            }
        } catch {
            throw error as? ImageServerError ?? ImageServerError(answering: error)
        }
    }

    private func renderUnderDeadline(
        _ source: URL, options: ProcessingOptions, key: RenderIdentity, job: SharedJob<RenderedImage>
    ) async throws(ImageServerError) -> RenderedImage {
        do {
            if let stored = await storedResult(for: key) { return kept(stored, for: key, storing: false) }
            let request = ImageRequest(url: source, thumbnail: decodeHint(for: options))
            // The bytes first: they decide whether to skip or to animate,
            // and hold the metadata a result may keep.
            let bytes = try await fetched(request)
            // Held until the render ends, within the sources' share of the memory budget.
            guard let rendered = try await memory.withSource(of: bytes.data.count, {
                try await renderFetched(bytes, request: request, options: options, key: key, job: job)
            }) else {
                throw ImageServerError(.saturated, "the server holds as many sources as it may; retry in a moment")
            }
            return rendered
        } catch {
            let failure = ImageServerError(answering: error)
            metrics.failed(failure)
            throw failure
        }
    }

    /// The rest of a render, once its source's bytes are here.
    private func renderFetched(
        _ bytes: (data: Data, source: ImageResponse.Source, duration: TimeInterval), request: ImageRequest,
        options: ProcessingOptions, key: RenderIdentity, job: SharedJob<RenderedImage>
    ) async throws -> RenderedImage {
        let maximumSide = configuration.maximumOutputSide
        let policy = configuration.outputPolicy
        let (watermark, watermarkOpacity) = (configuration.watermark, configuration.watermarkOpacity)
        let (exifLimit, logger) = (configuration.maximumKeptExifBytes, configuration.logger)
        let workQueue = pipeline.configuration.workQueue
        if let document = try await svgAnswer(bytes, options: options, job: job) { return kept(document, for: key) }
        if !options.skipProcessingFormats.isEmpty,
           let skipped = try await skipped(bytes, options: options, requestedFormat: key.requestedFormat, job: job) {
            return kept(skipped, for: key)
        }
        // The header, read once for the reservation, the animation check and the profile's size.
        let header = try? ImageDecoders.info(for: bytes.data)
        // The bytes the rest will allocate, reserved first: large renders queue instead of growing the process.
        return try await memory.withReservation(of: renderCost(of: bytes.data, header: header, options: options)) { [self] in
            if configuration.maximumAnimationFrames > 1, let header,
               let animated = try await animated(bytes, header: header, request: request, options: options, format: key.animatedFormat, job: job) {
                return kept(animated, for: key)
            }
            let loaded: ImageResponse
            if let drawn = try await svgDecoded(bytes, request: request, job: job) {
                loaded = drawn
            } else {
                loaded = try await decoded(bytes, request: request, keepsProfile: keepsProfile(options, format: options.format, header: header),
                                           autoRotates: options.autoRotates, job: job)
            }
            let started = DispatchTime.now().uptimeNanoseconds
            let trace = ServiceContext.current ?? .topLevel
            let (data, format) = try await job.withSlot {
                try await workQueue.perform { () throws -> (Data, ProcessingOptions.OutputFormat) in
                    let (image, format) = withSpan(SpanName.process, context: trace) { _ in
                        let processed = options.apply(to: loaded.image, maximumSide: maximumSide,
                                                      watermark: watermark, watermarkOpacity: watermarkOpacity)
                        // `options.format` is set unless the output follows the source.
                        let format = options.format ?? ProcessingOptions.OutputFormat(policy.decision(
                            forSource: loaded.format, hasAlpha: processed.pixelFormat.hasAlpha && options.background == nil
                        ).format) ?? .jpeg
                        return (options.flattened(processed, for: format), format)
                    }
                    // A stopped render is not encoded.
                    try WorkDeadline.checkCurrent()
                    return try withSpan(SpanName.encode, context: trace) { span in
                        span.attributes["imago.format"] = format.rawValue
                        let encoded = try options.encoded(image, as: format, policy: policy)
                        return (Self.withMetadata(encoded, format: format, source: bytes.data, options: options, limit: exifLimit, logger: logger), format)
                    }
                }
            }
            let finished = DispatchTime.now().uptimeNanoseconds
            return kept(RenderedImage(
                data: data,
                format: format.imageFormat,
                etag: "\"" + SHA256.hash(data: data).lowercaseHex + "\"",
                sourceLayer: loaded.source.rawValue,
                sourceByteCount: loaded.byteCount,
                sourceMetrics: loaded.metrics,
                renderingTime: Double(finished - started) / 1e9
            ), for: key)
        }
    }

    /// Counts `rendered` and keeps it for the requests that come after: in
    /// the output cache, and (unless it came from there) in the result store.
    private func kept(_ rendered: RenderedImage, for key: RenderIdentity, storing: Bool = true) -> RenderedImage {
        if storing { metrics.rendered(rendered) }
        outputs.insert(rendered, for: key, cost: rendered.data.count + key.cost)
        if storing, let store = configuration.resultStore {
            let result = StoredResult(data: rendered.data, contentType: rendered.mimeType, etag: rendered.etag, storedAt: Date())
            let name = key.storeKey
            let (logger, metrics, timeout) = (configuration.logger, metrics, configuration.resultStoreTimeout)
            let trace = ServiceContext.current ?? .topLevel
            // Written after the answer: a slow or broken store never holds a
            // client. The span is the request's child all the same.
            Task.detached {
                await withSpan(SpanName.storeWrite, context: trace) { span in
                    do {
                        try await withinDeadline(timeout) { try await store.store(result, for: name) }
                        metrics.resultStore("written")
                    } catch {
                        span.recordError(error)
                        span.setStatus(SpanStatus(code: .error))
                        metrics.resultStore("write_failed")
                        logger.warning("the result store could not keep a render: \(error)")
                    }
                }
            }
        }
        return rendered
    }

    /// The render under `key` in the result store, when there is one, it is
    /// younger than the time to live, and the store answers; a store that
    /// fails is a miss (a warning and a metric).
    private func storedResult(for key: RenderIdentity) async -> RenderedImage? {
        guard let store = configuration.resultStore else { return nil }
        let (name, timeout) = (key.storeKey, configuration.resultStoreTimeout)
        return await withSpan(SpanName.storeLookup) { span in
            let (found, outcome): (RenderedImage?, String)
            do {
                if let result = try await withinDeadline(timeout, { try await store.result(for: name) }),
                   Date().timeIntervalSince(result.storedAt) < Double(configuration.timeToLive) {
                    (found, outcome) = (RenderedImage(stored: result), "hit")
                } else {
                    (found, outcome) = (nil, "miss")
                }
            } catch {
                (found, outcome) = (nil, "read_failed")
                span.recordError(error)
                configuration.logger.warning("the result store could not be read: \(error)")
            }
            metrics.resultStore(outcome)
            span.attributes["imago.result_store.result"] = outcome
            return found
        }
    }

    /// The source's bytes through the pipeline's data stage (the disk
    /// cache, then the loader), in a span of their own.
    private func fetched(_ request: ImageRequest) async throws -> (data: Data, source: ImageResponse.Source, duration: TimeInterval) {
        try await withSpan(SpanName.sourceFetch) { span in
            let bytes = try await pipeline.sourceBytes(for: request)
            span.attributes["imago.source.layer"] = bytes.source.rawValue
            span.attributes["imago.source.bytes"] = bytes.data.count
            return bytes
        }
    }

    /// The source's bytes as they are, when their format is one `options`
    /// skips and the path names no other format (as imgproxy: the format
    /// the client negotiates does not count); `nil` otherwise. Skipped
    /// bytes are still checked: their header must open and stay within the
    /// pixel and frame limits.
    private func skipped(
        _ bytes: (data: Data, source: ImageResponse.Source, duration: TimeInterval), options: ProcessingOptions,
        requestedFormat: ProcessingOptions.OutputFormat?, job: SharedJob<RenderedImage>
    ) async throws -> RenderedImage? {
        guard let sourceFormat = ImageFormat(sniffing: bytes.data), options.skipProcessingFormats.contains(sourceFormat),
              requestedFormat == nil || requestedFormat?.imageFormat == sourceFormat else { return nil }
        let limits = pipeline.configuration.decodingOptions
        let workQueue = pipeline.configuration.workQueue
        try await job.withSlot {
            try await workQueue.perform {
                let info = try ImageDecoders.info(for: bytes.data)
                guard info.frameCount <= limits.maximumFrameCount,
                      info.width.multipliedReportingOverflow(by: info.height * max(1, info.frameCount)).partialValue <= limits.maximumPixelCount
                else {
                    throw ImageServerError(.sourceTooLarge, "the source is too large: \(info.width)x\(info.height), \(info.frameCount) frames")
                }
            }
        }
        return RenderedImage(
            data: bytes.data, format: sourceFormat, etag: "\"" + SHA256.hash(data: bytes.data).lowercaseHex + "\"",
            sourceLayer: bytes.source.rawValue, sourceByteCount: bytes.data.count,
            sourceMetrics: ImageTaskMetrics(loadingDuration: bytes.duration, byteCount: bytes.data.count), renderingTime: 0
        )
    }

    /// What turns a decoded image (turned upright as its source's EXIF
    /// orientation says, as every decoder turns images) back to the
    /// source's stored pixels, for `auto_rotate:0`; ``ImageOrientation/up``
    /// (nothing to do) when `autoRotates`.
    static func undoingOrientation(of source: Data, unless autoRotates: Bool) throws -> ImageOrientation {
        autoRotates ? .up : try ImageDecoders.info(for: source).orientation.inverse
    }

    /// Whether a result keeps its source's colour profile: `scp:0`, in
    /// any format but GIF (which holds none).
    static func keepsProfile(_ options: ProcessingOptions, format: ProcessingOptions.OutputFormat?) -> Bool {
        !options.stripsColorProfile && format != .gif
    }

    /// ``keepsProfile(_:format:)``, and the source's profile is no larger
    /// than ``ImageServerConfiguration/maximumKeptProfileBytes``: a larger
    /// one is not copied (the pixels are converted to sRGB with it
    /// instead), with a log line.
    private func keepsProfile(_ options: ProcessingOptions, format: ProcessingOptions.OutputFormat?, header: ImageInfo?) -> Bool {
        guard Self.keepsProfile(options, format: format) else { return false }
        let size = header?.colorProfile?.data.count ?? 0
        guard size <= configuration.maximumKeptProfileBytes else {
            configuration.logger.info("a colour profile of \(size) bytes is not kept (the limit is \(configuration.maximumKeptProfileBytes)); the image is converted to sRGB")
            return false
        }
        return true
    }

    /// `encoded` with the source's EXIF as the options say: all of it
    /// (turned "up") with `strip_metadata` off, only `Artist` and
    /// `Copyright` with `keep_copyright`, else none; JPEG, PNG and WebP
    /// results only (EXIF is read from JPEG, PNG and WebP sources).
    /// EXIF larger than `limit` bytes is not copied (with a log line).
    static func withMetadata(_ encoded: Data, format: ProcessingOptions.OutputFormat, source: Data, options: ProcessingOptions,
                             limit: Int, logger: Logger) -> Data {
        guard [.jpeg, .png, .webp].contains(format), !options.stripsMetadata || options.keepsCopyright,
              let tiff = ExifMetadata.tiff(in: source) else { return encoded }
        guard tiff.count <= limit else {
            logger.info("EXIF of \(tiff.count) bytes is not kept (the limit is \(limit))")
            return encoded
        }
        // Turned upright, the pixels need an EXIF that says "up"; left as stored, the source's orientation.
        let metadata = ImageMetadata(exif: tiff)
        let kept = options.stripsMetadata ? metadata.exif(keeping: .keepCopyright) : options.autoRotates ? metadata.exif(keeping: .keepAll) : tiff
        return kept.map { ExifMetadata.inserting($0, into: encoded, format: format.imageFormat) } ?? encoded
    }

    /// The source decoded as the pipeline decodes it (its decoder, limits
    /// and the request's thumbnail; its colour profile kept when
    /// `keepsProfile`), in one of the job's slots.
    private func decoded(
        _ bytes: (data: Data, source: ImageResponse.Source, duration: TimeInterval), request: ImageRequest, keepsProfile: Bool,
        autoRotates: Bool, job: SharedJob<RenderedImage>
    ) async throws -> ImageResponse {
        let pipeline = self.pipeline
        let workQueue = pipeline.configuration.workQueue
        let started = DispatchTime.now().uptimeNanoseconds
        let trace = ServiceContext.current ?? .topLevel
        decodes.withLock { $0 += 1 }
        let image = try await job.withSlot {
            try await workQueue.perform {
                try withSpan(SpanName.decode, context: trace) { span in
                    let upright = try pipeline.decode(bytes.data, for: request, colorManagement: keepsProfile ? .keepOriginal : nil)
                    let undo = try Self.undoingOrientation(of: bytes.data, unless: autoRotates)
                    span.attributes["imago.image.width"] = upright.width
                    span.attributes["imago.image.height"] = upright.height
                    return undo == .up ? upright : upright.applying(undo)
                }
            }
        }
        let metrics = ImageTaskMetrics(loadingDuration: bytes.duration,
                                       decodingDuration: Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9,
                                       byteCount: bytes.data.count)
        return ImageResponse(image: image, request: request, source: bytes.source, format: ImageFormat(sniffing: bytes.data),
                             byteCount: bytes.data.count, metrics: metrics)
    }

    /// An animated source rendered as an animation, frame by frame: each
    /// frame is decoded, processed and encoded before the next is decoded,
    /// so memory holds one frame (and the codecs' canvases), whatever the
    /// length. `nil` when the source is not animated or the format asked
    /// for writes no animations (then the first frame is rendered as a still).
    ///
    /// The first ``ImageServerConfiguration/maximumAnimationFrames`` frames
    /// are kept, with their durations and the loop count; the pixel limit
    /// counts all of them. As imgproxy, `trim` is not applied to
    /// animations; a `smart` gravity is centred so every frame is cut the same.
    private func animated(
        _ bytes: (data: Data, source: ImageResponse.Source, duration: TimeInterval), header info: ImageInfo, request: ImageRequest,
        options: ProcessingOptions, format requested: ProcessingOptions.OutputFormat?, job: SharedJob<RenderedImage>
    ) async throws -> RenderedImage? {
        guard let sourceFormat = ImageFormat(sniffing: bytes.data), [.gif, .webp, .png, .avif, .jxl].contains(sourceFormat),
              info.frameCount > 1 else { return nil }
        // The source decides when nothing else does: GIF and WebP stay as
        // they are, the others (APNG, AVIF, JPEG XL) become WebP.
        let policy = configuration.outputPolicy
        guard let format = requested ?? policy.animatedFormat(forSource: sourceFormat).flatMap(ProcessingOptions.OutputFormat.init),
              policy.animatedFormats.contains(format.imageFormat) else { return nil }
        var adjusted = options
        adjusted.trim = nil
        if adjusted.gravity == .smart { adjusted.gravity = .center }
        if adjusted.crop?.gravity == .smart { adjusted.crop?.gravity = .center }
        let frameOptions = adjusted
        let settings = (maximumSide: configuration.maximumOutputSide, frames: configuration.maximumAnimationFrames,
                        watermark: configuration.watermark, watermarkOpacity: configuration.watermarkOpacity)
        let quality = options.quality(for: format, policy: policy)
        // An animatable format always has an animation encoder.
        guard let encoder = ImageEncoders.animationEncoder(for: format.imageFormat, quality: quality) else { return nil }
        var decodingOptions = pipeline.configuration.decodingOptions
        decodingOptions.thumbnail = request.thumbnail
        if keepsProfile(options, format: format, header: info) { decodingOptions.colorManagement = .keepOriginal }
        let (exifLimit, logger) = (configuration.maximumKeptExifBytes, configuration.logger)
        let source = bytes.data
        let limits = decodingOptions
        let decoder = pipeline.configuration.decoder
        let workQueue = pipeline.configuration.workQueue
        let started = DispatchTime.now().uptimeNanoseconds
        let trace = ServiceContext.current ?? .topLevel
        decodes.withLock { $0 += 1 }
        let data = try await job.withSlot {
            try await workQueue.perform { () throws -> Data in
                try withSpan(SpanName.animate, context: trace) { _ in
                    var writer: (any AnimationWriter)?
                    let undo = try Self.undoingOrientation(of: source, unless: frameOptions.autoRotates)
                    try decoder.decodeFrames(bytes.data, options: limits, maximumFrames: settings.frames) { upright in
                        let frame = undo == .up ? upright : upright.applying(undo)
                        let processed = frameOptions.apply(to: frame, maximumSide: settings.maximumSide,
                                                           watermark: settings.watermark, watermarkOpacity: settings.watermarkOpacity)
                        let image = frameOptions.flattened(processed, for: format)
                        try WorkDeadline.checkCurrent()
                        let current = try writer ?? encoder.makeWriter(width: image.width, height: image.height, loopCount: frame.loopCount)
                        writer = current
                        try current.add(image, duration: frame.frames[0].duration ?? 0.1)
                        // Past the deadline, no next frame (`perform` then throws).
                        return !WorkDeadline.currentHasPassed
                    }
                    guard let writer else { throw ImageServerError(.undecodable, "the animation has no frame") }
                    return Self.withMetadata(try writer.finish(), format: format, source: source, options: options, limit: exifLimit, logger: logger)
                }
            }
        }
        let finished = DispatchTime.now().uptimeNanoseconds
        return RenderedImage(
            data: data, format: format.imageFormat, etag: "\"" + SHA256.hash(data: data).lowercaseHex + "\"",
            sourceLayer: bytes.source.rawValue, sourceByteCount: bytes.data.count,
            sourceMetrics: ImageTaskMetrics(loadingDuration: bytes.duration, byteCount: bytes.data.count),
            renderingTime: Double(finished - started) / 1e9
        )
    }

    /// A size to decode to, so the decoder's own scaling (JPEG's DCT
    /// scaling, PNG's rows downscaled as they arrive) does the resampling:
    /// the box itself for `fit` or a box with a free side, the box
    /// stretched to for `force`, a box the result covers otherwise (the
    /// crop, at any gravity, is ``ProcessingOptions/apply(to:maximumSide:)``'s);
    /// no hint when both sides are free. The plan worked out again on the
    /// decoded image then scales by 1, so the source is resampled once
    /// (not for `auto` that turns out to be `fit`, which was decoded to
    /// cover the box, for `force` with `el:1` that shrinks one side and
    /// enlarges the other, or when the server's maximum side is smaller
    /// than the box: those are resampled again).
    ///
    /// Options that make the plan depend on the source's own size (a trim,
    /// a crop, a turn, a device pixel ratio, zoom, minimum sizes, no
    /// auto-rotation) get no hint: the source is decoded whole.
    private func decodeHint(for options: ProcessingOptions) -> Thumbnail? {
        guard options.width > 0 || options.height > 0 else { return nil }
        guard options.crop == nil, options.trim == nil, options.rotation == 0, options.dpr == 1, options.zoomX == 1, options.zoomY == 1,
              options.minWidth == 0, options.minHeight == 0, options.autoRotates else { return nil }
        let unbounded = 1 << 30
        let mode: ResizeMode = if options.width == 0 || options.height == 0 || options.resizingType == .fit {
            .fit
        } else if options.resizingType == .force {
            .force
        } else {
            .fill
        }
        return Thumbnail(
            width: options.width > 0 ? options.width : unbounded,
            height: options.height > 0 ? options.height : unbounded,
            mode: mode
        )
    }

    /// The `max-age` of an answer: the server's time to live, or less when
    /// the URL expires sooner (as imgproxy does), so no cache keeps an
    /// answer past its URL's `expires`.
    private func maximumAge(expiring expires: Int?) -> Int {
        guard let expires else { return configuration.timeToLive }
        let left = Double(expires) - Date().timeIntervalSince1970
        return max(0, min(configuration.timeToLive, Int(left.rounded(.down))))
    }

    private func okReply(_ rendered: RenderedImage, variesWithAccept: Bool, disposition: ContentDisposition, maximumAge: Int,
                         ifNoneMatch: String?, outcome: String) -> ImageServerReply {
        var headers: [(name: String, value: String)] = [
            ("Cache-Control", "public, max-age=\(maximumAge)"),
            ("ETag", rendered.etag),
        ]
        if variesWithAccept { headers.append(("Vary", "Accept")) }
        if EntityTag.matches(ifNoneMatch, etag: rendered.etag) {
            return ImageServerReply(status: 304, headers: headers, body: Data(), outcome: outcome)
        }
        headers.append(("Content-Type", rendered.mimeType))
        headers.append(("Content-Disposition", disposition.value(extension: rendered.fileExtension)))
        headers += rendered.documentHeaders
        headers.append(("Server-Timing", rendered.serverTiming))
        return ImageServerReply(status: 200, headers: headers, body: rendered.data, outcome: outcome)
    }

    private func errorReply(_ error: ImageServerError) -> ImageServerReply {
        var headers: [(name: String, value: String)] = [
            ("Content-Type", "application/json"),
            ("Cache-Control", "no-store"),
        ]
        if error.code == .saturated { headers.append(("Retry-After", "1")) }
        return ImageServerReply(status: error.status, headers: headers, body: error.jsonBody, outcome: error.code.name)
    }
}

/// The server's swift-metrics instruments; no-ops unless the application
/// bootstraps a metrics backend. Each image request is counted here once
/// (`imago_server_responses` by status, `imago_server_request_duration`);
/// an application that also installs an HTTP metrics middleware counts the
/// same requests a second time under its own names. `imago_server_renders`
/// counts outputs made here (not answered from the output cache or the
/// result store): across replicas, renders per distinct image.
struct ServerMetrics: Sendable {
    let inFlight = Meter(label: "imago_server_in_flight")

    func responded(_ reply: ImageServerReply, nanoseconds: UInt64) {
        Counter(label: "imago_server_responses", dimensions: [("status", String(reply.status))]).increment()
        Timer(label: "imago_server_request_duration").recordNanoseconds(Int64(clamping: nanoseconds))
        Counter(label: "imago_server_bytes", dimensions: [("direction", "out")]).increment(by: reply.body.count)
    }

    func resultStore(_ outcome: String) {
        Counter(label: "imago_server_result_store", dimensions: [("result", outcome)]).increment()
    }

    func outputCache(hit outcome: String) {
        Counter(label: "imago_server_output_cache", dimensions: [("result", outcome)]).increment()
    }

    func rendered(_ rendered: RenderedImage) {
        Counter(label: "imago_server_renders").increment()
        Counter(label: "imago_server_sources", dimensions: [("layer", rendered.sourceLayer)]).increment()
        if rendered.sourceLayer == ImageResponse.Source.network.rawValue, let bytes = rendered.sourceByteCount {
            Counter(label: "imago_server_bytes", dimensions: [("direction", "in")]).increment(by: bytes)
        }
        if let loading = rendered.sourceMetrics.loadingDuration {
            Timer(label: "imago_server_load_duration").recordNanoseconds(Int64(loading * 1e9))
        }
        Timer(label: "imago_server_render_duration").recordNanoseconds(Int64(rendered.renderingTime * 1e9))
    }

    func failed(_ error: ImageServerError) {
        Counter(label: "imago_server_failures", dimensions: [("code", error.code.name)]).increment()
    }
}
#endif
