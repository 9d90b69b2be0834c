import Foundation

/// An ``ImageDecoding`` that drives a codec through its ``CodecFunctions``
/// table and enforces the safety limits between the two steps.
///
/// 1. ``CodecFunctions/open`` reads the header; a failure is
///    ``ImageDecodingError/Code/couldNotOpen`` and nothing else runs.
/// 2. The size is checked: zero sizes are rejected, width x height times
///    the frames decoded (all of them, or frames 0 through the requested
///    index, which an animation needs to composite it) must not exceed
///    ``ImageDecodingOptions/maximumPixelCount`` (``ImageDecodingError/Code/tooManyPixels``),
///    the frame count must not exceed ``ImageDecodingOptions/maximumFrameCount``
///    (``ImageDecodingError/Code/tooManyFrames``),
///    and a requested frame must exist (``ImageDecodingError/Code/frameOutOfRange``).
///    This is the one place those limits are decided; the tables rely on it.
/// 3. ``CodecFunctions/makeImage`` decodes; a failure is
///    ``ImageDecodingError/Code/couldNotProduceImage``, except a limit the
///    table meets while decoding, which it throws as
///    ``ImageDecodingError/Code/tooComplex`` and which passes unchanged. The table gets the
///    options unchanged and may use the ``ImageDecodingOptions/thumbnail``
///    to scale while decoding (JPEG's DCT scaling, libwebp's scaler, PNG
///    rows downscaled as they are decoded). Its image is returned unchanged,
///    except with a thumbnail: then it is fitted to the thumbnail's
///    ``Thumbnail/geometry(width:height:)`` for the header's (upright) size
///    by ``Image/resized(to:filter:linearLight:)``, resampled unless the
///    table already made the scaled size, and cut for ``ResizeMode/crop``.
/// 4. When the file embeds a colour profile (``OpenedImage/colorProfile``),
///    the image is converted to sRGB through the ``ColorConversionFunctions``
///    table, or keeps the profile in ``Image/colorProfile``, as
///    ``ImageDecodingOptions/colorManagement`` says. A decoder made without
///    a colour table keeps every profile. When the table's image carries a
///    profile of its own (a table that had to convert while decoding, as
///    JPEG's does for CMYK inks, which no pixel format holds), that profile
///    describes the pixels and is used instead of the file's.
///
/// The table's own errors are kept, unchanged, as ``ImageDecodingError/underlying``.
public struct CodecDecoder: ImageDecoding {
    /// The format this decoder handles (used in errors).
    public let format: ImageFormat
    /// What converts images with an embedded profile to sRGB; `nil` keeps
    /// every profile on the image.
    public let colorConversion: ColorConversionFunctions?

    /// The table's `makeImage` and `frames`, bound to the state its `open` produced.
    struct ImageStep: Sendable {
        let image: @Sendable (_ frameIndex: Int?, _ options: ImageDecodingOptions) throws -> Image
        let frames: (@Sendable (_ last: Int, _ options: ImageDecodingOptions, _ body: (Image) throws -> Bool) throws -> Void)?
    }

    /// The table's `open`, returning the header with the image step bound to
    /// the typed state. This is the one place the table's `State` type is
    /// hidden (by a closure, not a cast), so that decoders of every format
    /// share one type: `ImageDecoders.decoder(for:)` can return any of them,
    /// and a property can hold one without naming a C library's state.
    private let openTable: @Sendable (_ data: Data, _ options: ImageDecodingOptions) throws -> OpenedImage<ImageStep>

    /// Creates a decoder for `format` over `functions`.
    ///
    /// ```swift
    /// let decoder = CodecDecoder(format: .png, functions: .png)
    /// ```
    public init<State>(format: ImageFormat, functions: CodecFunctions<State>, colorConversion: ColorConversionFunctions? = nil) {
        self.format = format
        self.colorConversion = colorConversion
        openTable = { data, options in
            let opened = try functions.open(data, options)
            let frames = functions.frames.map { frames in
                { @Sendable (last: Int, options: ImageDecodingOptions, body: (Image) throws -> Bool) throws in
                    try frames(opened, last, options, body)
                }
            }
            let steps = ImageStep(image: { frameIndex, options in try functions.makeImage(opened, frameIndex, options) }, frames: frames)
            var erased = OpenedImage(width: opened.width, height: opened.height, frameCount: opened.frameCount, state: steps,
                                     colorProfile: opened.colorProfile)
            erased.orientation = opened.orientation
            erased.exif = opened.exif
            (erased.scanCount, erased.tileCount) = (opened.scanCount, opened.tileCount)
            return erased
        }
    }

    /// Opens `data`, checks the limits, makes the image and fits it to the
    /// thumbnail, as the type's summary describes.
    ///
    /// - Throws: ``ImageDecodingError``, with the table's own error as
    ///   ``ImageDecodingError/underlying``.
    public func decode(_ data: Data, options: ImageDecodingOptions) throws -> Image {
        let opened = try open(data, options: options)
        try check(opened, options: options)
        let image: Image
        do {
            image = try opened.state.image(options.frameIndex, options)   // the table's makeImage, bound to its state
        } catch let error as ImageDecodingError where error.code == .tooComplex {
            throw error   // a limit the table meets while decoding (PNG chunks after the image data): the limit's own error
        } catch {
            throw ImageDecodingError(.couldNotProduceImage, format: format, message: "the image could not be produced: \(error)", underlying: error)
        }
        return finished(image, opened: opened, options: options)
    }

