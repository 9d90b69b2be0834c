import Foundation

/// Turns encoded bytes into an ``Image``.
///
/// Decoding is synchronous and may be slow: callers run it away from the
/// main thread. Implementations must be safe to call from several threads
/// at once and must return a typed error, never crash, on any bytes.
///
/// The codecs for JPEG, PNG (with APNG), GIF, WebP, AVIF, HEIC and JPEG XL
/// live in the `ImagoCodecs` module;
/// ``ImageDecoderRegistry`` picks one by the data's format.
public protocol ImageDecoding: Sendable {
    /// Decodes `data` into an image.
    ///
    /// - Throws: ``ImageDecodingError`` when the bytes are not a
    ///   decodable image or break a limit in `options`.
    func decode(_ data: Data, options: ImageDecodingOptions) throws -> Image

    /// Decodes the frames of `data` one at a time, in order, handing each
    /// to `body` as a one-frame image until it returns `false`; at most the
    /// first `maximumFrames` (all when `nil`), with the pixel limit counted
    /// over those. ``CodecDecoder`` holds one frame at a time; the default
    /// implementation decodes them all first.
    ///
    /// - Throws: ``ImageDecodingError``, or what `body` throws.
    func decodeFrames(_ data: Data, options: ImageDecodingOptions, maximumFrames: Int?, _ body: (Image) throws -> Bool) throws
}

extension ImageDecoding {
    /// Decodes `data` with the default options.
    public func decode(_ data: Data) throws -> Image {
        try decode(data, options: ImageDecodingOptions())
    }

    /// Decodes every frame at once with ``decode(_:options:)``, then hands
    /// the first `maximumFrames` to `body` one by one.
    public func decodeFrames(_ data: Data, options: ImageDecodingOptions, maximumFrames: Int?, _ body: (Image) throws -> Bool) throws {
        try Self.handOver(decode(data, options: options.with(frameIndex: nil)), maximumFrames: maximumFrames, body)
    }

    /// Hands the first `maximumFrames` frames of `image` to `body`, one by one, as one-frame images.
    static func handOver(_ image: Image, maximumFrames: Int?, _ body: (Image) throws -> Bool) rethrows {
        for frame in image.frames.prefix(maximumFrames ?? image.frames.count) {
            let one = image.derived(width: image.width, height: image.height, pixelFormat: image.pixelFormat, frames: [frame])
            guard try body(one) else { return }
        }
    }
}

extension ImageDecodingOptions {
    /// These options with another ``frameIndex``.
    func with(frameIndex: Int?) -> ImageDecodingOptions {
        var options = self
        options.frameIndex = frameIndex
        return options
    }
}

