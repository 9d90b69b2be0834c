import Foundation
import Imago

/// The encoders of `ImagoCodecs`.
///
/// ```swift
/// let jpeg = try ImageEncoders.jpeg(quality: 80).encode(image)
/// let png = try ImageEncoders.png().encode(image)
/// let webp = try ImageEncoders.webp(lossless: true).encode(image)
/// let avif = try ImageEncoders.avif(quality: 60).encode(image)
/// ```
///
/// ``encoder(for:quality:settings:)`` is the one mapping from a format to
/// its encoder, with one set of default qualities (``defaultQuality(for:)``)
/// and the other settings of every format in one ``EncoderSettings``: the
/// `imago` tool and the image server both write through it.
public enum ImageEncoders {
    /// A PNG encoder, compressing as `compression` says (speed against
    /// size). An image's colour profile is always embedded;
    /// `embedsSRGBProfile` also marks images without one as sRGB.
    /// `interlaced` writes Adam7 passes; `paletteColors` (2 to 256,
    /// clamped) quantizes to an indexed PNG of at most that many colours.
    public static func png(compression: PNGEncoder.Compression = .default, embedsSRGBProfile: Bool = false,
                           interlaced: Bool = false, paletteColors: Int? = nil) -> PNGEncoder {
        PNGEncoder(compression: compression, embedsSRGBProfile: embedsSRGBProfile, interlaced: interlaced, paletteColors: paletteColors)
    }

    /// A JPEG encoder. An image's colour profile is always embedded;
    /// `embedsSRGBProfile` also tags images without one as sRGB.
    public static func jpeg(quality: Int = JPEGEncoder.defaultQuality, progressive: Bool = false,
                            embedsSRGBProfile: Bool = false) -> JPEGEncoder {
        JPEGEncoder(quality: quality, progressive: progressive, embedsSRGBProfile: embedsSRGBProfile)
    }

    /// A WebP encoder, lossy at `quality` or lossless. An image's colour
    /// profile is always embedded; `embedsSRGBProfile` also tags images
    /// without one as sRGB. `preset` and `effort` (libwebp's method, 0 to
    /// 6, clamped) are libwebp's.
    public static func webp(quality: Float = Float(WebPEncoder.defaultQuality), lossless: Bool = false,
                            embedsSRGBProfile: Bool = false, preset: WebPEncoder.Preset = .default,
                            effort: Int = WebPEncoder.defaultEffort) -> WebPEncoder {
        WebPEncoder(quality: quality, lossless: lossless, embedsSRGBProfile: embedsSRGBProfile, preset: preset, effort: effort)
    }

    /// An AVIF encoder (libheif over libaom), lossy at `quality` or
    /// lossless, at libaom's `speed` (0 slowest to 9 fastest). An image's
    /// colour profile is always embedded.
    public static func avif(quality: Int = AVIFEncoder.defaultQuality, lossless: Bool = false,
                            speed: Int = AVIFEncoder.defaultSpeed) -> AVIFEncoder {
        AVIFEncoder(quality: quality, lossless: lossless, speed: speed)
    }

    /// A JPEG XL encoder (libjxl): `quality` maps to a Butteraugli distance
    /// as `cjxl` maps it; 100 or `lossless` keeps every pixel.
    public static func jxl(quality: Int = JXLEncoder.defaultQuality, lossless: Bool = false,
                           effort: Int = JXLEncoder.defaultEffort) -> JXLEncoder {
        JXLEncoder(quality: quality, lossless: lossless, effort: effort)
    }

    /// A HEIC encoder (libheif over x265) at `quality`. An image's colour
    /// profile is always embedded.
    public static func heic(quality: Int = HEICEncoder.defaultQuality) -> HEICEncoder {
        HEICEncoder(quality: quality)
    }

    /// A BMP encoder: 24-bit, or 32-bit when the image has alpha.
    public static func bmp() -> BMPEncoder { BMPEncoder() }

    /// An ICO encoder: one PNG image of at most 256x256 pixels.
    public static func ico() -> ICOEncoder { ICOEncoder() }

    /// A TIFF encoder (libtiff), its strips compressed as `compression` says.
    public static func tiff(compression: TIFFEncoder.Compression = .deflate) -> TIFFEncoder {
        TIFFEncoder(compression: compression)
    }

    /// The quality a lossy format is written at when none is given: JPEG
    /// 85, WebP 80, AVIF 60, JPEG XL 80, HEIC 60 (each encoder's
    /// `defaultQuality`); `nil` for the lossless formats (PNG, GIF, BMP,
    /// ICO, TIFF), which have none.
    public static func defaultQuality(for format: ImageFormat) -> Int? {
        switch format {
        case .jpeg: JPEGEncoder.defaultQuality
        case .webp: WebPEncoder.defaultQuality
        case .avif: AVIFEncoder.defaultQuality
        case .jxl: JXLEncoder.defaultQuality
        case .heic: HEICEncoder.defaultQuality
        case .png, .gif, .bmp, .ico, .tiff: nil
        }
    }