    /// Decodes the frames of `data` one at a time, in order, and hands each
    /// to `body` as a one-frame image (composited, fitted to the thumbnail,
    /// converted to sRGB as ``decode(_:options:)`` does, with its duration
    /// and the animation's loop count) until `body` returns `false`: an
    /// animation is processed and re-encoded holding one frame at a time
    /// (and the codec's canvas), never all of them.
    ///
    /// The limits are checked first, with the pixels counted over the
    /// frames that will be decoded: the first `maximumFrames` (all when
    /// `nil`). ``ImageDecodingOptions/frameIndex`` is ignored. A still
    /// image is one frame.
    ///
    /// - Throws: ``ImageDecodingError``, as ``decode(_:options:)``; what
    ///   `body` throws, unchanged.
    public func decodeFrames(_ data: Data, options: ImageDecodingOptions, maximumFrames: Int? = nil,
                             _ body: (Image) throws -> Bool) throws {
        let opened = try open(data, options: options)
        var limits = options
        let last = max(0, min(opened.frameCount, maximumFrames ?? opened.frameCount) - 1)
        limits.frameIndex = opened.frameCount > 1 ? last : nil
        try check(opened, options: limits)
        limits.frameIndex = nil
        guard opened.frameCount > 1 else {
            _ = try body(decode(data, options: options.with(frameIndex: nil)))
            return
        }
        guard let frames = opened.state.frames else {
            // A table without a frame step: every frame at once.
            try Self.handOver(decode(data, options: options.with(frameIndex: nil)), maximumFrames: last + 1, body)
            return
        }
        // Errors of `body` pass through; the table's own become couldNotProduceImage.
        struct Stopped: Error { let error: any Error }
        do {
            try frames(last, limits) { frame in
                do {
                    return try body(finished(frame, opened: opened, options: limits))
                } catch {
                    throw Stopped(error: error)
                }
            }
        } catch let stopped as Stopped {
            throw stopped.error
        } catch let error as ImageDecodingError where error.code == .tooComplex {
            throw error
        } catch {
            throw ImageDecodingError(.couldNotProduceImage, format: format, message: "the image could not be produced: \(error)", underlying: error)
        }
    }

    /// The table's image fitted to the thumbnail and colour-managed, as the
    /// type's summary says.
    private func finished(_ image: Image, opened: OpenedImage<ImageStep>, options: ImageDecodingOptions) -> Image {
        var managed = colorManaged(image, opened: opened, options: options)
        managed.metadata = ImageMetadata.read(exif: opened.exif, colorProfile: opened.colorProfile)
        return managed
    }

    private func colorManaged(_ image: Image, opened: OpenedImage<ImageStep>, options: ImageDecodingOptions) -> Image {
        let fitted = options.thumbnail.map { fit(image, to: $0, opened: opened) } ?? image
        // A table that converted colour while decoding tags its image with
        // the profile its pixels are now in; that one wins over the file's.
        guard let profile = image.colorProfile ?? opened.colorProfile else { return fitted }
        if options.colorManagement == .convertToSRGB, let colorConversion {
            // A profile that cannot be used is ignored, as browsers do.
            guard var converted = try? colorConversion.convertToSRGB(fitted, profile) else { return fitted }
            converted.isPartial = fitted.isPartial
            return converted
        }
        var kept = fitted
        kept.colorProfile = profile
        return kept
    }

    /// Fits the table's image to the thumbnail, as the type's summary says.
    private func fit(_ image: Image, to thumbnail: Thumbnail, opened: OpenedImage<ImageStep>) -> Image {
        // The geometry comes from the header's size, not from the table's
        // (possibly DCT-scaled, rounded) output, so every path gives the
        // same size. The table may have turned the image upright.
        let isTurned = (image.width > image.height) != (opened.width > opened.height) && image.width != image.height
        let upright = isTurned ? (width: opened.height, height: opened.width) : (width: opened.width, height: opened.height)
        return image.resized(to: thumbnail.geometry(width: upright.width, height: upright.height), filter: thumbnail.filter,
                             linearLight: thumbnail.linearLight)
    }

    /// Reads the header only: format, size, frame count, colour profile and
    /// orientation, no pixels.
    ///
    /// - Throws: ``ImageDecodingError/Code/couldNotOpen``;
    ///   ``ImageDecodingError/Code/tooComplex`` for a file a decode with
    ///   `options` would refuse from its structure (too many progressive
    ///   scans or grid tiles), which reading its header already shows.
    public func info(for data: Data, options: ImageDecodingOptions = ImageDecodingOptions()) throws -> ImageInfo {
        let opened = try open(data, options: options)
        try checkNotEmpty(opened)
        try checkStructure(opened, options: options)
        var info = ImageInfo(format: format, width: opened.width, height: opened.height, frameCount: opened.frameCount,
                             colorProfile: opened.colorProfile)
        info.orientation = opened.orientation
        info.metadata = ImageMetadata.read(exif: opened.exif, colorProfile: opened.colorProfile)
        return info
    }

    private func open(_ data: Data, options: ImageDecodingOptions) throws -> OpenedImage<ImageStep> {
        do {
            return try openTable(data, options)
        } catch let error as ImageDecodingError where error.code == .tooComplex {
            throw error   // a limit a table checks before its library parses: the limit's own error
        } catch {
            throw ImageDecodingError(.couldNotOpen, format: format, message: "the data could not be opened: \(error)", underlying: error)
        }
    }
}
