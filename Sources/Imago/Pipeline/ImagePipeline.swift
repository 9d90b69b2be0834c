import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Loads images through the stages memory cache, disk cache, loader,
/// validation, decoding, processors, memory cache, merging identical work
/// at every stage.
///
/// ```swift
/// let pipeline = ImagePipeline(configuration: .withCodecs)   // ImagoCodecs
/// let response = try await pipeline.image(for: ImageRequest(url: url, maximumPixelSize: 256))
/// ```
///
/// - Identical requests in flight share one download, one decode and one
///   run of each processor; a request that differs only in its last
///   processor shares everything before it. Requests are identical when
///   their URL, credential headers and cache policy are (or their
///   ``ImageRequest/imageID`` and cache policy): requests with different
///   credentials never share a download or a cache entry.
/// - A cancelled request stops its share; work stops when nobody wants it.
/// - Each stage runs at most its configured number of jobs at once, most
///   urgent first; priorities can change while a request waits.
public final class ImagePipeline: Sendable {
    /// The configuration the pipeline was created with.
    public let configuration: Configuration

    // The stages, each in its own file under `Stages/`; the pipeline only
    // wires them together.
    private let memoryCache: MemoryCacheStage
    let dataStage: DataStage
    private let decodeStage: DecodeStage
    private let processStage: ProcessStage
    let instruments: PipelineInstruments
    /// Writes and evicts the disk cache's entries (undecodable bytes go).
    let cacheWriter: DataCacheWriter
    /// The slots decoding runs in: CPU-bound work that belongs with decoding
    /// (the image server's resizing and encoding) takes one of them too, so
    /// the two never run more than the configured number at once.
    package let decodeSlots: WorkQueue
    /// The header names (lower-case) whose values tell requests apart.
    private let credentialHeaders: Set<String>

