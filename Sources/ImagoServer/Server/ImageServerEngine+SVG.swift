#if Server
import Crypto
import Dispatch
import Foundation
import Imago
import Tracing

extension ImageServerEngine {
    /// The answer for an SVG source asked for as SVG, or `nil` when the
    /// source is rendered as usual.
    ///
    /// - An SVG source (``SVGSanitizer/looksLikeSVG(_:)``) with no output
    ///   format (the path names none or `svg`, and `Accept` picked none) is
    ///   answered with its sanitised document, after its size is checked
    ///   against the pixel limit, as imgproxy answers SVG with SVG. The
    ///   other options do not apply to it.
    /// - An SVG source with an output format is rasterised by the
    ///   pipeline's decoder (``SVGAwareDecoder``): `nil`.
    /// - Any other source is `nil`, or refused (`400 bad_options`) when the
    ///   path names `svg`.
    ///
    /// The sanitising takes one of the job's slots and runs on the
    /// pipeline's work queue, like a decode.
    func svgAnswer(
        _ bytes: (data: Data, source: ImageResponse.Source, duration: TimeInterval), options: ProcessingOptions,
        job: SharedJob<RenderedImage>
    ) async throws -> RenderedImage? {
        guard SVGSanitizer.looksLikeSVG(bytes.data) else {
            guard !options.requestsSVG else {
                let format = ImageFormat(sniffing: bytes.data).map { "a \($0.rawValue.uppercased()) image" } ?? "not an SVG document"
                throw ImageServerError(.badOptions, "only an SVG source can be answered as svg, and this source is \(format)")
            }
            return nil
        }
        guard options.format == nil else { return nil }
        let limit = pipeline.configuration.decodingOptions.maximumPixelCount
        let workQueue = pipeline.configuration.workQueue
        let started = DispatchTime.now().uptimeNanoseconds
        let trace = ServiceContext.current ?? .topLevel
        let document = try await job.withSlot {
            try await workQueue.perform { () throws -> Data in
                try withSpan(SpanName.sanitizeSVG, context: trace) { _ in
                    do {
                        let sanitized = try SVGSanitizer(maximumEmbeddedPixelCount: limit).sanitized(bytes.data)
                        _ = try SVGRasterizer(maximumPixelCount: limit).size(of: sanitized)
                        return sanitized
                    } catch {
                        throw ImageServerError(answering: SVGAwareDecoder.decodingError(error))
                    }
                }
            }
        }
        var metrics = ImageTaskMetrics(loadingDuration: bytes.duration, byteCount: bytes.data.count)
        metrics.decodingDuration = Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9
        return RenderedImage(
            data: document, format: nil, etag: "\"" + SHA256.hash(data: document).lowercaseHex + "\"",
            sourceLayer: bytes.source.rawValue, sourceByteCount: bytes.data.count, sourceMetrics: metrics, renderingTime: 0
        )
    }
}
#endif
