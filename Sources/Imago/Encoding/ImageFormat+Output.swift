/// Which format an image is written in when nobody asked for one: the one
/// answer the `imago fetch` command and the image server both give.
extension ImageFormat {
    /// The formats Imago's encoders write (`ImagoCodecs`' `ImageEncoders`):
    /// every format it reads.
    public static let writableFormats: [ImageFormat] = [.jpeg, .png, .gif, .webp, .avif, .jxl, .heic, .bmp, .ico, .tiff]

    /// Whether Imago has an encoder for the format: every one it reads.
    public var isWritable: Bool { Self.writableFormats.contains(self) }

    /// Whether the format stores an alpha channel: all but JPEG.
    public var storesAlpha: Bool { self != .jpeg }

    /// The format to write an image decoded from a `source` file in, when
    /// no format was asked for.
    ///
    /// - JPEG, PNG, WebP and AVIF keep their format: the source's owner
    ///   chose it, and Imago writes it.
    /// - GIF becomes PNG: lossless, so flat colours, sharp edges and
    ///   transparency stay as they were, with no 256-colour limit (an
    ///   animation keeps its first frame).
    /// - HEIC, JPEG XL, BMP, ICO, TIFF and an unknown source become JPEG,
    ///   the format every reader has for photographs (a lossy source is a
    ///   photograph far more often than not; AVIF and HEIC would take much
    ///   longer to write), as imgproxy does with the formats it does not
    ///   prefer.
    /// - Whatever the above says, an image with an alpha channel
    ///   (`hasAlpha`, usually `image.pixelFormat.hasAlpha`) goes to PNG
    ///   rather than to a format that cannot store alpha (JPEG).
    ///
    /// ```swift
    /// ImageFormat.defaultOutputFormat(forSource: .heic, hasAlpha: false)   // .jpeg
    /// ImageFormat.defaultOutputFormat(forSource: .heic, hasAlpha: true)    // .png
    /// ImageFormat.defaultOutputFormat(forSource: .webp, hasAlpha: true)    // .webp
    /// ```
    public static func defaultOutputFormat(forSource source: ImageFormat?, hasAlpha: Bool) -> ImageFormat {
        let format: ImageFormat = switch source {
        case .jpeg?: .jpeg
        case .png?, .gif?: .png
        case .webp?: .webp
        case .avif?: .avif
        case .heic?, .jxl?, .bmp?, .ico?, .tiff?, nil: .jpeg
        }
        return hasAlpha && !format.storesAlpha ? .png : format
    }
}
