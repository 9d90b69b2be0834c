import Foundation

/// The processing stage: the image after a request's first `count`
/// processors, shared by every request whose processors start the same way.
///
/// Each processor is one job, on the image of the job before it (the
/// decoded image for the first); processors run on the work queue.
struct ProcessStage: Sendable {
    let runner: StageRunner<ProcessIdentity, DecodedImage>
    let decode: DecodeStage
    let workQueue: any Dispatching

    /// The image after the first `count` of `request`'s processors; with
    /// `count` 0, the decoded image.
    ///
    /// - Throws: ``ImagePipelineError`` (``ImagePipelineError/Code/processingFailed``,
    ///   or an earlier stage's), or `CancellationError`.
    func image(
        for request: IdentifiedRequest,
        afterProcessors count: Int,
        subscription: JobSubscription,
        onProgress: ProgressHandler?
    ) async throws -> DecodedImage {
        guard count > 0 else { return try await decode.image(for: request, subscription: subscription, onProgress: onProgress) }
        let processor = request.request.processors[count - 1]
        return try await runner.output(for: request.process(count: count), of: request, subscription: subscription, onProgress: onProgress,
                                       on: workQueue) { upstream, progress in
            try await image(for: request, afterProcessors: count - 1, subscription: upstream, onProgress: progress)
        } work: { input in
            let started = Stopwatch.now()
            let image = try processor.process(input.image)
            let seconds = Stopwatch.seconds(since: started)
            var metrics = input.metrics
            metrics.processingDuration = (metrics.processingDuration ?? 0) + seconds
            return DecodedImage(image: image, source: input.source, format: input.format, byteCount: input.byteCount, metrics: metrics)
        } failure: { error, _ in
            ImagePipelineError(.processingFailed, url: request.request.url, underlying: error)
        }
    }
}
