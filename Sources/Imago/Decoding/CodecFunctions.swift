import Foundation

/// The two steps every codec performs, as a table of functions: the seam
/// between a decoder and its C library.
///
/// ``open`` reads the header (size, frame count) without decoding pixels;
/// ``makeImage`` decodes pixels from what ``open`` returned. A
/// ``CodecDecoder`` calls them in that order and checks the limits in
/// between, so no pixel buffer exists before the size has been approved.
///
/// `ImagoCodecs` provides the production tables (``CodecFunctions`` over
/// libspng, TurboJPEG, giflib and libwebp). Tests swap in a spy or a failing
/// table (`ImagoTesting`), or replace a single entry and keep the other real:
///
/// ```swift
/// var functions = CodecFunctions.png
/// functions.makeImage = { _, _, _ in throw MyError() }
/// let decoder = CodecDecoder(format: .png, functions: functions)
/// ```
public struct CodecFunctions: Sendable {
    /// Reads the header of `data`. Throws when the data cannot be opened.
    public var open: @Sendable (_ data: Data, _ options: ImageDecodingOptions) throws -> OpenedImage
    /// Decodes frame `frameIndex` (every frame when `nil`) of an opened image.
    /// Throws when the image cannot be produced.
    public var makeImage: @Sendable (_ opened: OpenedImage, _ frameIndex: Int?, _ options: ImageDecodingOptions) throws -> Image

    /// Creates a table from its two functions.
    public init(
        open: @escaping @Sendable (_ data: Data, _ options: ImageDecodingOptions) throws -> OpenedImage,
        makeImage: @escaping @Sendable (_ opened: OpenedImage, _ frameIndex: Int?, _ options: ImageDecodingOptions) throws -> Image
    ) {
        self.open = open
        self.makeImage = makeImage
    }
}

/// What a codec learned from a header: enough to check limits before decoding.
public struct OpenedImage: Sendable {
    /// The canvas width in pixels.
    public var width: Int
    /// The canvas height in pixels.
    public var height: Int
    /// The number of frames; 1 for a still image.
    public var frameCount: Int
    /// Codec-specific state carried from ``CodecFunctions/open`` to
    /// ``CodecFunctions/makeImage`` (typically the data and parsed header fields).
    public var state: (any Sendable)?

    /// Creates a description of an opened image.
    public init(width: Int, height: Int, frameCount: Int = 1, state: (any Sendable)? = nil) {
        self.width = width
        self.height = height
        self.frameCount = frameCount
        self.state = state
    }
}
