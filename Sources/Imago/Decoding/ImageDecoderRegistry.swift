import Foundation

/// An ``ImageDecoding`` that sniffs the format of the bytes and hands them
/// to the decoder registered for that format.
///
/// ```swift
/// let decoders = ImageDecoderRegistry([.png: myPNGDecoder])
/// let image = try decoders.decode(data)
/// ```
public struct ImageDecoderRegistry: ImageDecoding {
    /// The decoder for each format.
    public var decoders: [ImageFormat: any ImageDecoding]

    /// Creates a registry with a decoder per format.
    public init(_ decoders: [ImageFormat: any ImageDecoding] = [:]) {
        self.decoders = decoders
    }

    /// The formats this registry can decode.
    public var supportedFormats: Set<ImageFormat> { Set(decoders.keys) }

    /// Decodes with the decoder registered for the sniffed format.
    ///
    /// - Throws: ``ImageDecodingError/Code/unsupportedFormat`` when the bytes
    ///   are not a known format or no decoder is registered for it; otherwise
    ///   whatever that decoder throws, unchanged.
    public func decode(_ data: Data, options: ImageDecodingOptions) throws -> Image {
        try decoder(for: data).decode(data, options: options)
    }

    /// Decodes frame by frame with the decoder registered for the sniffed format.
    public func decodeFrames(_ data: Data, options: ImageDecodingOptions, maximumFrames: Int?, _ body: (Image) throws -> Bool) throws {
        try decoder(for: data).decodeFrames(data, options: options, maximumFrames: maximumFrames, body)
    }

    private func decoder(for data: Data) throws -> any ImageDecoding {
        guard let format = ImageFormat(sniffing: data) else {
            throw ImageDecodingError(
                .unsupportedFormat,
                message: data.isEmpty ? "the data is empty" : "the bytes are not a JPEG, PNG, GIF, WebP, AVIF, HEIC, JPEG XL, BMP, ICO or TIFF image"
            )
        }
        guard let decoder = decoders[format] else {
            throw ImageDecodingError(.unsupportedFormat, format: format, message: "no decoder is registered for \(format)")
        }
        return decoder
    }
}
