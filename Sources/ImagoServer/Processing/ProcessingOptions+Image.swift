#if Server
import Foundation
import Imago
import ImagoCodecs

extension ProcessingOptions {
    /// The image the options ask for, made by the render's declared steps
    /// (``RenderStep/all``) in imgproxy's order: trimmed, turned and
    /// mirrored, cut by ``crop``, resampled once and cut to the box as
    /// ``ResizePlan`` says (a `smart` crop keeps the most detailed part),
    /// blurred, sharpened and pixelated, extended, padded and watermarked.
    /// Animated sources give their first frame. Transparent pixels stay
    /// transparent unless ``background`` is set: ``flattened(_:for:)``
    /// then, or for a format without alpha, composites them.
    ///
    /// - Parameters:
    ///   - watermark: The server's watermark image, drawn as ``watermark``
    ///     says, last (over the padding too); `nil` (no watermark configured)
    ///     draws nothing, as imgproxy does.
    ///   - watermarkOpacity: What ``Watermark/opacity`` is multiplied by.
    ///
    /// Under a ``WorkDeadline`` that passes, the steps stop early and the
    /// result is incomplete: run it inside ``WorkDeadline/run(_:)``, which
    /// then throws instead of returning it.
    public func apply(to source: Image, maximumSide: Int = ImageServerPath.maximumOutputSide,
                      watermark: Image? = nil, watermarkOpacity: Double = 1) -> Image {
        let image = source.firstFrame
        var state = RenderState(
            image: image, options: self, maximumSide: maximumSide, watermark: watermark, watermarkOpacity: watermarkOpacity,
            plan: ResizePlan(sourceWidth: image.width, sourceHeight: image.height, options: self, maximumSide: maximumSide)
        )
        for step in RenderStep.all {
            // Past the deadline, the steps left would be wasted: the result is dropped.
            if WorkDeadline.currentHasPassed { break }
            step.run(&state)
        }
        return state.image
    }

    /// The most pixels an image is resampled to before the cut to the box
    /// (the source limit's 50 megapixels); beyond it only the window kept
    /// is resampled.
    static let intermediatePixelLimit = 50_000_000

    /// `image` with its transparent pixels composited over ``background``
    /// when the path sets one, or over white when `format` has no alpha
    /// (JPEG); otherwise `image` itself.
    public func flattened(_ image: Image, for format: OutputFormat) -> Image {
        guard image.pixelFormat.hasAlpha else { return image }
        if let background { return image.flattened(onto: background) }
        return format.hasAlpha ? image : image.flattened(onto: .white)
    }

    /// The quality to write `format` at: this path's quality, else its
    /// ``formatQuality`` for the format, else `policy`'s
    /// (``Imago/OutputPolicy/quality(for:requested:)``); `nil` for the
    /// encoder's default (JPEG 85, WebP 80, AVIF 60).
    public func quality(for format: OutputFormat, policy: OutputPolicy = OutputPolicy()) -> Int? {
        policy.quality(for: format.imageFormat, requested: quality ?? formatQuality[format])
    }

    /// The encoder for `format` at ``quality(for:policy:)``, with the
    /// server's `settings` (progressive JPEG, interlaced or quantized PNG,
    /// WebP's preset and effort, AVIF's speed, JPEG XL's effort).
    public func encoder(for format: OutputFormat, policy: OutputPolicy = OutputPolicy(),
                        settings: EncoderSettings = EncoderSettings()) -> any ImageEncoding {
        encoder(for: format, quality: quality(for: format, policy: policy), settings: settings)
    }

    private func encoder(for format: OutputFormat, quality: Int?, settings: EncoderSettings) -> any ImageEncoding {
        // Every output format is one Imago writes.
        ImageEncoders.encoder(for: format.imageFormat, quality: quality, settings: settings)!
    }

