#if Server
import Imago
import ImagoSVG
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

    /// Where a crop keeps the image: one of the library's nine placements
    /// (``Imago/Gravity``), the most detailed region, or a focus point.
    /// Paths spell them with imgproxy's short names (``shortNames``), which
    /// the option table reads as aliases.
    public enum Gravity: Sendable, Hashable, CaseIterable {
        /// A placement at an edge, a corner or the centre.
        case compass(Imago.Gravity)
        /// The most detailed region of the image.
        case smart
        /// A focus point: ``ProcessingOptions/Offset/x`` and
        /// ``ProcessingOptions/Offset/y`` (0 to 1, fractions of the width and
        /// height) are kept as near the centre as the image allows.
        case focusPoint

        /// The centre, the default.
        public static let center = Gravity.compass(.center)

        /// imgproxy's short name for each gravity, as paths write them.
        public static let shortNames: [(name: String, gravity: Gravity)] = [
            ("ce", .compass(.center)), ("no", .compass(.north)), ("so", .compass(.south)),
            ("ea", .compass(.east)), ("we", .compass(.west)), ("noea", .compass(.northEast)),
            ("nowe", .compass(.northWest)), ("soea", .compass(.southEast)), ("sowe", .compass(.southWest)),
            ("sm", .smart), ("fp", .focusPoint),
        ]

        public static var allCases: [Gravity] { shortNames.map(\.gravity) }

        /// The gravity imgproxy's `name` stands for; `nil` for an unknown name.
        public init?(shortName name: String) {
            guard let found = Self.shortNames.first(where: { $0.name == name }) else { return nil }
            self = found.gravity
        }

        /// imgproxy's short name, as paths write it.
        public var shortName: String {
            Self.shortNames.first { $0.gravity == self }!.name
        }

        /// The library's gravity for the nine placements; `nil` for
        /// ``smart`` and ``focusPoint``.
        public var compass: Imago.Gravity? {
            if case .compass(let gravity) = self { gravity } else { nil }
        }
    }

    /// Where a gravity's part sits away from its edge: a value of 1 or more
    /// (or -1 or less) is pixels, one between -1 and 1 a fraction of the
    /// outer size. Positive values point inward from the named edge (from
    /// the centre: right and down). For ``Gravity/focusPoint`` it is the
    /// point itself, as fractions from 0 to 1.
    public struct Offset: Sendable, Hashable {
        /// Across.
        public var x: Double
        /// Down.
        public var y: Double

        /// No offset.
        public static let zero = Offset(x: 0, y: 0)

        /// Creates an offset.
        public init(x: Double, y: Double) {
            self.x = x
            self.y = y
        }
    }

    /// A part cut from the source before it is resized (`crop:W:H:GRAVITY`).
    public struct Crop: Sendable, Hashable {
        /// The width kept: pixels when 1 or more, a fraction of the source's
        /// width below 1, the whole width when 0.
        public var width: Double
        /// The height kept, as ``width``.
        public var height: Double
        /// Where the part sits; `nil` uses the path's ``ProcessingOptions/gravity``
        /// and ``ProcessingOptions/gravityOffset``.
        public var gravity: Gravity?
        /// The offset for ``gravity``.
        public var offset: Offset

        /// Creates a crop.
        public init(width: Double, height: Double, gravity: Gravity? = nil, offset: Offset = .zero) {
            self.width = width
            self.height = height
            self.gravity = gravity
            self.offset = offset
        }
    }

    /// Where an image sits on a larger canvas (`extend`, `extend_aspect_ratio`).
    public struct Placement: Sendable, Hashable {
        /// The edge, corner or centre (``Gravity/smart`` is not a placement).
        public var gravity: Gravity
        /// The offset from it.
        public var offset: Offset

        /// Centred.
        public static let center = Placement(gravity: .center, offset: .zero)

        /// Creates a placement.
        public init(gravity: Gravity, offset: Offset = .zero) {
            self.gravity = gravity
            self.offset = offset
        }
    }

    /// Space added around the result, in CSS order, in pixels before `dpr`.
    public struct Padding: Sendable, Hashable {
        /// Above.
        public var top: Int
        /// To the right.
        public var right: Int
        /// Below.
        public var bottom: Int
        /// To the left.
        public var left: Int

        /// No padding.
        public static let zero = Padding(top: 0, right: 0, bottom: 0, left: 0)

        /// Creates a padding.
        public init(top: Int, right: Int, bottom: Int, left: Int) {
            (self.top, self.right, self.bottom, self.left) = (top, right, bottom, left)
        }

        /// Whether any side is padded.
        public var isZero: Bool { top == 0 && right == 0 && bottom == 0 && left == 0 }
    }

    /// A border cut from the source before anything else (`trim`).
    public struct Trim: Sendable, Hashable {
        /// How far a channel may differ from the background and still count
        /// as background (libvips' scale: 0 to 255).
        public var threshold: Double
        /// The background's colour; `nil`: the top-left pixel's.
        public var color: ImageColor?
        /// Whether as much is cut from the right as from the left.
        public var equalHorizontal: Bool
        /// Whether as much is cut from the bottom as from the top.
        public var equalVertical: Bool

        /// Creates a trim.
        public init(threshold: Double, color: ImageColor? = nil, equalHorizontal: Bool = false, equalVertical: Bool = false) {
            self.threshold = threshold
            self.color = color
            self.equalHorizontal = equalHorizontal
            self.equalVertical = equalVertical
        }
    }

    /// A watermark over the result (`watermark`): the server's watermark
    /// image (``ImageServerConfiguration/watermark``), at a gravity or tiled.
    public struct Watermark: Sendable, Hashable {
        /// How opaque, from above 0 to 1; multiplied by the server's
        /// ``ImageServerConfiguration/watermarkOpacity``.
        public var opacity: Double
        /// Where it goes: one of the nine compass gravities (`ce`, `no`,
        /// ..., `sowe`); ignored when ``tiles`` is set.
        public var gravity: Gravity
        /// Whether it is repeated over the whole result (`re`), centred.
        public var tiles: Bool
        /// Offsets from the gravity's edge, or for tiles the space between
        /// them: pixels (times the `dpr`) from 1 up, fractions of the
        /// result's side below 1.
        public var offset: Offset
        /// Its size as a fraction of the result's (it is fitted into that
        /// box, enlarged if need be); 0 keeps its own size.
        public var scale: Double

        /// Creates a watermark placement.
        public init(opacity: Double, gravity: Gravity = .center, tiles: Bool = false, offset: Offset = .zero, scale: Double = 0) {
            self.opacity = opacity
            self.gravity = gravity
            self.tiles = tiles
            self.offset = offset
            self.scale = scale
        }
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
        /// GIF: 255 colours per frame; animations stay animated.
        case gif
        /// JPEG XL (libjxl).
        case jxl
        /// HEIC (libheif with x265).
        case heic
        /// TIFF (libtiff).
        case tiff
        /// BMP: 24-bit, or 32-bit with alpha.
        case bmp
        /// An icon holding one PNG; at most 256x256 (a larger result is a `422 cannot_write`).
        case ico

        /// The format named by an extension or an `f:` option (`jpg`, `jpeg`,
        /// `png`, `webp`, `avif`, `gif`, `jxl`, `heic`/`heif`, `tiff`/`tif`,
        /// `bmp`, `ico`, any case).
        public init?(name: String) {
            switch name.lowercased() {
            case "jpg", "jpeg": self = .jpeg
            case "png": self = .png
            case "webp": self = .webp
            case "avif": self = .avif
            case "gif": self = .gif
            case "jxl": self = .jxl
            case "heic", "heif": self = .heic
            case "tiff", "tif": self = .tiff
            case "bmp": self = .bmp
            case "ico": self = .ico
            default: return nil
            }
        }

        /// The `Content-Type` of the format.
        public var mimeType: String { imageFormat.mimeType }
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
    /// The offset of ``gravity`` (its focus point for ``Gravity/focusPoint``).
    /// Absolute offsets are multiplied by ``dpr``.
    public var gravityOffset: Offset = .zero
    /// The smallest width of the result before ``dpr``; it may enlarge the
    /// image even without ``enlarge``. 0: none.
    public var minWidth: Int = 0
    /// The smallest height of the result before ``dpr``. 0: none.
    public var minHeight: Int = 0
    /// Multiplies the size and the scale across (`zoom`). Default: 1.
    public var zoomX: Double = 1
    /// Multiplies the size and the scale down. Default: 1.
    public var zoomY: Double = 1
    /// The device pixel ratio: multiplies the size, the scale, absolute
    /// offsets and the padding; without ``enlarge`` it never enlarges the
    /// image. Default: 1.
    public var dpr: Double = 1
    /// Extends the canvas to the requested size when the image is smaller,
    /// at a placement; `nil`: no extension.
    public var extend: Placement?
    /// Extends the canvas to the requested aspect ratio, at a placement;
    /// `nil`: no extension.
    public var extendAspectRatio: Placement?
    /// A border of background cut first; `nil`: none.
    public var trim: Trim?
    /// A part cut from the source before resizing; `nil`: the whole source.
    public var crop: Crop?
    /// Space added around the result.
    public var padding: Padding = .zero
    /// A clockwise turn of the result: 0, 90, 180 or 270 degrees.
    public var rotation: Int = 0
    /// Mirrors the result left to right.
    public var flipsHorizontally: Bool = false
    /// Mirrors the result top to bottom.
    public var flipsVertically: Bool = false
    /// The colour of extended and padded areas and of transparent pixels;
    /// `nil`: transparent, and white in a format without alpha.
    public var background: ImageColor?
    /// The largest width or height of the result, padding and extension
    /// included: the image is scaled down to fit. Honoured only when the
    /// server allows security options. `nil`: the server's limit.
    public var maximumResultDimension: Int?
    /// The most pixels the source may have, all the frames decoded
    /// counted (`max_src_resolution`, in megapixels in the path; a security
    /// option). `nil`: the server's ``ImageServerConfiguration/maximumSourcePixels``.
    public var maximumSourcePixels: Int?
    /// The most bytes the source may have (`max_src_file_size`; a security
    /// option), within the loader's own limit. `nil` or 0: the server's.
    public var maximumSourceBytes: Int?
    /// The most frames of an animation processed (`max_animation_frames`;
    /// a security option). `nil`: the server's ``ImageServerConfiguration/maximumAnimationFrames``.
    public var maximumAnimationFrames: Int?
    /// The most pixels of one frame of an animation (`max_animation_frame_resolution`,
    /// in megapixels in the path; a security option): when set, an
    /// animation is checked frame by frame instead of in total. `nil`: the
    /// server's ``ImageServerConfiguration/maximumAnimationFramePixels``; 0: off.
    public var maximumAnimationFramePixels: Int?
    /// Whether a high-bit-depth source keeps its depth where the format can
    /// (`preserve_hdr`). Imago renders 8 bits per channel, so it is accepted
    /// and changes nothing yet.
    public var preservesHDR: Bool = false
    /// Whether a HEIC source's embedded thumbnail is decoded instead of its
    /// main image when it has one (`enforce_thumbnail`).
    public var enforcesThumbnail: Bool = false
    /// The encoder's quality, 1 to 100; `nil` uses the server's default.
    public var quality: Int?
    /// The output format; `nil` lets the server choose (the path's extension,
    /// WebP for clients that accept it when automatic WebP is on, else the
    /// source's format).
    public var format: OutputFormat?
    /// Whether the path names `svg` as the output format (`f:svg`, `@svg`,
    /// `.svg`): an SVG source is answered with its sanitised document, and
    /// any other source is refused (`400 bad_options`). ``format`` is then
    /// `nil`, and the client's `Accept` picks no other format.
    public var requestsSVG: Bool = false
    /// The Gaussian blur's sigma; `nil` (or 0) does not blur.
    public var blur: Double?
    /// The sharpening's sigma (an unsharp mask after any blur); `nil` does not sharpen.
    public var sharpen: Double?
    /// The size of the square blocks the result is pixelated into; `nil` (or 1) does not pixelate.
    public var pixelate: Int?
    /// The quality per output format (`format_quality`), used when ``quality`` is not set.
    public var formatQuality: [OutputFormat: Int] = [:]
    /// The most bytes a JPEG, WebP or AVIF result may take (`max_bytes`):
    /// its quality is lowered until it fits; `nil`: no limit.
    public var maximumBytes: Int?
    /// An opaque value that only changes the URL, and so every cache key (`cachebuster`).
    public var cacheBuster: String?
    /// The Unix time after which the URL answers 404 (`expires`); `nil`: never.
    public var expires: Int?
    /// The name in `Content-Disposition`, without extension; `nil`: the
    /// source's file name.
    public var filename: String?
    /// Whether `Content-Disposition` says `attachment` (download) rather than `inline`.
    public var returnsAttachment: Bool = false
    /// Source formats delivered as they are, not decoded or processed
    /// (`skip_processing`), when the path names no output format or names
    /// the source's own. The bytes are still checked: the source policy,
    /// the size limit, and the pixel limit read from the header.
    public var skipProcessingFormats: Set<ImageFormat> = []
    /// Whether the source is turned upright as its EXIF orientation says
    /// (`auto_rotate`, default on as imgproxy's); off, the stored pixels are
    /// used as they are.
    public var autoRotates: Bool = true
    /// Whether the source's metadata is left out of the result
    /// (`strip_metadata`, default on as imgproxy's): then only what
    /// ``keepsCopyright`` keeps is written; off, the source's EXIF is kept
    /// (its orientation set to "up", since the pixels are turned upright).
    public var stripsMetadata: Bool = true
    /// Whether stripping keeps the EXIF `Artist` and `Copyright` (`keep_copyright`,
    /// default on as imgproxy's).
    public var keepsCopyright: Bool = true
    /// Whether the result is converted to sRGB with no profile
    /// (`strip_color_profile`, default on as imgproxy's); off, the pixels
    /// stay in the source's colour space and its ICC profile is embedded
    /// (not in GIF, which holds none).
    public var stripsColorProfile: Bool = true
    /// The watermark to draw over the result; `nil` draws none.
    public var watermark: Watermark?
    /// Whether the source is streamed through unchanged (`raw`): no
    /// decoding, no processing, no format check; still under the source
    /// policy and the size limit. The other options are ignored, except
    /// those that only shape the headers (`filename`, `return_attachment`,
    /// `expires`, `cachebuster`).
    public var isRaw: Bool = false

    /// Options that leave the image as it is.
    public init() {}
}
#endif
