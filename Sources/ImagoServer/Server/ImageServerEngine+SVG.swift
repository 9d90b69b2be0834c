#if Server
import Crypto
import Dispatch
import Foundation
import Imago
import ImagoSVG
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
    /// - An SVG source with an output format is rasterised
    ///   (``svgDecoded(_:request:job:)``): `nil`.
    /// - With ``ImageServerConfiguration/alwaysRasterizesSVG``, an SVG
    ///   source is drawn unless the path names `svg`: `nil`.
    /// - Any other source is `nil`, or refused (`422 cannot_write`) when the
    ///   path names `svg`.
    ///
    /// The sanitising takes one of the job's slots and runs on the
    /// pipeline's work queue, like a decode; the size is read by the
    /// rasterizer's child process, never by librsvg in the server.
    func svgAnswer(
        _ bytes: SourceBytes, options: ProcessingOptions,
        job: SharedJob<RenderedImage>
    ) async throws -> RenderedImage? {
        guard SVGSanitizer.looksLikeSVG(bytes.data) else {
            guard !options.requestsSVG else {
                let format = ImageFormat(sniffing: bytes.data).map { "a \($0.rawValue.uppercased()) image" } ?? "not an SVG document"
                throw ImageServerError(.cannotWrite, "only an SVG source can be answered as svg, and this source is \(format)")
            }
            return nil
        }
        guard options.format == nil else { return nil }
        // Drawn all the same when the server always rasterises SVG (and does not keep it as it is).
        guard options.requestsSVG || !configuration.alwaysRasterizesSVG || configuration.keepsSVGUnprocessed else { return nil }
        let limit = pipeline.configuration.decodingOptions.maximumPixelCount
        let started = DispatchTime.now().uptimeNanoseconds
        var rasterizer = svgDecoder.rasterizer
        rasterizer.maximumPixelCount = limit
        let process = rasterizer
        let sanitizes = configuration.sanitizesSVG
        let sanitizer = svgDecoder.sanitizer(embeddingAtMost: limit)
        let document = try await Self.killingOnCancellation { cancellation in
            try await inSlot(of: job) { trace throws -> Data in
                try withSpan(SpanName.sanitizeSVG, context: trace) { _ in
                    // Without sanitising (imgproxy's IMGPROXY_SANITIZE_SVG=false) the document goes out as it came,
                    // under the answer's sandboxing Content-Security-Policy.
                    guard sanitizes else { return bytes.data }
                    do {
                        let sanitized = try sanitizer.sanitized(bytes.data)
                        _ = try process.size(of: sanitized, cancellation: cancellation)
                        return sanitized
                    } catch {
                        throw ImageServerError(answering: SVGAwareDecoder.decodingError(error))
                    }
                }
            }
        }
        return RenderedImage(document, format: nil, from: bytes, decodingDuration: secondsSince(started))
    }

    /// An SVG source drawn as the pipeline's decoder draws it (sanitised,
    /// then drawn by the child process at the request's thumbnail size), in
    /// one of the job's slots, with the child killed if the render is
    /// cancelled; `nil` for any other source.
    func svgDecoded(
        _ bytes: SourceBytes, request: ImageRequest,
        job: SharedJob<RenderedImage>
    ) async throws -> ImageResponse? {
        guard SVGSanitizer.looksLikeSVG(bytes.data) else { return nil }
        var options = pipeline.configuration.decodingOptions
        options.thumbnail = request.thumbnail
        let (decoder, limits) = (svgDecoder, options)
        let started = DispatchTime.now().uptimeNanoseconds
        let image = try await Self.killingOnCancellation { cancellation in
            try await inSlot(of: job) { trace in
                try withSpan(SpanName.decode, context: trace) { span in
                    let image = try decoder.rasterized(bytes.data, options: limits, cancellation: cancellation)
                    span.attributes["imago.image.width"] = image.width
                    span.attributes["imago.image.height"] = image.height
                    return image
                }
            }
        }
        let metrics = ImageTaskMetrics(loadingDuration: bytes.duration, decodingDuration: secondsSince(started), byteCount: bytes.data.count)
        return ImageResponse(image: image, request: request, source: bytes.source, format: nil,
                             byteCount: bytes.data.count, metrics: metrics)
    }

    /// Runs `body` with a cancellation that kills the rasterizer's child
    /// when the calling task is cancelled.
    static func killingOnCancellation<T: Sendable>(
        _ body: (SVGRasterizerCancellation) async throws -> T
    ) async throws -> T {
        let cancellation = SVGRasterizerCancellation()
        return try await withTaskCancellationHandler {
            try await body(cancellation)
        } onCancel: {
            cancellation.cancel()
        }
    }

    /// The sanitizer SVG sources go through: the default limits, or, with
    /// ``ImageServerConfiguration/liftsSVGXMLLimits``, libxml2's limits for
    /// huge documents lifted and elements nested up to
    /// ``SVGSanitizer/liftedMaximumDepth``.
    static func svgSanitizer(_ configuration: ImageServerConfiguration) -> SVGSanitizer {
        guard configuration.liftsSVGXMLLimits else { return SVGSanitizer() }
        return SVGSanitizer(maximumDepth: SVGSanitizer.liftedMaximumDepth, liftsXMLLimits: true)
    }

    /// The rasterizer SVG sources are drawn with: the configured executable
    /// (else ``SVGRasterizerProcess/defaultExecutable(environment:)``) and
    /// limits. A missing executable is logged here, once: SVG sources are
    /// then answered `422`, never drawn in the server's process.
    static func svgRasterizer(_ configuration: ImageServerConfiguration) -> SVGRasterizerProcess {
        let rasterizer = SVGRasterizerProcess(
            executable: configuration.svgRasterizerExecutable ?? SVGRasterizerProcess.defaultExecutable(),
            timeout: configuration.svgRasterizerTimeout, memoryLimit: configuration.svgRasterizerMemoryLimit,
            maximumPixelCount: max(1, configuration.maximumSourcePixels), liftsXMLLimits: configuration.liftsSVGXMLLimits
        )
        if !rasterizer.isAvailable {
            configuration.logger.error("""
                the SVG rasterizer \(rasterizer.executable.path) is not an executable file: SVG sources will be answered 422 \
                (build imago-svg-rasterizer beside the server, or name it with \(SVGRasterizerProcess.environmentVariable))
                """)
        }
        return rasterizer
    }
}
#endif
