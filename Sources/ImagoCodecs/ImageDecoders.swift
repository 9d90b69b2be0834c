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
    ])

    /// A JPEG decoder; by default over libjpeg-turbo.
    public static func jpeg(functions: CodecFunctions = .jpeg) -> CodecDecoder {
        CodecDecoder(format: .jpeg, functions: functions)
    }

    /// A PNG decoder; by default over libspng.
    public static func png(functions: CodecFunctions = .png) -> CodecDecoder {
        CodecDecoder(format: .png, functions: functions)
    }
}
