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
    /// (nothing to do) when `autoRotates`. The header is read with the
    /// decode's `options` (its PNG chunk limits).
    static func undoingOrientation(of source: Data, unless autoRotates: Bool, options: ImageDecodingOptions) throws -> ImageOrientation {
        autoRotates ? .up : try ImageDecoders.info(for: source, options: options).orientation.inverse
    }

    /// The animation strategy (``RenderStrategy/animation``): an animated
    /// source rendered as an animation, frame by frame, within a
    /// reservation of the memory it will take. Each frame is decoded,
    /// processed and encoded before the next is decoded, so memory holds
    /// one frame (and the codecs' canvases), whatever the length. `nil`
    /// when animations are off, the source is not animated or the format
    /// asked for writes no animations (the first frame is then rendered as
    /// a still).
    ///
    /// The first ``ImageServerConfiguration/maximumAnimationFrames`` frames
    /// are kept, with their durations and the loop count; the pixel limit
    /// counts all of them. As imgproxy, `trim` is not applied to
    /// animations; a `smart` gravity is centred so every frame is cut the same.
    func animation(_ input: RenderInput) async throws -> RenderedImage? {
        guard SourceLimits(configuration, options: input.options).animates, let header = input.header, header.frameCount > 1,
              let sourceFormat = ImageFormat(sniffing: input.bytes.data), [.gif, .webp, .png, .avif, .jxl].contains(sourceFormat)
        else { return nil }
        // The source decides when nothing else does: GIF and WebP stay as
        // they are, the others (APNG, AVIF, JPEG XL) become WebP.
        let policy = configuration.outputPolicy
        guard let format = input.key.animatedFormat ?? policy.animatedFormat(forSource: sourceFormat).flatMap(ProcessingOptions.OutputFormat.init),
              policy.animatedFormats.contains(format.imageFormat),
              // An animatable format always has an animation encoder.
              let encoder = ImageEncoders.animationEncoder(for: format.imageFormat, quality: input.options.quality(for: format, policy: policy),
                                                           settings: configuration.encoderSettings)
        else { return nil }
        return try await memory.withReservation(of: renderCost(of: input.bytes.data, header: header, options: input.options)) {
            try await animated(input, header: header, format: format, encoder: encoder)
        }
    }

    /// The frames of `input` decoded, processed and encoded as `format` by `encoder`.
    private func animated(
        _ input: RenderInput, header info: ImageInfo, format: ProcessingOptions.OutputFormat, encoder: any AnimationEncoding
    ) async throws -> RenderedImage {
        let (bytes, options) = (input.bytes, input.options)
        var adjusted = options
        adjusted.trim = nil
        if adjusted.gravity == .smart { adjusted.gravity = .center }
        if adjusted.crop?.gravity == .smart { adjusted.crop?.gravity = .center }
        let frameOptions = adjusted
        let sourceLimits = SourceLimits(configuration, options: options)
        let settings = (maximumSide: configuration.maximumOutputSide, frames: sourceLimits.animationFrames,
                        watermark: configuration.watermark, watermarkOpacity: configuration.watermarkOpacity)
        var decodingOptions = pipeline.configuration.decodingOptions
        decodingOptions.thumbnail = input.request.thumbnail
        decodingOptions.maximumPixelCount = sourceLimits.decodedPixels(frames: info.frameCount)
        if keepsProfile(options, format: format, header: info) { decodingOptions.colorManagement = .keepOriginal }
        let (exifLimit, logger) = (configuration.maximumKeptExifBytes, configuration.logger)
        let source = bytes.data
        let limits = decodingOptions
        let decoder = pipeline.configuration.decoder
        let started = DispatchTime.now().uptimeNanoseconds
        decodes.withLock { $0 += 1 }
        let (pipeline, request) = (self.pipeline, input.request)
        let data = try await inSlot(of: input.job) { trace throws -> Data in
            try withSpan(SpanName.animate, context: trace) { _ in
                var writer: (any AnimationWriter)?
                var exif: Data?
                let undo = try Self.undoingOrientation(of: source, unless: frameOptions.autoRotates, options: limits)
                do {
                    try decoder.decodeFrames(source, options: limits, maximumFrames: settings.frames) { upright in
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
                } catch let failure as ImageDecodingError {
                    // Bytes that do not decode leave the disk cache, as a still's do.
                    pipeline.discardUndecodableBytes(for: request)
                    throw failure
                }
                guard let writer else { throw ImageServerError(.undecodable, "the animation has no frame") }
                return Self.withMetadata(try writer.finish(), format: format, exif: exif, options: options, limit: exifLimit, logger: logger)
            }
        }
        return RenderedImage(data, format: format.imageFormat, from: bytes, renderingTime: secondsSince(started))
    }
}
#endif
