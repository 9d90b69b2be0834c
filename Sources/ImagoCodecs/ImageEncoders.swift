import Imago

/// The encoders of `ImagoCodecs`.
///
/// ```swift
/// let jpeg = try ImageEncoders.jpeg(quality: 80).encode(image)
/// let png = try ImageEncoders.png().encode(image)
/// let webp = try ImageEncoders.webp(lossless: true).encode(image)
/// let avif = try ImageEncoders.avif(quality: 60).encode(image)
/// ```
public enum ImageEncoders {
    /// A PNG encoder. An image's colour profile is always embedded;
    /// `embedsSRGBProfile` also marks images without one as sRGB.
    public static func png(compressionLevel: Int = 6, embedsSRGBProfile: Bool = false) -> PNGEncoder {
        PNGEncoder(compressionLevel: compressionLevel, embedsSRGBProfile: embedsSRGBProfile)
    }

    /// A JPEG encoder. An image's colour profile is always embedded;
    /// `embedsSRGBProfile` also tags images without one as sRGB.
    public static func jpeg(quality: Int = 85, progressive: Bool = false, embedsSRGBProfile: Bool = false) -> JPEGEncoder {
        JPEGEncoder(quality: quality, progressive: progressive, embedsSRGBProfile: embedsSRGBProfile)
    }

    /// A WebP encoder, lossy at `quality` or lossless. An image's colour
    /// profile is always embedded; `embedsSRGBProfile` also tags images
    /// without one as sRGB.
    public static func webp(quality: Float = 80, lossless: Bool = false, embedsSRGBProfile: Bool = false) -> WebPEncoder {
        WebPEncoder(quality: quality, lossless: lossless, embedsSRGBProfile: embedsSRGBProfile)
    }

    /// An AVIF encoder (libheif over libaom), lossy at `quality` or
    /// lossless, at libaom's `speed` (0 slowest to 9 fastest). An image's
    /// colour profile is always embedded.
    public static func avif(quality: Int = 60, lossless: Bool = false, speed: Int = 6) -> AVIFEncoder {
        AVIFEncoder(quality: quality, lossless: lossless, speed: speed)
    }

    /// The encoder for `format`, with default settings; `nil` for formats
    /// Imago does not write (GIF, HEIC, JPEG XL).
    public static func encoder(for format: ImageFormat) -> (any ImageEncoding)? {
        switch format {
        case .png: png()
        case .jpeg: jpeg()
        case .webp: webp()
        case .avif: avif()
        default: nil
        }
    }
}
