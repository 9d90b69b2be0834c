import Imago

/// Every encoder setting that is not a quality, for every format: what
/// imgproxy reads as server-wide compression settings, in one value.
/// ``ImageEncoders/encoder(for:quality:settings:)`` and
/// ``ImageEncoders/animationEncoder(for:quality:settings:)`` build their
/// encoders with it.
///
/// Its defaults are the encoders' own, so `EncoderSettings()` writes the
/// same bytes as the encoders made without it. A number outside its range
/// (each property names it) is clamped to the range, when the value is
/// made and whenever it is set: no value makes an encoder fail. imgproxy
/// refuses such numbers at start-up; a server that wants to as well can
/// compare them with the ranges before making the settings.
///
/// ```swift
/// var settings = EncoderSettings()
/// settings.jpegProgressive = true         // IMGPROXY_JPEG_PROGRESSIVE=true
/// settings.pngPaletteColors = 128         // IMGPROXY_PNG_QUANTIZE=true, IMGPROXY_PNG_QUANTIZATION_COLORS=128
/// let encoder = ImageEncoders.encoder(for: .jpeg, quality: 80, settings: settings)!
/// ```
public struct EncoderSettings: Sendable, Hashable {
    /// Whether JPEGs are progressive (``JPEGEncoder/progressive``).
    /// Default: `false`. imgproxy's `IMGPROXY_JPEG_PROGRESSIVE`.
    public var jpegProgressive: Bool

    /// Whether PNGs (stills, not APNG) are interlaced, Adam7
    /// (``PNGEncoder/interlaced``). Default: `false`. imgproxy's
    /// `IMGPROXY_PNG_INTERLACED`.
    public var pngInterlaced: Bool

    /// At most how many colours a PNG (still, not APNG) has: `nil` for no
    /// quantization (the default), else an indexed PNG of at most that many
    /// colours (``PNGEncoder/paletteColors``), clamped to
    /// ``PNGEncoder/paletteColorsRange`` (2 to 256). imgproxy's
    /// `IMGPROXY_PNG_QUANTIZE` (`nil` when false) with
    /// `IMGPROXY_PNG_QUANTIZATION_COLORS` (the number when true).
    public var pngPaletteColors: Int? {
        didSet { pngPaletteColors = pngPaletteColors.map(PNGEncoder.paletteColorsRange.clamping) }
    }

    /// libwebp's preset for lossy WebP, still and animated
    /// (``WebPEncoder/preset``). Default: ``WebPEncoder/Preset/default``.
    /// imgproxy's `IMGPROXY_WEBP_PRESET`.
    public var webpPreset: WebPEncoder.Preset

    /// libwebp's method for WebP, still and animated
    /// (``WebPEncoder/effort``), clamped to ``WebPEncoder/effortRange`` (0
    /// to 6). Default: ``WebPEncoder/defaultEffort`` (4). imgproxy's
    /// `IMGPROXY_WEBP_EFFORT`.
    public var webpEffort: Int {
        didSet { webpEffort = WebPEncoder.effortRange.clamping(webpEffort) }
    }

    /// libaom's speed for AVIF (``AVIFEncoder/speed``), clamped to
    /// ``AVIFEncoder/speedRange`` (0 to 9). Default:
    /// ``AVIFEncoder/defaultSpeed`` (6). imgproxy's `IMGPROXY_AVIF_SPEED`.
    public var avifSpeed: Int {
        didSet { avifSpeed = AVIFEncoder.speedRange.clamping(avifSpeed) }
    }

    /// libjxl's effort for JPEG XL (``JXLEncoder/effort``), clamped to
    /// ``JXLEncoder/effortRange`` (1 to 9). Default:
    /// ``JXLEncoder/defaultEffort`` (4). imgproxy's `IMGPROXY_JXL_EFFORT`.
    public var jxlEffort: Int {
        didSet { jxlEffort = JXLEncoder.effortRange.clamping(jxlEffort) }
    }

    /// Creates settings; every argument left out is the encoder's default,
    /// and every number is clamped to its property's range.
    public init(jpegProgressive: Bool = false, pngInterlaced: Bool = false, pngPaletteColors: Int? = nil,
                webpPreset: WebPEncoder.Preset = .default, webpEffort: Int = WebPEncoder.defaultEffort,
                avifSpeed: Int = AVIFEncoder.defaultSpeed, jxlEffort: Int = JXLEncoder.defaultEffort) {
        self.jpegProgressive = jpegProgressive
        self.pngInterlaced = pngInterlaced
        self.pngPaletteColors = pngPaletteColors.map(PNGEncoder.paletteColorsRange.clamping)
        self.webpPreset = webpPreset
        self.webpEffort = WebPEncoder.effortRange.clamping(webpEffort)
        self.avifSpeed = AVIFEncoder.speedRange.clamping(avifSpeed)
        self.jxlEffort = JXLEncoder.effortRange.clamping(jxlEffort)
    }
}
