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
    ///
    /// A fallback render (`fallback`: the ``FallbackImage``'s bytes) skips
    /// the result store and the loader.
    func render(
        _ source: URL, options: ProcessingOptions, key: RenderIdentity, job: SharedJob<RenderedImage>, fallback: SourceBytes? = nil
    ) async throws(ImageServerError) -> RenderedImage {
        // The work queue's closures run under it (`Dispatching.perform`), and their loops check it;
        // the job itself ends at it too, cancelling a download still under way, so its place is free.
        let deadline = WorkDeadline(secondsFromNow: configuration.timeout)
        do {
            return try await withinDeadline(configuration.timeout, timeout: { _ in ImageServerError.timedOut }) { [self] in
                try await WorkDeadline.$current.withValue(deadline) {
                    try await renderUnderDeadline(source, options: options, key: key, job: job, fallback: fallback)
                }
            }
        } catch {
            throw error as? ImageServerError ?? ImageServerError(answering: error)
        }
    }

    func renderUnderDeadline(
        _ source: URL, options: ProcessingOptions, key: RenderIdentity, job: SharedJob<RenderedImage>, fallback: SourceBytes?
    ) async throws(ImageServerError) -> RenderedImage {
        do {
            if fallback == nil, let stored = await storedResult(for: key) { return kept(stored, for: key, storing: false) }
            let request = ImageRequest(url: source, thumbnail: decodeHint(for: options))
            // The bytes first: they decide whether to skip or to animate,
            // and hold the metadata a result may keep.
            let bytes: SourceBytes
            do {
                if let fallback { bytes = fallback } else { bytes = try await fetched(request) }
                try SourceLimits(configuration, options: options).checkBytes(of: bytes.data)
                try CameraRaw.refuse(bytes.data, from: source)
            } catch {
                var failure = ImageServerError(answering: error)
                failure.failedLoading = true
                throw failure
            }
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

    /// The rest of a render, once its source's bytes are here: the first
    /// ``RenderStrategy`` that applies makes it, and it is kept.
    func renderFetched(
        _ bytes: SourceBytes, request: ImageRequest, options: ProcessingOptions, key: RenderIdentity, job: SharedJob<RenderedImage>
    ) async throws -> RenderedImage {
        // The header, read once for the reservation, the animation check and the profile's size,
        // with the decodes' limits (PNG chunks).
        let input = RenderInput(bytes: bytes, request: request, options: options, key: key, job: job,
                                header: try? ImageDecoders.info(for: bytes.data, options: pipeline.configuration.decodingOptions))
        for strategy in RenderStrategy.allCases {
            if var rendered = try await make(strategy, input) {
                rendered.sourceSize = input.header.map { ($0.width, $0.height) }
                return kept(rendered, for: key)
            }
        }
        throw ImageServerError(.undecodable, "the source could not be rendered")
    }

    /// Counts `rendered` and keeps it for the requests that come after: in
    /// the output cache, and (unless it came from there) in the result store.
    func kept(_ rendered: RenderedImage, for key: RenderIdentity, storing: Bool = true) -> RenderedImage {
        if storing { metrics.rendered(rendered) }
        outputs.insert(rendered, for: key, cost: rendered.data.count + key.cost)
        // A fallback render is kept in memory only: a replica with another fallback must not find it.
        if storing, key.source != FallbackImage.source, let store = configuration.resultStore {
            let result = StoredResult(data: rendered.data, contentType: rendered.mimeType, etag: rendered.etag, storedAt: Date(),
                                      sourceCacheHeaders: rendered.sourceCacheHeaders)
            let name = key.storeKey(settings: configuration.encoderSettings)
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
        let (name, timeout) = (key.storeKey(settings: configuration.encoderSettings), configuration.resultStoreTimeout)
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
    func fetched(_ request: ImageRequest) async throws -> SourceBytes {
        try await withSpan(SpanName.sourceFetch) { span in
            let bytes = try await pipeline.sourceBytes(for: request)
            span.attributes["imago.source.layer"] = bytes.source.rawValue
            span.attributes["imago.source.bytes"] = bytes.data.count
            return bytes
        }
    }

    /// The source's bytes as they are, when their format is one the
    /// options skip and the path names no other format (as imgproxy: the
    /// format the client negotiates does not count); `nil` otherwise.
    /// Skipped bytes are still checked: their header (read once, by the
    /// stage) must open and stay within the pixel and frame limits.
    func skipped(_ input: RenderInput) throws -> RenderedImage? {
        let (bytes, options, requestedFormat) = (input.bytes, input.options, input.key.requestedFormat)
        guard let sourceFormat = ImageFormat(sniffing: bytes.data), options.skipProcessingFormats.contains(sourceFormat),
              requestedFormat == nil || requestedFormat?.imageFormat == sourceFormat else { return nil }
        let limits = pipeline.configuration.decodingOptions
        // A header that did not parse is read again, for its error.
        let info = try input.header ?? ImageDecoders.info(for: bytes.data, options: limits)
        let pixels = SourceLimits(configuration, options: options).decodedPixels(frames: info.frameCount)
        guard info.frameCount <= limits.maximumFrameCount,
              info.width.multipliedReportingOverflow(by: info.height * max(1, info.frameCount)).partialValue <= pixels
        else {
            throw ImageServerError(.sourceTooLarge, "the source is too large: \(info.width)x\(info.height), \(info.frameCount) frames")
        }
        return RenderedImage(bytes.data, format: sourceFormat, from: bytes)
    }
}
#endif
