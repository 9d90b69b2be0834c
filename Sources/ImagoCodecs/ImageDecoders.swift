import Foundation
import Imago

/// The decoders of `ImagoCodecs`, one per format, and a registry of all of them.
///
/// Every decoder but GIF's converts images with an embedded colour profile
/// to sRGB with Little CMS (see ``ImageDecodingOptions/colorManagement``).
///
/// ```swift
/// let client = NetworkClient(imageDecoder: ImageDecoders.all)
/// let png = ImageDecoders.png()                       // libspng
/// let spied = ImageDecoders.png(functions: spy.functions)
/// ```
public enum ImageDecoders {
    /// A registry with a decoder for every ``ImageFormat``: JPEG, PNG
    /// (with APNG), GIF, WebP, AVIF, HEIC, JPEG XL, BMP, ICO and TIFF.
    public static let all = ImageDecoderRegistry([
        .png: png(),
        .jpeg: jpeg(),
        .webp: webp(),
        .gif: gif(),
        .avif: avif(),
        .heic: heic(),
        .jxl: jxl(),
        .bmp: bmp(),
        .ico: ico(),
        .tiff: tiff(),
    ])

    /// The decoder for `format`, with the production table.
    public static func decoder(for format: ImageFormat) -> CodecDecoder {
        switch format {
        case .jpeg: jpeg()
        case .png: png()
        case .gif: gif()
        case .webp: webp()
        case .avif: avif()
        case .heic: heic()
        case .jxl: jxl()
        case .bmp: bmp()
        case .ico: ico()
        case .tiff: tiff()
        }
    }

    /// Reads format, size and frame count from the header, without decoding pixels.
    ///
    /// - Throws: ``ImageDecodingError``: `unsupportedFormat` for unknown
    ///   bytes, `couldNotOpen` for a broken header, `tooComplex` for a file
    ///   a decode would refuse from its structure (more than 100 progressive
    ///   scans or 256 grid tiles, ``ImageDecodingOptions``' defaults, or PNG
    ///   chunks over the standard limits).
    public static func info(for data: Data) throws -> ImageInfo {
        try info(for: data, options: ImageDecodingOptions())
    }

    /// Reads format, size and frame count from the header, as
    /// ``info(for:)`` does, with the structural limits of `options` (scans,
    /// grid tiles, and ``ImageDecodingOptions/liftsPNGChunkLimits``): the
    /// header read of a decode made with the same options.
    ///
    /// - Throws: ``ImageDecodingError``, as ``info(for:)``.
    public static func info(for data: Data, options: ImageDecodingOptions) throws -> ImageInfo {
        guard let format = ImageFormat(sniffing: data) else {
            throw ImageDecodingError(.unsupportedFormat, message: data.isEmpty ? "the data is empty" : "the bytes are not a JPEG, PNG, GIF, WebP, AVIF, HEIC, JPEG XL, BMP, ICO or TIFF image")
        }
        return try decoder(for: format).info(for: data, options: options)
    }

    /// The JPEG decoder over libjpeg-turbo.
    public static func jpeg() -> CodecDecoder { jpeg(functions: .jpeg) }

    /// A JPEG decoder over `functions`: the production table with an entry
    /// replaced, or a test double. Embedded colour profiles go through
    /// `colorConversion` (Little CMS by default; `nil` keeps them on the image).
    public static func jpeg<State>(functions: CodecFunctions<State>, colorConversion: ColorConversionFunctions? = .lcms2) -> CodecDecoder {
        CodecDecoder(format: .jpeg, functions: functions, colorConversion: colorConversion)
    }

    /// The GIF decoder (every frame composited) over giflib.
    public static func gif() -> CodecDecoder { gif(functions: .gif) }

    /// A GIF decoder over `functions`: the production table with an entry
    /// replaced, or a test double.
    public static func gif<State>(functions: CodecFunctions<State>) -> CodecDecoder {
        CodecDecoder(format: .gif, functions: functions)
    }

    /// The WebP decoder (still and animated) over libwebp and its demuxer.
    public static func webp() -> CodecDecoder { webp(functions: .webp) }

    /// A WebP decoder over `functions`: the production table with an entry
    /// replaced, or a test double. Embedded colour profiles go through
    /// `colorConversion` (Little CMS by default; `nil` keeps them on the image).
    public static func webp<State>(functions: CodecFunctions<State>, colorConversion: ColorConversionFunctions? = .lcms2) -> CodecDecoder {
        CodecDecoder(format: .webp, functions: functions, colorConversion: colorConversion)
    }

