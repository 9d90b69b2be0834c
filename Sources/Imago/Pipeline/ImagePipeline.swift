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
///   processor shares everything before it.
/// - A cancelled request stops its share; work stops when nobody wants it.
/// - Each stage runs at most its configured number of jobs at once, most
///   urgent first; priorities can change while a request waits.
public final class ImagePipeline: Sendable {
    /// The configuration the pipeline was created with.
    public let configuration: Configuration

    struct Loaded: Sendable {
        let data: Data
        let source: ImageResponse.Source
    }

    struct Decoded: Sendable {
        let image: Image
        let source: ImageResponse.Source
        let format: ImageFormat?
        let byteCount: Int
    }

    let dataJobs: JobRegistry<Loaded>
    let imageJobs: JobRegistry<Decoded>

    /// Creates a pipeline.
    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
        dataJobs = JobRegistry(queue: WorkQueue(maximumConcurrency: configuration.maximumConcurrentDownloads))
        // Decoding and processing share one registry (keys differ) but not one limit.
        imageJobs = JobRegistry(queue: WorkQueue(maximumConcurrency: configuration.maximumConcurrentDecodes))
        processingQueue = WorkQueue(maximumConcurrency: configuration.maximumConcurrentProcessing)
        processingJobs = JobRegistry(queue: processingQueue)
        decodeAdmission = WorkQueue(maximumConcurrency: configuration.maximumConcurrentDownloads + configuration.maximumConcurrentDecodes)
    }

    let processingQueue: WorkQueue
    /// Bounds the decodes that hold downloaded bytes (downloading, or waiting
    /// for a decode slot): downloads cannot run ahead of decoding and pile
    /// up bytes in memory.
    let decodeAdmission: WorkQueue
    let processingJobs: JobRegistry<Decoded>

    /// Counts of the work the pipeline started and merged.
    public struct Statistics: Sendable, Hashable {
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
    public var statistics: Statistics {
        Statistics(
            downloads: dataJobs.startedCount, decodes: imageJobs.startedCount, processing: processingJobs.startedCount,
            mergedDownloads: dataJobs.joinedCount, mergedDecodes: imageJobs.joinedCount, mergedProcessing: processingJobs.joinedCount
        )
    }

    /// The image for `request` from the memory cache, if it is there.
    public func cachedImage(for request: ImageRequest) -> Image? {
        guard request.cachePolicy != .reloadIgnoringCaches else { return nil }
        return configuration.imageCache?.image(for: request.cacheKey)
    }

    /// Loads the image for `request`.
    ///
    /// - Throws: ``ImagePipelineError``, or `CancellationError` when the
    ///   calling task is cancelled.
    public func image(for request: ImageRequest) async throws -> ImageResponse {
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

    // MARK: Stages

    /// The final image: the result of every processor (or the decoded image).
    func run(_ request: ImageRequest, subscription: JobSubscription, onProgress: @escaping @Sendable (LoadingProgress) -> Void) async throws -> ImageResponse {
        if let image = cachedImage(for: request) {
            return ImageResponse(image: image, request: request, source: .memory)
        }
        let decoded = try await processed(request, count: request.processors.count, subscription: subscription, onProgress: onProgress)
        return ImageResponse(image: decoded.image, request: request, source: decoded.source, format: decoded.format, byteCount: decoded.byteCount)
    }

    /// The image after the first `count` processors, shared by every request with that prefix.
    private func processed(_ request: ImageRequest, count: Int, subscription: JobSubscription, onProgress: @escaping @Sendable (LoadingProgress) -> Void) async throws -> Decoded {
        guard count > 0 else { return try await decoded(request, subscription: subscription, onProgress: onProgress) }
        let key = request.processingKey(count: count)
        return try await processingJobs.value(for: key, subscription: subscription, onProgress: onProgress) { job in
            let upstream = JobSubscription(priority: job.priority)
            job.observePriority { upstream.setPriority($0) }
            // No slot is held while waiting for the input.
            let input = try await self.processed(request, count: count - 1, subscription: upstream, onProgress: job.report)
            let processor = request.processors[count - 1]
            let image: Image
            do {
                image = try await job.withSlot { try await self.onWorkQueue { try processor.process(input.image) } }
            } catch is CancellationError {
                throw CancellationError()
            } catch {
                throw ImagePipelineError(.processingFailed, url: request.url, underlying: error)
            }
            if count == request.processors.count { self.storeInMemory(image, for: request) }
            return Decoded(image: image, source: input.source, format: input.format, byteCount: input.byteCount)
        }
    }

    /// The decoded image, shared by every request for the same URL and size.
    private func decoded(_ request: ImageRequest, subscription: JobSubscription, onProgress: @escaping @Sendable (LoadingProgress) -> Void) async throws -> Decoded {
        try await imageJobs.value(for: request.decodeKey, subscription: subscription, onProgress: onProgress) { job in
            let admission = self.decodeAdmission
            job.observePriority { [id = job.id] priority in admission.update(id: id, priority: priority) }
            try await admission.acquire(id: job.id, priority: job.priority)
            defer { admission.release() }
            let upstream = JobSubscription(priority: job.priority)
            job.observePriority { upstream.setPriority($0) }
            let loaded = try await self.data(for: request, subscription: upstream, onProgress: job.report)
            var decodingOptions = self.configuration.decodingOptions
            decodingOptions.thumbnail = request.thumbnail
            let options = decodingOptions
            let decoder = self.configuration.decoder
            let image: Image
            do {
                image = try await job.withSlot { try await self.onWorkQueue { try decoder.decode(loaded.data, options: options) } }
            } catch is CancellationError {
                throw CancellationError()
            } catch {
                // Bytes that do not decode (corrupt, or a decompression bomb
                // over the limits) are not kept on disk to fail again.
                if loaded.source != .file { self.configuration.dataCache?.removeEntry(for: request.dataKey) }
                throw ImagePipelineError(.decodingFailed, url: request.url, underlying: error)
            }
            if request.processors.isEmpty { self.storeInMemory(image, for: request) }
            return Decoded(image: image, source: loaded.source, format: ImageFormat(sniffing: loaded.data), byteCount: loaded.data.count)
        }
    }

    /// The bytes, shared by every request for the same URL.
    func data(for request: ImageRequest, subscription: JobSubscription, onProgress: (@Sendable (LoadingProgress) -> Void)? = nil) async throws -> Loaded {
        try await dataJobs.value(for: request.dataKey, subscription: subscription, onProgress: onProgress) { job in
            try await job.withSlot { try await self.loadData(request, job: job) }
        }
    }

    private func storeInMemory(_ image: Image, for request: ImageRequest) {
        configuration.imageCache?.store(image, for: request.cacheKey)
    }

    /// Runs CPU-bound work on the configured queue, off the cooperative pool.
    private func onWorkQueue<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try Task.checkCancellation()
        return try await withCheckedThrowingContinuation { continuation in
            configuration.workQueue.dispatch {
                continuation.resume(with: Result { try work() })
            }
        }
    }
}
