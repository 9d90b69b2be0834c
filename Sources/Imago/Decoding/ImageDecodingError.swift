/// The error a decoder throws: a ``Code`` saying which step failed, the
/// format when known, and the library's own error passed through unchanged.
public struct ImageDecodingError: Error, Sendable, CustomStringConvertible {
    /// Which step of decoding failed.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private let name: String
        private init(_ name: String) { self.name = name }

        /// The bytes are not in a format any registered decoder handles.
        public static let unsupportedFormat = Code("unsupportedFormat")
        /// The codec could not open the data (bad header, not this format).
        public static let couldNotOpen = Code("couldNotOpen")
        /// The data opened, but the codec could not produce the image.
        public static let couldNotProduceImage = Code("couldNotProduceImage")
        /// The image is larger than ``ImageDecodingOptions/maximumPixelCount``.
        public static let tooManyPixels = Code("tooManyPixels")
        /// The animation has more frames than ``ImageDecodingOptions/maximumFrameCount``.
        public static let tooManyFrames = Code("tooManyFrames")
        /// The requested frame does not exist.
        public static let frameOutOfRange = Code("frameOutOfRange")

        public var description: String { name }
    }

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
