#if Server
/// What the server does to a source image: the options of an imgproxy-style
/// path (``ImageServerPath``), with imgproxy's defaults.
///
/// ```swift
/// var options = ProcessingOptions()
/// options.resizingType = .fill
/// options.width = 300
/// options.height = 200
/// options.gravity = .north
/// ```
public struct ProcessingOptions: Sendable, Hashable {
    /// How the image is fitted to the requested size.
    public enum ResizingType: String, Sendable, Hashable, CaseIterable {
        /// Keeps the aspect ratio; the result fits inside the size.
        case fit
        /// Keeps the aspect ratio; the result covers the size, and the rest is cropped at ``ProcessingOptions/gravity``.
        case fill
        /// Like ``fill``, but never makes the result larger than the source in either direction.
        case fillDown = "fill-down"
        /// Stretches to exactly the size, ignoring the aspect ratio.
        case force
        /// ``fill`` when the source and the size have the same orientation, else ``fit``.
        case auto
    }

    /// Where a crop keeps the image.
    public enum Gravity: String, Sendable, Hashable, CaseIterable {
        /// The centre.
        case center = "ce"
        /// The top edge.
        case north = "no"
        /// The bottom edge.
        case south = "so"
        /// The right edge.
        case east = "ea"
        /// The left edge.
        case west = "we"
        /// The top-right corner.
        case northEast = "noea"
        /// The top-left corner.
        case northWest = "nowe"
        /// The bottom-right corner.
        case southEast = "soea"
        /// The bottom-left corner.
        case southWest = "sowe"
        /// The most detailed region of the image.
        case smart = "sm"
    }

    /// The encoded formats the server produces.
    public enum OutputFormat: String, Sendable, Hashable, CaseIterable {
        /// JPEG (`jpg` and `jpeg` both name it).
        case jpeg
        /// PNG.
        case png
        /// WebP.
        case webp
        /// AVIF (libaom: much slower to encode than the others).
        case avif

        /// The format named by an extension or an `f:` option (`jpg`, `jpeg`, `png`, `webp`, `avif`, any case).
        public init?(name: String) {
            switch name.lowercased() {
            case "jpg", "jpeg": self = .jpeg
            case "png": self = .png
            case "webp": self = .webp
            case "avif": self = .avif
            default: return nil
            }
        }

        /// The `Content-Type` of the format.
        public var mimeType: String { "image/\(rawValue)" }
    }

    /// How the image is fitted to the size. Default: ``ResizingType/fit``.
    public var resizingType: ResizingType = .fit
    /// The width in pixels; 0 keeps the aspect ratio (or the source's width when the height is 0 too).
    public var width: Int = 0
    /// The height in pixels; 0 keeps the aspect ratio (or the source's height when the width is 0 too).
    public var height: Int = 0
    /// Whether the result may be larger than the source. Default: `false`.
    public var enlarge: Bool = false
    /// Where a crop keeps the image. Default: ``Gravity/center``.
    public var gravity: Gravity = .center
    /// The encoder's quality, 1 to 100; `nil` uses the server's default.
    public var quality: Int?
    /// The output format; `nil` lets the server choose (the path's extension,
    /// WebP for clients that accept it when automatic WebP is on, else the
    /// source's format).
    public var format: OutputFormat?
    /// The Gaussian blur's sigma; `nil` (or 0) does not blur.
    public var blur: Double?

    /// Options that leave the image as it is.
    public init() {}
}
#endif
