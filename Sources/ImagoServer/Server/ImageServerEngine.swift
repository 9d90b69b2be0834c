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

/// What the server answers, before any HTTP framework sees it.
struct ImageServerReply: Sendable {
    var status: Int
    var headers: [(name: String, value: String)]
    var body: Data
    /// How it was answered, for the request log: `hit`, `miss`, `joined`, or the error code.
    var outcome: String
}

/// What identifies one rendered output: the source and the options, with
/// the negotiated format (`nil` when the output follows the source's
/// format, which is known only once the source is loaded).
struct RenderIdentity: Hashable, Sendable {
    let source: URL
    let options: ProcessingOptions

    /// What the output cache counts for the key beside the output's bytes.
    var cost: Int { source.absoluteString.utf8.count + 64 }
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

    init(configuration: ImageServerConfiguration) {
        self.configuration = configuration
        let loader = GuardedDataLoader(
            transport: configuration.transport ?? ImageServerConfiguration.defaultTransport(logger: configuration.logger),
            policy: configuration.sourcePolicy,
            resolver: configuration.resolver
        )
        self.loader = loader
        var pipelineConfiguration = ImagePipeline.Configuration.withCodecs
        pipelineConfiguration.dataLoader = loader
        pipelineConfiguration.dataCache = configuration.dataCache
        // Outputs are kept encoded (`outputs`); bitmaps are not kept.
        pipelineConfiguration.imageCache = nil
        pipelineConfiguration.logger = configuration.logger
        pipelineConfiguration.maximumConcurrentDownloads = max(1, configuration.maximumConcurrentDownloads)
        pipelineConfiguration.maximumConcurrentDecodes = max(1, configuration.workers)
        pipelineConfiguration.maximumConcurrentProcessing = max(1, configuration.workers)
        pipeline = ImagePipeline(configuration: pipelineConfiguration)
        renders = JobRegistry(queue: pipeline.decodeSlots, limit: max(1, configuration.workers) + max(0, configuration.maximumQueue))
        // At most as many `/info` loads at once as source downloads.
        descriptions = JobRegistry(queue: pipeline.decodeSlots, limit: max(1, configuration.maximumConcurrentDownloads))
        // An output larger than a quarter of the budget is not kept.
        outputs = LRUStore(costLimit: configuration.outputCacheCapacity, entryCostLimit: configuration.outputCacheCapacity / 4)
        metrics = ServerMetrics()
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
            reply = try await answer(path: path, accept: accept, ifNoneMatch: ifNoneMatch)
        } catch {
            reply = errorReply(error)
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
        if parsed.options.maximumResultDimension != nil && !configuration.allowsSecurityOptions {
            throw ImageServerError(.forbiddenOption, "max_result_dimension is a security option, which this server does not allow in paths")
        }
        try configuration.sourcePolicy.check(parsed.source)
        let maximumAge = maximumAge(expiring: parsed.options.expires)
        if parsed.isInfo { return try await describe(parsed.source, maximumAge: maximumAge, ifNoneMatch: ifNoneMatch) }
        let choice = configuration.formatNegotiation.format(requested: parsed.options.format, accept: accept)
        var chosen = parsed.options
        chosen.format = choice.format
        // What only shapes the headers is not part of the render's identity.
        (chosen.filename, chosen.returnsAttachment, chosen.expires) = (nil, false, nil)
        let options = chosen
        let key = RenderIdentity(source: parsed.source, options: options)
        let disposition = ContentDisposition(source: parsed.source, filename: parsed.options.filename,
                                             attachment: parsed.options.returnsAttachment)

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
        return okReply(try result.get(), variesWithAccept: choice.variesWithAccept, disposition: disposition, maximumAge: maximumAge,
                       ifNoneMatch: ifNoneMatch, outcome: outcome)
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
            let (data, response) = try await loader.data(for: URLRequest(url: source))
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
            valid = key.isValid(signature: path.signature, forPath: path.signedPart) || valid
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
        let maximumSide = configuration.maximumOutputSide
        let defaultQuality = configuration.defaultQuality
        do {
            let response = try await pipeline.image(for: ImageRequest(url: source, thumbnail: decodeHint(for: options)))
            let loaded = DispatchTime.now().uptimeNanoseconds
            let workQueue = pipeline.configuration.workQueue
            let (data, format) = try await job.withSlot {
                try await workQueue.perform { () throws -> (Data, ProcessingOptions.OutputFormat) in
                    let processed = options.apply(to: response.image, maximumSide: maximumSide)
                    // `options.format` is set unless the output follows the source.
                    let format = options.format ?? ProcessingOptions.format(
                        following: response.format, hasAlpha: processed.pixelFormat.hasAlpha && options.background == nil
                    )
                    let image = options.flattened(processed, for: format)
                    return (try options.encoded(image, as: format, defaultQuality: defaultQuality), format)
                }
            }
            let finished = DispatchTime.now().uptimeNanoseconds
            let rendered = RenderedImage(
                data: data,
                format: format,
                etag: "\"" + SHA256.hash(data: data).lowercaseHex + "\"",
                sourceLayer: response.source.rawValue,
                sourceByteCount: response.byteCount,
                sourceMetrics: response.metrics,
                renderingTime: Double(finished - loaded) / 1e9
            )
            metrics.rendered(rendered)
            outputs.insert(rendered, for: key, cost: rendered.data.count + key.cost)
            return rendered
        } catch {
            let failure = ImageServerError(answering: error)
            metrics.failed(failure)
            throw failure
        }
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
    /// a crop, a turn, a device pixel ratio, zoom, minimum sizes) get no
    /// hint: the source is decoded whole.
    private func decodeHint(for options: ProcessingOptions) -> Thumbnail? {
        guard options.width > 0 || options.height > 0 else { return nil }
        guard options.crop == nil, options.trim == nil, options.rotation == 0, options.dpr == 1, options.zoomX == 1, options.zoomY == 1,
              options.minWidth == 0, options.minHeight == 0 else { return nil }
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
        headers.append(("Content-Type", rendered.format.mimeType))
        headers.append(("Content-Disposition", disposition.value(extension: rendered.format.fileExtension)))
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
/// same requests a second time under its own names.
struct ServerMetrics: Sendable {
    let inFlight = Meter(label: "imago_server_in_flight")

    func responded(_ reply: ImageServerReply, nanoseconds: UInt64) {
        Counter(label: "imago_server_responses", dimensions: [("status", String(reply.status))]).increment()
        Timer(label: "imago_server_request_duration").recordNanoseconds(Int64(clamping: nanoseconds))
        Counter(label: "imago_server_bytes", dimensions: [("direction", "out")]).increment(by: reply.body.count)
    }

    func outputCache(hit outcome: String) {
        Counter(label: "imago_server_output_cache", dimensions: [("result", outcome)]).increment()
    }

    func rendered(_ rendered: RenderedImage) {
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