/// What a decoder is asked to produce, and the limits it must respect.
public struct ImageDecodingOptions: Sendable, Hashable {
    /// The largest number of pixels (width x height, times frames for an
    /// animation) a decoder may allocate; checked from the header before
    /// any pixel buffer exists. Default: 50 megapixels.
    public var maximumPixelCount: Int
    /// The most frames an animation may have; checked from the header.
    /// Default: 1,000.
    public var maximumFrameCount: Int
    /// The most scans a progressive JPEG may have (libjpeg-turbo's
    /// `maxscans` idea): each is a pass over the image, so a small file of
    /// thousands of scans would cost seconds of CPU. Counted from the
    /// markers before decoding. Default: 100 (encoders write 10 or so).
    public var maximumScanCount: Int
    /// The most tiles an AVIF or HEIC grid may have: each is decoded with
    /// a codec state of its own. Counted from the file's item references
    /// before decoding. Default: 256 (cameras write 48 or so).
    public var maximumTileCount: Int
    /// Which frame of a multi-frame image to decode; `nil` decodes every frame.
    public var frameIndex: Int?
    /// When set, the image is scaled down to this box (fit, fill or crop),
    /// starting while decoding where the codec can (JPEG).
    public var thumbnail: Thumbnail?
    /// What to do with an embedded colour profile. Default:
    /// ``ColorManagement/convertToSRGB``.
    public var colorManagement: ColorManagement
    /// Whether a HEIC or AVIF file's largest embedded thumbnail is decoded
    /// instead of its main image, whatever its size, when it has one
    /// (imgproxy's `enforce_thumbnail`). Default: `false` (a thumbnail item
    /// is used only when it covers ``thumbnail``).
    public var usesEmbeddedThumbnail: Bool
    /// Whether a PNG's ancillary chunks (text, EXIF, a colour profile) may
    /// be larger than the standard limits: imgproxy's `IMGPROXY_PNG_UNLIMITED`,
    /// libvips' `unlimited` for `pngload`. Default: `false`.
    ///
    /// With the standard limits, libspng inflates at most 16 MiB from one
    /// compressed chunk (`zTXt`, a compressed `iTXt`, `iCCP`; its buffer
    /// grows by doubling, so a text chunk stops past 8 MiB) and keeps at
    /// most 64 MiB of chunks in all (stored text and EXIF, and what was
    /// inflated); a file over either is refused as
    /// ``ImageDecodingError/Code/tooComplex``.
    ///
    /// With `true`, one chunk has no limit of its own, and the chunks
    /// together may take as much memory as an RGBA image at the pixel limit:
    /// ``maximumPixelCount`` x 4 bytes (never less than the standard
    /// 64 MiB). A file whose metadata is large then decodes, while a small
    /// compressed chunk still cannot inflate without end (a `zTXt` bomb is
    /// still refused, as `tooComplex`). What stays as it is: the pixel,
    /// frame, scan and tile limits; libspng's limit of 1,000 kept chunks;
    /// and the file's own size, which the caller bounds (the image server's
    /// source byte limit). The image server's memory budget counts a
    /// render's source and pixels, not these chunks: a decode can hold up to
    /// 64 MiB beyond its reservation with the standard limits, and up to the
    /// larger limit above with `true`.
    public var liftsPNGChunkLimits: Bool

    /// What a decoder does with a file's colour profile.
    public enum ColorManagement: Sendable, Hashable {
        /// Convert the pixels to sRGB, so that they display the same
        /// everywhere; the image carries no profile. A profile that cannot
        /// be used (malformed, or for other pixels than the file's, such as
        /// a CMYK profile on a decoded RGB image) is ignored and the pixels
        /// are kept as stored, as browsers do.
        case convertToSRGB
        /// Keep the pixels as stored and the profile in
        /// ``Image/colorProfile``, for an application that manages colour
        /// itself or re-encodes without changing the pixels.
        case keepOriginal
    }

    /// Shorthand for a square ``Thumbnail`` that bounds the longer side;
    /// `nil` when there is no thumbnail or it is not of that kind.
    public var maximumPixelSize: Int? {
        get {
            guard let thumbnail, thumbnail.mode == .fit, thumbnail.width == thumbnail.height else { return nil }
            return thumbnail.width
        }
        set { thumbnail = newValue.map(Thumbnail.init(maximumPixelSize:)) }
    }

    /// The default limit on decoded pixels: 50 megapixels.
    public static let defaultMaximumPixelCount = 50_000_000

    /// Creates decoding options.
    public init(
        maximumPixelCount: Int = ImageDecodingOptions.defaultMaximumPixelCount,
        maximumFrameCount: Int = 1_000,
        frameIndex: Int? = nil,
        maximumPixelSize: Int? = nil,
        thumbnail: Thumbnail? = nil,
        colorManagement: ColorManagement = .convertToSRGB,
        maximumScanCount: Int = 100,
        maximumTileCount: Int = 256,
        usesEmbeddedThumbnail: Bool = false,
        liftsPNGChunkLimits: Bool = false
    ) {
        self.usesEmbeddedThumbnail = usesEmbeddedThumbnail
        self.liftsPNGChunkLimits = liftsPNGChunkLimits
        self.maximumScanCount = maximumScanCount
        self.maximumTileCount = maximumTileCount
        self.maximumPixelCount = maximumPixelCount
        self.maximumFrameCount = maximumFrameCount
        self.frameIndex = frameIndex
        self.thumbnail = thumbnail ?? maximumPixelSize.map(Thumbnail.init(maximumPixelSize:))
        self.colorManagement = colorManagement
    }
}