    /// Creates a pipeline.
    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
        let instruments = PipelineInstruments(logger: configuration.logger, factory: configuration.metricsFactory)
        self.instruments = instruments
        credentialHeaders = CredentialFingerprint.standardHeaders.union(configuration.additionalCredentialHeaders.map { $0.lowercased() })
        let memoryCache = MemoryCacheStage(cache: configuration.imageCache)
        let decodeSlots = WorkQueue(maximumConcurrency: configuration.maximumConcurrentDecodes)
        self.decodeSlots = decodeSlots
        let cacheWriter = DataCacheWriter(cache: configuration.dataCache, now: configuration.time.now)
        self.cacheWriter = cacheWriter
        dataStage = DataStage(
            runner: StageRunner(slots: WorkQueue(maximumConcurrency: configuration.maximumConcurrentDownloads)),
            loader: configuration.dataLoader,
            dataCache: configuration.dataCache,
            cacheWriter: cacheWriter,
            acceptedContentTypes: configuration.acceptedContentTypes,
            workQueue: configuration.workQueue,
            now: configuration.time.now
        )
        decodeStage = DecodeStage(
            runner: StageRunner(
                slots: decodeSlots,
                // Bounds the decodes that hold downloaded bytes (downloading,
                // or waiting for a decode slot).
                admission: WorkQueue(maximumConcurrency: configuration.maximumConcurrentDownloads + configuration.maximumConcurrentDecodes),
                didProduce: memoryCache.keep
            ),
            data: dataStage,
            decoder: configuration.decoder,
            decodingOptions: configuration.decodingOptions,
            workQueue: configuration.workQueue,
            cacheWriter: cacheWriter,
            instruments: instruments
        )
        processStage = ProcessStage(
            runner: StageRunner(
                slots: WorkQueue(maximumConcurrency: configuration.maximumConcurrentProcessing),
                didProduce: memoryCache.keep
            ),
            decode: decodeStage,
            workQueue: configuration.workQueue
        )
        self.memoryCache = memoryCache
    }

    /// Counts of the work the pipeline started and merged.
    ///
    /// Behind `@_spi(Testing) import Imago`: for tests and benchmarks of merging.
    @_spi(Testing) public struct Statistics: Sendable, Hashable {
        /// Downloads (or disk-cache reads) started.
        public var downloads: Int
        /// Decodes started.
        public var decodes: Int
        /// Processor runs started.
        public var processing: Int
        /// Requests that joined a download already in flight.
        public var mergedDownloads: Int
        /// Requests that joined a decode already in flight.
        public var mergedDecodes: Int
        /// Requests that joined a processor run already in flight.
        public var mergedProcessing: Int
    }

    /// How much work the pipeline has started, and how many requests merged into work in flight.
    @_spi(Testing) public var statistics: Statistics {
        Statistics(
            downloads: dataStage.runner.startedCount,
            decodes: decodeStage.runner.startedCount,
            processing: processStage.runner.startedCount,
            mergedDownloads: dataStage.runner.joinedCount,
            mergedDecodes: decodeStage.runner.joinedCount,
            mergedProcessing: processStage.runner.joinedCount
        )
    }

    /// The key under which the memory cache holds `request`'s final image:
    /// its source (URL and credentials, or image ID), thumbnail size and
    /// processors. `nil` for a request with neither a URL nor an image ID,
    /// which is never cached.
    public func cacheKey(for request: ImageRequest) -> ImageCacheKey? {
        identify(request)?.cacheKey
    }

    /// The key under which the disk cache holds `request`'s bytes (a
    /// SHA-256 of its source: URL and credentials, or image ID); `nil` for a
    /// request with neither a URL nor an image ID.
    public func dataCacheKey(for request: ImageRequest) -> String? {
        identify(request)?.diskKey
    }

    /// The image for `request` from the memory cache, if it is there.
    public func cachedImage(for request: ImageRequest) -> Image? {
        identify(request).flatMap(memoryCache.cachedImage(for:))
    }

    /// `request` with the identities of its work, or `nil` when it has neither a URL nor an image ID.
    func identify(_ request: ImageRequest) -> IdentifiedRequest? {
        IdentifiedRequest(request, credentialHeaders: credentialHeaders)
    }

    /// Loads the image for `request`.
    ///
    /// - Throws: ``ImagePipelineError``, or `CancellationError` when the
    ///   calling task is cancelled.
    public func image(for request: ImageRequest) async throws -> ImageResponse {
        // The task starts at once, outside this one: a caller cancelled
        // already must not start it.
        try Task.checkCancellation()
        let task = imageTask(for: request)
        return try await withTaskCancellationHandler {
            try await task.response
        } onCancel: {
            task.cancel()
        }
    }

    /// Starts loading `request` and returns its task: progress, events,
    /// priority changes and cancellation.
    public func imageTask(for request: ImageRequest) -> ImageTask {
        ImageTask(request: request, pipeline: self)
    }

    /// The final image: from the memory cache, else the result of every
    /// processor (or the decoded image).
    func run(_ request: ImageRequest, subscription: JobSubscription, onProgress: @escaping ProgressHandler) async throws -> ImageResponse {
        let started = Stopwatch.now()
        guard let identified = identify(request) else {
            let error = ImagePipelineError(.invalidRequest, url: nil)
            instruments.failed(error, request: request)
            throw error
        }
        if let image = memoryCache.cachedImage(for: identified) {
            let response = ImageResponse(image: image, request: request, source: .memory,
                                         metrics: ImageTaskMetrics(totalDuration: Stopwatch.seconds(since: started)))
            instruments.delivered(response)
            return response
        }
        let finalImage: DecodedImage
        do {
            finalImage = try await processStage.image(
                for: identified, afterProcessors: request.processors.count, subscription: subscription, onProgress: onProgress
            )
        } catch {
            instruments.failed(error, request: request)
            throw error
        }
        memoryCache.keepIfMissing(finalImage.image, for: identified)
        var metrics = finalImage.metrics
        metrics.totalDuration = Stopwatch.seconds(since: started)
        let response = ImageResponse(
            image: finalImage.image, request: request, source: finalImage.source, format: finalImage.format,
            byteCount: finalImage.byteCount, metrics: metrics
        )
        instruments.delivered(response)
        return response
    }
}

extension ImagePipeline: ImageLoading {
    /// Loads the image at `url` with the default request options: what
    /// app code that depends on ``ImageLoading`` gets from a pipeline.
    ///
    /// - Throws: ``ImagePipelineError``, or `CancellationError` when the
    ///   calling task is cancelled.
    public func image(from url: URL) async throws -> Image {
        try await image(for: ImageRequest(url: url)).image
    }
}
