#if Server
import Dispatch
import Foundation
import Imago
import ImagoSVG
import ImagoCodecs
import Logging
import Tracing

/// The still strategy (``RenderStrategy/still``): one image decoded (an
/// SVG source drawn by its child process), processed as the options say
/// (``ProcessingOptions/apply(to:maximumSide:watermark:watermarkOpacity:)``),
/// flattened where the format needs it, and encoded with the metadata the
/// options keep.
extension ImageServerEngine {
    /// The render of `input` as a still image, within a reservation of the
    /// memory it will take (``renderCost(of:header:options:)``): large
    /// renders queue instead of growing the process.
    func still(_ input: RenderInput) async throws -> RenderedImage {
        let (options, bytes, header) = (input.options, input.bytes, input.header)
        return try await memory.withReservation(of: renderCost(of: bytes.data, header: header, options: options)) { [self] in
            let loaded: ImageResponse
            if let drawn = try await svgDecoded(bytes, request: input.request, job: input.job) {
                loaded = drawn
            } else {
                loaded = try await decoded(bytes, request: input.request, keepsProfile: keepsProfile(options, format: options.format, header: header),
                                           autoRotates: options.autoRotates,
                                           maximumPixelCount: SourceLimits(configuration, options: options).decodedPixels(frames: 1),
                                           usesEmbeddedThumbnail: options.enforcesThumbnail, job: input.job)
            }
            let (maximumSide, policy, settings) = (configuration.maximumOutputSide, configuration.outputPolicy, configuration.encoderSettings)
            let (watermark, watermarkOpacity) = (configuration.watermark, configuration.watermarkOpacity)
            let (exifLimit, logger) = (configuration.maximumKeptExifBytes, configuration.logger)
            let started = DispatchTime.now().uptimeNanoseconds
            let (data, format) = try await inSlot(of: input.job) { trace throws -> (Data, ProcessingOptions.OutputFormat) in
                let (image, format) = withSpan(SpanName.process, context: trace) { _ in
                    let processed = options.apply(to: loaded.image, maximumSide: maximumSide,
                                                  watermark: watermark, watermarkOpacity: watermarkOpacity)
                    // `options.format` is set unless the output follows the source.
                    let format = options.format ?? ProcessingOptions.OutputFormat(policy.decision(
                        forSource: loaded.format, hasAlpha: processed.pixelFormat.hasAlpha && options.background == nil
                    ).format) ?? .jpeg
                    return (options.flattened(processed, for: format), format)
                }
                // A stopped render is not encoded.
                try WorkDeadline.checkCurrent()
                return try withSpan(SpanName.encode, context: trace) { span in
                    span.attributes["imago.format"] = format.rawValue
                    let encoded = try options.encoded(image, as: format, policy: policy, settings: settings)
                    return (Self.withMetadata(encoded, format: format, exif: loaded.image.metadata?.exif, options: options,
                                              limit: exifLimit, logger: logger), format)
                }
            }
            var rendered = RenderedImage(
                data: data,
                format: format.imageFormat,
                sourceLayer: loaded.source.rawValue,
                sourceByteCount: loaded.byteCount,
                sourceMetrics: loaded.metrics,
                renderingTime: secondsSince(started)
            )
            rendered.sourceCacheHeaders = bytes.cacheHeaders
            return rendered
        }
    }

    /// Whether a result keeps its source's colour profile: `scp:0`, in
    /// any format but GIF (which holds none).
    static func keepsProfile(_ options: ProcessingOptions, format: ProcessingOptions.OutputFormat?) -> Bool {
        !options.stripsColorProfile && format != .gif
    }

    /// ``keepsProfile(_:format:)``, and the source's profile is no larger
    /// than ``ImageServerConfiguration/maximumKeptProfileBytes``: a larger
    /// one is not copied (the pixels are converted to sRGB with it
    /// instead), with a log line.
    func keepsProfile(_ options: ProcessingOptions, format: ProcessingOptions.OutputFormat?, header: ImageInfo?) -> Bool {
        guard Self.keepsProfile(options, format: format) else { return false }
        let size = header?.colorProfile?.data.count ?? 0
        guard size <= configuration.maximumKeptProfileBytes else {
            configuration.logger.info("a colour profile of \(size) bytes is not kept (the limit is \(configuration.maximumKeptProfileBytes)); the image is converted to sRGB")
            return false
        }
        return true
    }

