#if Server
import Dispatch
import Foundation
import Imago
import ImagoSVG
import Tracing

/// The ways the render stage makes a render, tried in this order once the
/// source's bytes are here; the first that applies makes it. Each is a
/// function of ``ImageServerEngine`` (``ImageServerEngine/make(_:_:)``);
/// the stage around them (``ImageServerEngine/render(_:options:key:job:)``)
/// owns what they share: the job and its slots, the deadline, the source's
/// bytes and header, and keeping the result (``ImageServerEngine/kept(_:for:storing:)``:
/// the output cache, the result store, the metrics).
enum RenderStrategy: String, CaseIterable, Sendable {
    /// An SVG source with no output format: its sanitised document.
    case svgDocument
    /// A source whose format the path skips (`skip_processing`): its bytes as they are.
    case skipProcessing
    /// An animated source into a format that animates: decoded, processed
    /// and encoded a frame at a time.
    case animation
    /// Everything else: one image (the first frame; an SVG source drawn by
    /// its child process) decoded, processed as the options say, encoded.
    case still
}

/// What every strategy starts from.
struct RenderInput: Sendable {
    let bytes: SourceBytes
    /// The request the bytes were loaded for, with the decode hint.
    let request: ImageRequest
    let options: ProcessingOptions
    let key: RenderIdentity
    let job: SharedJob<RenderedImage>
    /// The source's header, read once; `nil` when it does not parse (an SVG
    /// document, or bytes whose decode then fails on its own).
    let header: ImageInfo?
}

extension ImageServerEngine {
    /// The render `strategy` makes from `input`, or `nil` when it does not
    /// apply (``RenderStrategy/still`` always applies).
    func make(_ strategy: RenderStrategy, _ input: RenderInput) async throws -> RenderedImage? {
        switch strategy {
        case .svgDocument:
            try await svgAnswer(input.bytes, options: input.options, job: input.job)
        case .skipProcessing:
            input.options.skipProcessingFormats.isEmpty ? nil : try skipped(input)
        case .animation:
            try await animation(input)
        case .still:
            try await still(input)
        }
    }

    /// Runs CPU-bound `work` as every strategy's steps run: in one of the
    /// job's slots (the pipeline's decode slots), on the pipeline's work
    /// queue, under the render's ``WorkDeadline``. `work` gets the request's
    /// trace context, for its spans (the queue's thread has no task-local
    /// context of its own).
    func inSlot<T: Sendable>(
        of job: SharedJob<RenderedImage>, _ work: @escaping @Sendable (_ trace: ServiceContext) throws -> T
    ) async throws -> T {
        let workQueue = pipeline.configuration.workQueue
        let trace = ServiceContext.current ?? .topLevel
        return try await job.perform(on: workQueue) { try work(trace) }
    }
}

extension RenderedImage {
    /// A render made from `bytes` (`data` as `format`; `nil` for an SVG
    /// document), with the source's timings: `decodingDuration` when the
    /// strategy decoded on its own, and `renderingTime`, the seconds of its
    /// processing and encoding.
    init(_ data: Data, format: ImageFormat?, from bytes: SourceBytes, decodingDuration: TimeInterval? = nil,
         renderingTime: TimeInterval = 0) {
        var metrics = ImageTaskMetrics(loadingDuration: bytes.duration, byteCount: bytes.data.count)
        metrics.decodingDuration = decodingDuration
        self.init(data: data, format: format, sourceLayer: bytes.source.rawValue, sourceByteCount: bytes.data.count,
                  sourceMetrics: metrics, renderingTime: renderingTime)
        sourceCacheHeaders = bytes.cacheHeaders
    }
}

/// Seconds since `started` (a `DispatchTime` uptime in nanoseconds).
func secondsSince(_ started: UInt64) -> TimeInterval {
    Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9
}
#endif
