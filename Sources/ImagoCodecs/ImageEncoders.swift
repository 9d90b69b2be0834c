import Imago

/// The encoders of `ImagoCodecs`.
///
/// ```swift
/// let jpeg = try ImageEncoders.jpeg(quality: 80).encode(image)
/// let png = try ImageEncoders.png().encode(image)
/// let webp = try ImageEncoders.webp(lossless: true).encode(image)
/// ```
public enum ImageEncoders {
    /// A PNG encoder.
    public static func png(compressionLevel: Int = 6) -> PNGEncoder {
        PNGEncoder(compressionLevel: compressionLevel)
    }

    /// A JPEG encoder.
    public static func jpeg(quality: Int = 85, progressive: Bool = false) -> JPEGEncoder {
        JPEGEncoder(quality: quality, progressive: progressive)
    }

    /// A WebP encoder, lossy at `quality` or lossless.
    public static func webp(quality: Float = 80, lossless: Bool = false) -> WebPEncoder {
        WebPEncoder(quality: quality, lossless: lossless)
    }

    /// The encoder for `format`, with default settings; `nil` for formats
    /// Imago does not write (GIF).
    public static func encoder(for format: ImageFormat) -> (any ImageEncoding)? {
        switch format {
        case .png: png()
        case .jpeg: jpeg()
        case .webp: webp()
        default: nil
        }
    }
}