    /// `encoded` with the source's EXIF (`exif`, as the decoder read it
    /// into ``Imago/Image/metadata``) as the options say: all of it
    /// (turned "up") with `strip_metadata` off, only `Artist` and
    /// `Copyright` with `keep_copyright`, else none; JPEG, PNG and WebP
    /// results only. EXIF larger than `limit` bytes is not copied (with a log line).
    static func withMetadata(_ encoded: Data, format: ProcessingOptions.OutputFormat, exif: Data?, options: ProcessingOptions,
                             limit: Int, logger: Logger) -> Data {
        guard [.jpeg, .png, .webp].contains(format), !options.stripsMetadata || options.keepsCopyright,
              let tiff = exif else { return encoded }
        guard tiff.count <= limit else {
            logger.info("EXIF of \(tiff.count) bytes is not kept (the limit is \(limit))")
            return encoded
        }
        // Turned upright, the pixels need an EXIF that says "up"; left as stored, the source's orientation.
        let metadata = ImageMetadata(exif: tiff)
        let kept = options.stripsMetadata ? metadata.exif(keeping: .keepCopyright) : options.autoRotates ? metadata.exif(keeping: .keepAll) : tiff
        return kept.map { ExifMetadata.inserting($0, into: encoded, format: format.imageFormat) } ?? encoded
    }

    /// The source decoded as the pipeline decodes it (its decoder, limits
    /// and the request's thumbnail; its colour profile kept when
    /// `keepsProfile`; at most `maximumPixelCount` pixels; the embedded
    /// thumbnail with `usesEmbeddedThumbnail`), in one of the job's slots.
    func decoded(
        _ bytes: SourceBytes, request: ImageRequest, keepsProfile: Bool,
        autoRotates: Bool, maximumPixelCount: Int, usesEmbeddedThumbnail: Bool, job: SharedJob<RenderedImage>
    ) async throws -> ImageResponse {
        let pipeline = self.pipeline
        let started = DispatchTime.now().uptimeNanoseconds
        decodes.withLock { $0 += 1 }
        let headerOptions = pipeline.configuration.decodingOptions
        let image = try await inSlot(of: job) { trace in
            try withSpan(SpanName.decode, context: trace) { span in
                let upright = try pipeline.decode(bytes.data, for: request) { options in
                    if keepsProfile { options.colorManagement = .keepOriginal }
                    options.maximumPixelCount = maximumPixelCount
                    options.usesEmbeddedThumbnail = usesEmbeddedThumbnail
                }
                let undo = try Self.undoingOrientation(of: bytes.data, unless: autoRotates, options: headerOptions)
                span.attributes["imago.image.width"] = upright.width
                span.attributes["imago.image.height"] = upright.height
                return undo == .up ? upright : upright.applying(undo)
            }
        }
        let metrics = ImageTaskMetrics(loadingDuration: bytes.duration, decodingDuration: secondsSince(started),
                                       byteCount: bytes.data.count)
        return ImageResponse(image: image, request: request, source: bytes.source, format: ImageFormat(sniffing: bytes.data),
                             byteCount: bytes.data.count, metrics: metrics)
    }

    /// A size to decode to, so the decoder's own scaling (JPEG's DCT
    /// scaling, PNG's rows downscaled as they arrive) does the resampling:
    /// the box itself for `fit` or a box with a free side, the box
    /// stretched to for `force`, a box the result covers otherwise (the
    /// crop, at any gravity, is ``ProcessingOptions/apply(to:maximumSide:)``'s);
    /// no hint when both sides are free. The plan worked out again on the
    /// decoded image then scales by 1, so the source is resampled once
    /// (not for `auto` that turns out to be `fit`, which was decoded to
    /// cover the box, for `force` with `el:1` that shrinks one side and
    /// enlarges the other, or when the server's maximum side is smaller
    /// than the box: those are resampled again).
    ///
    /// Options that make the plan depend on the source's own size (a trim,
    /// a crop, a turn, a device pixel ratio, zoom, minimum sizes, no
    /// auto-rotation, an enforced embedded thumbnail, which is the source
    /// then) get no hint: the source is decoded whole.
    func decodeHint(for options: ProcessingOptions) -> Thumbnail? {
        guard options.width > 0 || options.height > 0 else { return nil }
        guard options.crop == nil, options.trim == nil, options.rotation == 0, options.dpr == 1, options.zoomX == 1, options.zoomY == 1,
              options.minWidth == 0, options.minHeight == 0, options.autoRotates, !options.enforcesThumbnail else { return nil }
        let unbounded = 1 << 30
        let mode: ResizeMode = if options.width == 0 || options.height == 0 || options.resizingType == .fit {
            .fit
        } else if options.resizingType == .force {
            .force
        } else {
            .fill
        }
        return Thumbnail(
            width: options.width > 0 ? options.width : unbounded,
            height: options.height > 0 ? options.height : unbounded,
            mode: mode
        )
    }
}
#endif
