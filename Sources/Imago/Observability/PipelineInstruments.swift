import CoreMetrics
import Foundation
import Logging

/// The pipeline's logging and metrics, named once.
///
/// Metrics (labels as Prometheus shows them):
/// - `imago_pipeline_images{source}`: images delivered, by where they came
///   from (`memory`, `disk`, `network`, `file`);
/// - `imago_pipeline_loaded_bytes`: encoded bytes read from the network or files;
/// - `imago_pipeline_decode_duration{format}`: one decode (a timer);
/// - `imago_pipeline_failures{code}`: failed requests, by ``ImagePipelineError`` code.
struct PipelineInstruments: Sendable {
    let logger: Logger
    /// `nil`: `MetricsSystem.factory`, read at each use, so a backend
    /// bootstrapped after the pipeline was made still gets the metrics.
    let factory: (any MetricsFactory)?

    private var metrics: any MetricsFactory { factory ?? MetricsSystem.factory }

    func delivered(_ response: ImageResponse) {
        Counter(label: "imago_pipeline_images", dimensions: [("source", response.source.rawValue)], factory: metrics).increment()
        if response.source == .network || response.source == .file, let bytes = response.byteCount {
            Counter(label: "imago_pipeline_loaded_bytes", factory: metrics).increment(by: bytes)
        }
        logger.debug("loaded", metadata: [
            "url": "\(response.request.url?.absoluteString ?? "")",
            "source": "\(response.source.rawValue)",
            "ms": "\(Int((response.metrics.totalDuration * 1000).rounded()))",
        ])
    }

    func decoded(_ format: ImageFormat?, seconds: TimeInterval) {
        CoreMetrics.Timer(label: "imago_pipeline_decode_duration", dimensions: [("format", format?.rawValue ?? "unknown")], factory: metrics)
            .recordNanoseconds(Int64(seconds * 1e9))
    }

    func failed(_ error: any Error, request: ImageRequest) {
        guard !(error is CancellationError) else { return }
        let code = (error as? ImagePipelineError)?.code.description ?? "other"
        Counter(label: "imago_pipeline_failures", dimensions: [("code", code)], factory: metrics).increment()
        logger.info("load failed", metadata: ["url": "\(request.url?.absoluteString ?? "")", "error": "\(error)"])
    }
}
