import Foundation

/// Turns an ``Image`` into encoded bytes of one format.
///
/// `ImagoCodecs` ships an encoder for every ``ImageFormat``.
/// Encoding is synchronous and may be slow; implementations are safe to call
/// from several threads at once.
public protocol ImageEncoding: Sendable {
    /// The format this encoder produces.
    var format: ImageFormat { get }

    /// Encodes the first frame of `image`.
    ///
    /// - Throws: ``ImageEncodingError``.
    func encode(_ image: Image) throws -> Data
}

/// The error an encoder throws, with the codec's own error unchanged.
public struct ImageEncodingError: LayeredError {
    /// What went wrong.
    public typealias Code = ErrorCode<ImageEncodingError>

    /// What went wrong.
    public let code: Code
    /// The format being written.
    public let format: ImageFormat
    /// A short explanation for people.
    public let message: String
    /// The codec's own error, unchanged, when there is one.
    public let underlying: (any Error)?

    /// Creates an encoding error.
    public init(_ code: Code, format: ImageFormat, message: String, underlying: (any Error)? = nil) {
        self.code = code
        self.format = format
        self.message = message
        self.underlying = underlying
    }

    public var description: String { "\(format) encoding failed (\(code)): \(message)" }
}

extension ErrorCode where Layer == ImageEncodingError {
    /// The encoder cannot take this image (size, pixel format).
    public static var unsupportedImage: Self { Self("unsupportedImage") }
    /// The codec failed while encoding.
    public static var encodingFailed: Self { Self("encodingFailed") }
    /// Imago has no encoder for the format.
    public static var unsupportedFormat: Self { Self("unsupportedFormat") }
}
