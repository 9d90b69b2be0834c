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

/// The render stage: load the source, process, encode and keep the output.
extension ImageServerEngine {
    /// What a render of `source` with `options` will allocate (``RenderCost``),
    /// from the header's size (`header`, parsed once per render) and the
    /// plan's; a header that does not parse counts its bytes alone (the
    /// decode then fails on its own).
    func renderCost(of source: Data, header: ImageInfo?, options: ProcessingOptions) -> Int {
        guard let info = header else { return source.count }
        let plan = ResizePlan(sourceWidth: info.width, sourceHeight: info.height, options: options, maximumSide: configuration.maximumOutputSide)
        let output = max(plan.scaledWidth * plan.scaledHeight, plan.resultWidth * plan.resultHeight)
        // An animation is decoded a frame at a time, over a canvas of the same size.
        let decoded = info.width.multipliedReportingOverflow(by: info.height * (info.frameCount > 1 ? 2 : 1))
        return RenderCost.estimate(sourceBytes: source.count, sourceFormat: info.format, decodedPixels: decoded.overflow ? .max / 16 : decoded.partialValue,
                                   outputPixels: output, format: options.format?.imageFormat ?? info.format)
    }


    /// Loads, processes and encodes one output; keeps it before the job ends,
    /// so a request that arrives after finds it kept. Resizing and encoding
    /// hold one of the job's slots (the pipeline's decode slots) and run on
    /// the pipeline's work queue.
    func render(
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

    func renderUnderDeadline(
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
    func renderFetched(
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
                        return (Self.withMetadata(encoded, format: format, exif: loaded.image.metadata?.exif, options: options,
                                                           limit: exifLimit, logger: logger), format)
                    }
                }
            }
            let finished = DispatchTime.now().uptimeNanoseconds
            return kept(RenderedImage(
                data: data,
                format: format.imageFormat,
                sourceLayer: loaded.source.rawValue,
                sourceByteCount: loaded.byteCount,
                sourceMetrics: loaded.metrics,
                renderingTime: Double(finished - started) / 1e9
            ), for: key)
        }
    }

    /// Counts `rendered` and keeps it for the requests that come after: in
    /// the output cache, and (unless it came from there) in the result store.
    func kept(_ rendered: RenderedImage, for key: RenderIdentity, storing: Bool = true) -> RenderedImage {
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
    func storedResult(for key: RenderIdentity) async -> RenderedImage? {
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
    func fetched(_ request: ImageRequest) async throws -> (data: Data, source: ImageResponse.Source, duration: TimeInterval) {
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
    func skipped(
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
            data: bytes.data, format: sourceFormat, sourceLayer: bytes.source.rawValue, sourceByteCount: bytes.data.count,
            sourceMetrics: ImageTaskMetrics(loadingDuration: bytes.duration, byteCount: bytes.data.count), renderingTime: 0
        )
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
    func keepsProfile(_ options: ProcessingOptions, format: ProcessingOptions.OutputFormat?, header: ImageInfo?) -> Bool {
        guard Self.keepsProfile(options, format: format) else { return false }
        let size = header?.colorProfile?.data.count ?? 0
        guard size <= configuration.maximumKeptProfileBytes else {
            configuration.logger.info("a colour profile of \(size) bytes is not kept (the limit is \(configuration.maximumKeptProfileBytes)); the image is converted to sRGB")
            return false
        }
        return true
    }

    /// `encoded` with the source's EXIF (`exif`, as the decoder read it
    /// into ``Imago/Image/metadata``) as the options say: all of it
    /// (turned "up") with `strip_metadata` off, only `Artist` and
    /// `Copyright` with `keep_copyright`, else none; JPEG, PNG and WebP
    /// results only. EXIF larger than `limit` bytes is not copied (with a log line).
    static func withMetadata(_ encoded: Data, format: ProcessingOptions.OutputFormat, exif: Data?, options: ProcessingOptions,
                             limit: Int, logger: Logger) -> Data {
        guard [.jpeg, .png, .webp].contains(format), !options.stripsMetadata || options.keepsCopyright,
              let tiff = exif else { return encoded }
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
    func decoded(
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
    func decodeHint(for options: ProcessingOptions) -> Thumbnail? {
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
}
#endif
