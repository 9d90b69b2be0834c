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
/// ``encoder(for:quality:)`` is the one mapping from a format to its
/// encoder, with one set of default qualities (``defaultQuality(for:)``):
/// the `imago` tool and the image server both write through it.
public enum ImageEncoders {
    /// A PNG encoder, compressing as `compression` says (speed against
    /// size). An image's colour profile is always embedded;
    /// `embedsSRGBProfile` also marks images without one as sRGB.
    public static func png(compression: PNGEncoder.Compression = .default, embedsSRGBProfile: Bool = false) -> PNGEncoder {
        PNGEncoder(compression: compression, embedsSRGBProfile: embedsSRGBProfile)
    }

    /// A JPEG encoder. An image's colour profile is always embedded;
    /// `embedsSRGBProfile` also tags images without one as sRGB.
    public static func jpeg(quality: Int = JPEGEncoder.defaultQuality, progressive: Bool = false,
                            embedsSRGBProfile: Bool = false) -> JPEGEncoder {
        JPEGEncoder(quality: quality, progressive: progressive, embedsSRGBProfile: embedsSRGBProfile)
    }

    /// A WebP encoder, lossy at `quality` or lossless. An image's colour
    /// profile is always embedded; `embedsSRGBProfile` also tags images
    /// without one as sRGB.
    public static func webp(quality: Float = Float(WebPEncoder.defaultQuality), lossless: Bool = false,
                            embedsSRGBProfile: Bool = false) -> WebPEncoder {
        WebPEncoder(quality: quality, lossless: lossless, embedsSRGBProfile: embedsSRGBProfile)
    }

    /// An AVIF encoder (libheif over libaom), lossy at `quality` or
    /// lossless, at libaom's `speed` (0 slowest to 9 fastest). An image's
    /// colour profile is always embedded.
    public static func avif(quality: Int = AVIFEncoder.defaultQuality, lossless: Bool = false, speed: Int = 6) -> AVIFEncoder {
        AVIFEncoder(quality: quality, lossless: lossless, speed: speed)
    }

    /// A JPEG XL encoder (libjxl): `quality` maps to a Butteraugli distance
    /// as `cjxl` maps it; 100 or `lossless` keeps every pixel.
    public static func jxl(quality: Int = JXLEncoder.defaultQuality, lossless: Bool = false, effort: Int = 4) -> JXLEncoder {
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
    /// `nil`; the lossless formats ignore the quality. Other settings are
    /// the encoders' defaults (TIFF with deflate). Every format has one
    /// (see ``Imago/ImageFormat/isWritable``); an ICO encoder refuses
    /// images over 256x256.
    ///
    /// ```swift
    /// let format = ImageFormat.defaultOutputFormat(forSource: response.format, hasAlpha: image.pixelFormat.hasAlpha)
    /// let data = try ImageEncoders.encoder(for: format)!.encode(image)
    /// ```
    public static func encoder(for format: ImageFormat, quality: Int? = nil) -> (any ImageEncoding)? {
        switch format {
        case .png: png()
        case .jpeg: jpeg(quality: quality ?? JPEGEncoder.defaultQuality)
        case .webp: webp(quality: Float(quality ?? WebPEncoder.defaultQuality))
        case .avif: avif(quality: quality ?? AVIFEncoder.defaultQuality)
        case .gif: GIFEncoder()
        case .jxl: jxl(quality: quality ?? JXLEncoder.defaultQuality)
        case .heic: heic(quality: quality ?? HEICEncoder.defaultQuality)
        case .bmp: bmp()
        case .ico: ico()
        case .tiff: tiff()
        }
    }

    /// The animation encoder for `format`: APNG for PNG, animated WebP at
    /// `quality` (or ``defaultQuality(for:)``), GIF. `nil` for the formats
    /// Imago writes as stills only (JPEG, AVIF, JPEG XL, HEIC, BMP, ICO,
    /// TIFF).
    ///
    /// ```swift
    /// if image.isAnimated, let encoder = ImageEncoders.animationEncoder(for: .webp) {
    ///     let data = try encoder.encode(image)   // every frame, with its duration
    /// }
    /// ```
    public static func animationEncoder(for format: ImageFormat, quality: Int? = nil) -> (any AnimationEncoding)? {
        switch format {
        case .png: APNGEncoder()
        case .webp: WebPAnimationEncoder(quality: Float(quality ?? WebPEncoder.defaultQuality))
        case .gif: GIFAnimationEncoder()
        case .jpeg, .avif, .jxl, .heic, .bmp, .ico, .tiff: nil
        }
    }

    /// `image` written as `decision` says: every frame with the animation
    /// encoder when ``Imago/OutputDecision/isAnimated``, else the first
    /// frame with the still encoder, at the decision's quality, with the
    /// image's EXIF as ``Imago/OutputDecision/metadata`` keeps it (JPEG,
    /// PNG, WebP, AVIF and HEIC; none by default).
    ///
    /// ```swift
    /// let decision = OutputPolicy().decision(forSource: .gif, hasAlpha: image.pixelFormat.hasAlpha, isAnimated: image.isAnimated)
    /// let data = try ImageEncoders.encode(image, as: decision)   // an animated GIF stays one
    /// ```
    ///
    /// - Throws: ``ImageEncodingError`` when the encoder fails (an icon
    ///   over 256x256 is `unsupportedImage`).
    public static func encode(_ image: Image, as decision: OutputDecision) throws -> Data {
        let exif = image.metadata?.exif(keeping: decision.metadata)
        if decision.isAnimated, image.isAnimated, let encoder = animationEncoder(for: decision.format, quality: decision.quality) {
            let encoded = try encoder.encode(image)
            return exif.map { ExifMetadata.inserting($0, into: encoded, format: decision.format) } ?? encoded
        }
        if decision.format == .avif, let exif {
            return try avif(quality: decision.quality ?? AVIFEncoder.defaultQuality).encode(image.firstFrame, exif: exif)
        }
        if decision.format == .heic, let exif {
            return try heic(quality: decision.quality ?? HEICEncoder.defaultQuality).encode(image.firstFrame, exif: exif)
        }
        guard let encoder = encoder(for: decision.format, quality: decision.quality) else {
            throw ImageEncodingError(.unsupportedFormat, format: decision.format, message: "Imago does not write \(decision.format)")
        }
        let encoded = try encoder.encode(image.firstFrame)
        return exif.map { ExifMetadata.inserting($0, into: encoded, format: decision.format) } ?? encoded
    }
}