    /// The PNG decoder over libspng.
    public static func png() -> CodecDecoder { png(functions: .png) }

    /// A PNG decoder over `functions`: the production table with an entry
    /// replaced, or a test double. Embedded colour profiles go through
    /// `colorConversion` (Little CMS by default; `nil` keeps them on the image).
    public static func png<State>(functions: CodecFunctions<State>, colorConversion: ColorConversionFunctions? = .lcms2) -> CodecDecoder {
        CodecDecoder(format: .png, functions: functions, colorConversion: colorConversion)
    }

    /// The AVIF decoder over libavif with dav1d (stills and image sequences).
    public static func avif() -> CodecDecoder { avif(functions: .avif) }

    /// An AVIF decoder over `functions`: the production table with an entry
    /// replaced, or a test double. Embedded colour profiles go through
    /// `colorConversion` (Little CMS by default; `nil` keeps them on the image).
    public static func avif<State>(functions: CodecFunctions<State>, colorConversion: ColorConversionFunctions? = .lcms2) -> CodecDecoder {
        CodecDecoder(format: .avif, functions: functions, colorConversion: colorConversion)
    }

    /// The HEIC decoder over libheif (HEVC through libde265).
    public static func heic() -> CodecDecoder { heic(functions: .heif) }

    /// A HEIC decoder over `functions`: the production table with an entry
    /// replaced, or a test double. Embedded colour profiles go through
    /// `colorConversion` (Little CMS by default; `nil` keeps them on the image).
    public static func heic<State>(functions: CodecFunctions<State>, colorConversion: ColorConversionFunctions? = .lcms2) -> CodecDecoder {
        CodecDecoder(format: .heic, functions: functions, colorConversion: colorConversion)
    }

    /// The JPEG XL decoder over libjxl.
    public static func jxl() -> CodecDecoder { jxl(functions: .jxl) }

    /// A JPEG XL decoder over `functions`: the production table with an
    /// entry replaced, or a test double. Embedded colour profiles go through
    /// `colorConversion` (Little CMS by default; `nil` keeps them on the image).
    public static func jxl<State>(functions: CodecFunctions<State>, colorConversion: ColorConversionFunctions? = .lcms2) -> CodecDecoder {
        CodecDecoder(format: .jxl, functions: functions, colorConversion: colorConversion)
    }

    /// The BMP decoder: Imago's own reader, every size checked against the data.
    public static func bmp() -> CodecDecoder { bmp(functions: .bmp) }

    /// A BMP decoder over `functions`: the production table with an entry
    /// replaced, or a test double. A V5 header's embedded colour profile
    /// goes through `colorConversion` (Little CMS by default; `nil` keeps
    /// it on the image).
    public static func bmp<State>(functions: CodecFunctions<State>, colorConversion: ColorConversionFunctions? = .lcms2) -> CodecDecoder {
        CodecDecoder(format: .bmp, functions: functions, colorConversion: colorConversion)
    }

    /// The ICO decoder: the icon's largest image, PNG through libspng, BMP
    /// through Imago's own reader.
    public static func ico() -> CodecDecoder { ico(functions: .ico) }

    /// An ICO decoder over `functions`: the production table with an entry
    /// replaced, or a test double. A PNG image's colour profile goes
    /// through `colorConversion` (Little CMS by default; `nil` keeps it on
    /// the image).
    public static func ico<State>(functions: CodecFunctions<State>, colorConversion: ColorConversionFunctions? = .lcms2) -> CodecDecoder {
        CodecDecoder(format: .ico, functions: functions, colorConversion: colorConversion)
    }

    /// The TIFF decoder over libtiff (the first page).
    public static func tiff() -> CodecDecoder { tiff(functions: .tiff) }

    /// A TIFF decoder over `functions`: the production table with an entry
    /// replaced, or a test double. Embedded colour profiles go through
    /// `colorConversion` (Little CMS by default; `nil` keeps them on the image).
    public static func tiff<State>(functions: CodecFunctions<State>, colorConversion: ColorConversionFunctions? = .lcms2) -> CodecDecoder {
        CodecDecoder(format: .tiff, functions: functions, colorConversion: colorConversion)
    }
}
