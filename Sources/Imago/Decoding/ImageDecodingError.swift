/// The error a decoder throws: a ``Code`` saying which step failed, the
/// format when known, and the library's own error passed through unchanged.
public struct ImageDecodingError: LayeredError {
    /// Which step of decoding failed.
    public typealias Code = ErrorCode<ImageDecodingError>

    /// Which step failed.
    public let code: Code
    /// The format being decoded, when it was recognised.
    public let format: ImageFormat?
    /// A short explanation for people.
    public let message: String
    /// The codec's own error, unchanged, when there is one.
    public let underlying: (any Error)?

    /// Creates a decoding error.
    public init(_ code: Code, format: ImageFormat? = nil, message: String, underlying: (any Error)? = nil) {
        self.code = code
        self.format = format
        self.message = message
        self.underlying = underlying
    }

    public var description: String {
        let prefix = format.map { "\($0) " } ?? ""
        return "\(prefix)decoding failed (\(code)): \(message)"
    }
}

extension ErrorCode where Layer == ImageDecodingError {
    /// The bytes are not in a format any registered decoder handles.
    public static var unsupportedFormat: Self { Self("unsupportedFormat") }
    /// The codec could not open the data (bad header, not this format).
    public static var couldNotOpen: Self { Self("couldNotOpen") }
    /// The data opened, but the codec could not produce the image.
    public static var couldNotProduceImage: Self { Self("couldNotProduceImage") }
    /// The image is larger than ``ImageDecodingOptions/maximumPixelCount``.
    public static var tooManyPixels: Self { Self("tooManyPixels") }
    /// The animation has more frames than ``ImageDecodingOptions/maximumFrameCount``.
    public static var tooManyFrames: Self { Self("tooManyFrames") }
    /// The file's coding is too costly to decode for its size: more scans
    /// than ``ImageDecodingOptions/maximumScanCount`` or grid tiles than
    /// ``ImageDecodingOptions/maximumTileCount``, or PNG chunks over the
    /// limits ``ImageDecodingOptions/liftsPNGChunkLimits`` describes.
    public static var tooComplex: Self { Self("tooComplex") }
    /// The requested frame does not exist.
    public static var frameOutOfRange: Self { Self("frameOutOfRange") }
}
