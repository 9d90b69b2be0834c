import Foundation

/// An image made from a request's bytes (decoded, then perhaps processed),
/// with what the response reports about those bytes.
struct DecodedImage: Sendable {
    let image: Image
    let source: ImageResponse.Source
    let format: ImageFormat?
    let byteCount: Int
    /// The stage durations so far (no total: that is the request's own).
    var metrics: ImageTaskMetrics
}

/// The decode stage: the decoded image, shared by every request with the
/// same ``DecodeIdentity`` (the same bytes and thumbnail size).
///
/// A job holds an admission slot from before its download starts until its
/// decode ends, so downloads cannot run ahead of decoding and pile up bytes
/// in memory. Decoding runs on the work queue. Bytes that do not decode are
/// removed from the disk cache (not when the decode was stopped at its deadline).
struct DecodeStage: Sendable {
    let runner: StageRunner<DecodeIdentity, DecodedImage>
    let data: DataStage
    let decoder: any ImageDecoding
    /// The limits applied to every image; each request adds its thumbnail size.
    let decodingOptions: ImageDecodingOptions
    let workQueue: any Dispatching
    let cacheWriter: DataCacheWriter
    let instruments: PipelineInstruments

    /// The decoded image for `request`; joins a decode of the same identity in flight.
    ///
    /// - Throws: ``ImagePipelineError`` (``ImagePipelineError/Code/decodingFailed``,
    ///   or the data stage's), or `CancellationError`.
    func image(for request: IdentifiedRequest, subscription: JobSubscription, onProgress: ProgressHandler?) async throws -> DecodedImage {
        var options = decodingOptions
        options.thumbnail = request.request.thumbnail
        return try await runner.output(for: request.decode, of: request, subscription: subscription, onProgress: onProgress,
                                       on: workQueue) { upstream, progress in
            try await data.data(for: request, subscription: upstream, onProgress: progress)
        } work: { [decoder, options, instruments] fetched in
            let started = Stopwatch.now()
            let image = try Self.decode(fetched.data, with: decoder, options: options)
            let seconds = Stopwatch.seconds(since: started)
            let format = ImageFormat(sniffing: fetched.data)
            instruments.decoded(format, seconds: seconds)
            let metrics = ImageTaskMetrics(loadingDuration: fetched.duration, decodingDuration: seconds, byteCount: fetched.data.count)
            return DecodedImage(image: image, source: fetched.source, format: format, byteCount: fetched.data.count, metrics: metrics)
        } failure: { [cacheWriter] error, _ in
            // A decode stopped at its deadline says nothing about the bytes.
            if !(error is WorkDeadlineExceeded) { cacheWriter.removeUndecodable(for: request) }
            return ImagePipelineError(.decodingFailed, url: request.request.url, underlying: error)
        }
    }

    /// Decodes image bytes: the one decode step of every image load, the
    /// pipeline's and ``NetworkClient/image(for:options:progress:)``'s.
    ///
    /// - Throws: The decoder's error, unchanged.
    static func decode(_ data: Data, with decoder: any ImageDecoding, options: ImageDecodingOptions) throws -> Image {
        try decoder.decode(data, options: options)
    }
}
