import Foundation
import Imago

/// The decoders of `ImagoCodecs`, one per format, and a registry of all of them.
///
/// ```swift
/// let client = NetworkClient(imageDecoder: ImageDecoders.all)
/// let png = ImageDecoders.png()                       // libspng
/// let spied = ImageDecoders.png(functions: spy.functions)
/// ```
public enum ImageDecoders {
    /// A registry with a decoder for JPEG, PNG, GIF and WebP.
    public static let all = ImageDecoderRegistry([
        .png: png(),
        .jpeg: jpeg(),
        .webp: webp(),
        .gif: gif(),
    ])

    /// The decoder for `format`, with the production table.
    public static func decoder(for format: ImageFormat) -> CodecDecoder {
        switch format {
        case .jpeg: jpeg()
        case .png: png()
        case .gif: gif()
        case .webp: webp()
        }
    }

    /// Reads format, size and frame count from the header, without decoding pixels.
    ///
    /// - Throws: ``ImageDecodingError``: `unsupportedFormat` for unknown
    ///   bytes, `couldNotOpen` for a broken header.
    public static func info(for data: Data) throws -> ImageInfo {
        guard let format = ImageFormat(sniffing: data) else {
            throw ImageDecodingError(.unsupportedFormat, message: data.isEmpty ? "the data is empty" : "the bytes are not a JPEG, PNG, GIF or WebP image")
        }
        return try decoder(for: format).info(for: data)
    }

    /// A JPEG decoder; by default over libjpeg-turbo.
    public static func jpeg(functions: CodecFunctions = .jpeg) -> CodecDecoder {
        CodecDecoder(format: .jpeg, functions: functions)
    }

    /// A GIF decoder (every frame composited); by default over giflib.
    public static func gif(functions: CodecFunctions = .gif) -> CodecDecoder {
        CodecDecoder(format: .gif, functions: functions)
    }

    /// A WebP decoder (still and animated); by default over libwebp and its demuxer.
    public static func webp(functions: CodecFunctions = .webp) -> CodecDecoder {
        CodecDecoder(format: .webp, functions: functions)
    }

    /// A PNG decoder; by default over libspng.
    public static func png(functions: CodecFunctions = .png) -> CodecDecoder {
        CodecDecoder(format: .png, functions: functions)
    }
}