    /// `image` encoded as `format` by ``encoder(for:policy:)``; with
    /// ``maximumBytes`` and a lossy format (JPEG, WebP, AVIF), encoded again
    /// at lower qualities until it fits, as imgproxy does: the quality is
    /// cut to a quarter, a half or three quarters as the result is more
    /// than 3, more than 1.5 or up to 1.5 times too large, and the last try
    /// is at 10 or below, which is returned even when it does not fit.
    public func encoded(_ image: Image, as format: OutputFormat, policy: OutputPolicy = OutputPolicy(),
                        settings: EncoderSettings = EncoderSettings()) throws -> Data {
        let start = quality(for: format, policy: policy)
        let data = try encoder(for: format, quality: start, settings: settings).encode(image)
        guard let maximumBytes, maximumBytes > 0, data.count > maximumBytes, format != .png, format != .gif,
              var current = start ?? ImageEncoders.defaultQuality(for: format.imageFormat) else { return data }
        var best = data
        while best.count > maximumBytes && current > 10 {
            let excess = Double(best.count) / Double(maximumBytes)
            let factor = excess > 3 ? 0.25 : excess > 1.5 ? 0.5 : 0.75
            current = max(1, min(current - 1, ResizePlan.scaled(current, factor)))
            best = try encoder(for: format, quality: current, settings: settings).encode(image)
        }
        return best
    }
}

extension ProcessingOptions.OutputFormat {
    /// The output format for `format` (every format Imago reads, it writes).
    public init?(_ format: ImageFormat) {
        switch format {
        case .jpeg: self = .jpeg
        case .png: self = .png
        case .webp: self = .webp
        case .avif: self = .avif
        case .gif: self = .gif
        case .jxl: self = .jxl
        case .heic: self = .heic
        case .bmp: self = .bmp
        case .ico: self = .ico
        case .tiff: self = .tiff
        }
    }

    /// Whether the format keeps transparency.
    public var hasAlpha: Bool { self != .jpeg }

    /// The library's name for the format.
    public var imageFormat: ImageFormat {
        switch self {
        case .jpeg: .jpeg
        case .png: .png
        case .webp: .webp
        case .avif: .avif
        case .gif: .gif
        case .jxl: .jxl
        case .heic: .heic
        case .tiff: .tiff
        case .bmp: .bmp
        case .ico: .ico
        }
    }
}

extension ProcessingOptions.Watermark {
    /// `image` with `mark` drawn over it as imgproxy draws watermarks:
    /// fitted into ``scale`` times the image's size when that is set (never
    /// larger than the image), then placed at its gravity with offsets
    /// (hanging over the edges by all but a pixel at most), or tiled from
    /// the centre with the offsets as the space between tiles; composited
    /// *over* in sRGB with its alpha times `opacity`, by
    /// ``Imago/Image/composited(with:at:opacity:linearLight:)``.
    ///
    /// - Parameter dpr: What pixel offsets are multiplied by.
    func draw(_ mark: Image, over image: Image, opacity: Double, dpr: Double) -> Image {
        guard opacity > 0 else { return image }
        var stamp = mark
        if scale > 0 {
            // Fitted into the box, enlarged if need be; a box beyond the
            // image (a scale above 1) is the image, so nothing larger than
            // the result is ever made.
            let boxWidth = max(1, min(image.width, ResizePlan.scaledToEven(Double(image.width), scale)))
            let boxHeight = max(1, min(image.height, ResizePlan.scaledToEven(Double(image.height), scale)))
            let factor = min(Double(boxWidth) / Double(stamp.width), Double(boxHeight) / Double(stamp.height))
            let fitted = (max(1, Int((Double(stamp.width) * factor).rounded())), max(1, Int((Double(stamp.height) * factor).rounded())))
            if fitted != (stamp.width, stamp.height) { stamp = stamp.converted(to: .rgba8).resized(width: fitted.0, height: fitted.1) }
        }
        let position: OverlayPosition
        if tiles {
            position = .tiled(spacingX: max(0, ResizePlan.pixels(offset.x, outer: image.width, dpr: dpr)),
                              spacingY: max(0, ResizePlan.pixels(offset.y, outer: image.height, dpr: dpr)))
        } else {
            let origin = ResizePlan.position(
                outerWidth: image.width, outerHeight: image.height, innerWidth: stamp.width, innerHeight: stamp.height,
                gravity: gravity, offset: offset, dpr: dpr, allowsOverflow: true
            )
            position = .point(x: max(-stamp.width + 1, min(origin.x, image.width - 1)),
                              y: max(-stamp.height + 1, min(origin.y, image.height - 1)))
        }
        return image.composited(with: stamp, at: position, opacity: opacity)
    }
}
#endif
