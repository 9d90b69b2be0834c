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

/// Animated sources, rendered frame by frame.
extension ImageServerEngine {
    /// What turns a decoded image (turned upright as its source's EXIF
    /// orientation says, as every decoder turns images) back to the
    /// source's stored pixels, for `auto_rotate:0`; ``ImageOrientation/up``
    /// (nothing to do) when `autoRotates`.
    static func undoingOrientation(of source: Data, unless autoRotates: Bool) throws -> ImageOrientation {
        autoRotates ? .up : try ImageDecoders.info(for: source).orientation.inverse
    }

    /// An animated source rendered as an animation, frame by frame: each
    /// frame is decoded, processed and encoded before the next is decoded,
    /// so memory holds one frame (and the codecs' canvases), whatever the
    /// length. `nil` when the source is not animated or the format asked
    /// for writes no animations (then the first frame is rendered as a still).
    ///
    /// The first ``ImageServerConfiguration/maximumAnimationFrames`` frames
    /// are kept, with their durations and the loop count; the pixel limit
    /// counts all of them. As imgproxy, `trim` is not applied to
    /// animations; a `smart` gravity is centred so every frame is cut the same.
    func animated(
        _ bytes: (data: Data, source: ImageResponse.Source, duration: TimeInterval), header info: ImageInfo, request: ImageRequest,
        options: ProcessingOptions, format requested: ProcessingOptions.OutputFormat?, job: SharedJob<RenderedImage>
    ) async throws -> RenderedImage? {
        guard let sourceFormat = ImageFormat(sniffing: bytes.data), [.gif, .webp, .png, .avif, .jxl].contains(sourceFormat),
              info.frameCount > 1 else { return nil }
        // The source decides when nothing else does: GIF and WebP stay as
        // they are, the others (APNG, AVIF, JPEG XL) become WebP.
        let policy = configuration.outputPolicy
        guard let format = requested ?? policy.animatedFormat(forSource: sourceFormat).flatMap(ProcessingOptions.OutputFormat.init),
              policy.animatedFormats.contains(format.imageFormat) else { return nil }
        var adjusted = options
        adjusted.trim = nil
        if adjusted.gravity == .smart { adjusted.gravity = .center }
        if adjusted.crop?.gravity == .smart { adjusted.crop?.gravity = .center }
        let frameOptions = adjusted
        let settings = (maximumSide: configuration.maximumOutputSide, frames: configuration.maximumAnimationFrames,
                        watermark: configuration.watermark, watermarkOpacity: configuration.watermarkOpacity)
        let quality = options.quality(for: format, policy: policy)
        // An animatable format always has an animation encoder.
        guard let encoder = ImageEncoders.animationEncoder(for: format.imageFormat, quality: quality) else { return nil }
        var decodingOptions = pipeline.configuration.decodingOptions
        decodingOptions.thumbnail = request.thumbnail
        if keepsProfile(options, format: format, header: info) { decodingOptions.colorManagement = .keepOriginal }
        let (exifLimit, logger) = (configuration.maximumKeptExifBytes, configuration.logger)
        let source = bytes.data
        let limits = decodingOptions
        let decoder = pipeline.configuration.decoder
        let workQueue = pipeline.configuration.workQueue
        let started = DispatchTime.now().uptimeNanoseconds
        let trace = ServiceContext.current ?? .topLevel
        decodes.withLock { $0 += 1 }
        let data = try await job.withSlot {
            try await workQueue.perform { () throws -> Data in
                try withSpan(SpanName.animate, context: trace) { _ in
                    var writer: (any AnimationWriter)?
                    var exif: Data?
                    let undo = try Self.undoingOrientation(of: source, unless: frameOptions.autoRotates)
                    try decoder.decodeFrames(bytes.data, options: limits, maximumFrames: settings.frames) { upright in
                        let frame = undo == .up ? upright : upright.applying(undo)
                        let processed = frameOptions.apply(to: frame, maximumSide: settings.maximumSide,
                                                           watermark: settings.watermark, watermarkOpacity: settings.watermarkOpacity)
                        let image = frameOptions.flattened(processed, for: format)
                        try WorkDeadline.checkCurrent()
                        if writer == nil { exif = frame.metadata?.exif }
                        let current = try writer ?? encoder.makeWriter(width: image.width, height: image.height, loopCount: frame.loopCount)
                        writer = current
                        try current.add(image, duration: frame.frames[0].duration ?? 0.1)
                        // Past the deadline, no next frame (`perform` then throws).
                        return !WorkDeadline.currentHasPassed
                    }
                    guard let writer else { throw ImageServerError(.undecodable, "the animation has no frame") }
                    return Self.withMetadata(try writer.finish(), format: format, exif: exif, options: options, limit: exifLimit, logger: logger)
                }
            }
        }
        let finished = DispatchTime.now().uptimeNanoseconds
        return RenderedImage(
            data: data, format: format.imageFormat, sourceLayer: bytes.source.rawValue, sourceByteCount: bytes.data.count,
            sourceMetrics: ImageTaskMetrics(loadingDuration: bytes.duration, byteCount: bytes.data.count),
            renderingTime: Double(finished - started) / 1e9
        )
    }
}
#endif