    /// The encoder for `format`: at `quality` (1 to 100) for JPEG, WebP,
    /// AVIF, JPEG XL and HEIC, or at ``defaultQuality(for:)`` when it is
    /// `nil`; the lossless formats ignore the quality. `settings` gives
    /// JPEG's progressive scans, PNG's interlacing and palette, WebP's
    /// preset and effort, AVIF's speed and JPEG XL's effort; GIF, HEIC,
    /// BMP, ICO and TIFF (with deflate) have none of them. Every format has
    /// an encoder (see ``Imago/ImageFormat/isWritable``); an ICO encoder
    /// refuses images over 256x256.
    ///
    /// ```swift
    /// let format = ImageFormat.defaultOutputFormat(forSource: response.format, hasAlpha: image.pixelFormat.hasAlpha)
    /// let data = try ImageEncoders.encoder(for: format)!.encode(image)
    /// ```
    public static func encoder(for format: ImageFormat, quality: Int? = nil,
                               settings: EncoderSettings = EncoderSettings()) -> (any ImageEncoding)? {
        switch format {
        case .png: png(interlaced: settings.pngInterlaced, paletteColors: settings.pngPaletteColors)
        case .jpeg: jpeg(quality: quality ?? JPEGEncoder.defaultQuality, progressive: settings.jpegProgressive)
        case .webp: webp(quality: Float(quality ?? WebPEncoder.defaultQuality), preset: settings.webpPreset, effort: settings.webpEffort)
        case .avif: avif(quality: quality ?? AVIFEncoder.defaultQuality, speed: settings.avifSpeed)
        case .gif: GIFEncoder()
        case .jxl: jxl(quality: quality ?? JXLEncoder.defaultQuality, effort: settings.jxlEffort)
        case .heic: heic(quality: quality ?? HEICEncoder.defaultQuality)
        case .bmp: bmp()
        case .ico: ico()
        case .tiff: tiff()
        }
    }

    /// The animation encoder for `format`: APNG for PNG, animated WebP at
    /// `quality` (or ``defaultQuality(for:)``), GIF. `nil` for the formats
    /// Imago writes as stills only (JPEG, AVIF, JPEG XL, HEIC, BMP, ICO,
    /// TIFF). Of `settings`, only WebP's preset and effort apply: APNG
    /// frames share one header and are neither interlaced nor quantized,
    /// and GIF has no setting.
    ///
    /// ```swift
    /// if image.isAnimated, let encoder = ImageEncoders.animationEncoder(for: .webp) {
    ///     let data = try encoder.encode(image)   // every frame, with its duration
    /// }
    /// ```
    public static func animationEncoder(for format: ImageFormat, quality: Int? = nil,
                                        settings: EncoderSettings = EncoderSettings()) -> (any AnimationEncoding)? {
        switch format {
        case .png: APNGEncoder()
        case .webp: WebPAnimationEncoder(quality: Float(quality ?? WebPEncoder.defaultQuality), preset: settings.webpPreset,
                                         effort: settings.webpEffort)
        case .gif: GIFAnimationEncoder()
        case .jpeg, .avif, .jxl, .heic, .bmp, .ico, .tiff: nil
        }
    }

    /// `image` written as `decision` says: every frame with the animation
    /// encoder when ``Imago/OutputDecision/isAnimated``, else the first
    /// frame with the still encoder, at the decision's quality, with the
    /// image's EXIF as ``Imago/OutputDecision/metadata`` keeps it (JPEG,
    /// PNG, WebP, AVIF and HEIC; none by default), and the other encoder
    /// settings as `settings` says.
    ///
    /// ```swift
    /// let decision = OutputPolicy().decision(forSource: .gif, hasAlpha: image.pixelFormat.hasAlpha, isAnimated: image.isAnimated)
    /// let data = try ImageEncoders.encode(image, as: decision)   // an animated GIF stays one
    /// ```
    ///
    /// - Throws: ``ImageEncodingError`` when the encoder fails (an icon
    ///   over 256x256 is `unsupportedImage`).
    public static func encode(_ image: Image, as decision: OutputDecision, settings: EncoderSettings = EncoderSettings()) throws -> Data {
        let exif = image.metadata?.exif(keeping: decision.metadata)
        if decision.isAnimated, image.isAnimated,
           let encoder = animationEncoder(for: decision.format, quality: decision.quality, settings: settings) {
            let encoded = try encoder.encode(image)
            return exif.map { ExifMetadata.inserting($0, into: encoded, format: decision.format) } ?? encoded
        }
        if decision.format == .avif, let exif {
            return try avif(quality: decision.quality ?? AVIFEncoder.defaultQuality, speed: settings.avifSpeed)
                .encode(image.firstFrame, exif: exif)
        }
        if decision.format == .heic, let exif {
            return try heic(quality: decision.quality ?? HEICEncoder.defaultQuality).encode(image.firstFrame, exif: exif)
        }
        guard let encoder = encoder(for: decision.format, quality: decision.quality, settings: settings) else {
            throw ImageEncodingError(.unsupportedFormat, format: decision.format, message: "Imago does not write \(decision.format)")
        }
        let encoded = try encoder.encode(image.firstFrame)
        return exif.map { ExifMetadata.inserting($0, into: encoded, format: decision.format) } ?? encoded
    }
}
