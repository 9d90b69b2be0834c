import Foundation

/// The two steps every codec performs, as a table of functions: the seam
/// between a decoder and its C library.
///
/// ``open`` reads the header (size, frame count) without decoding pixels and
/// returns it with the codec's own `State` (typically the data and parsed
/// header fields); ``makeImage`` decodes pixels from that ``OpenedImage``.
/// The state keeps its type from one step to the other: a table never casts
/// it back. A ``CodecDecoder`` calls the steps in that order and checks the
/// limits in between, so no pixel buffer exists before the size has been
/// approved.
///
/// `ImagoCodecs` provides the production tables (`CodecFunctions.png`,
/// `.jpeg`, `.gif`, `.webp`, `.avif`, `.heif` and `.jxl`, over libspng,
/// TurboJPEG, giflib, libwebp, libavif, libheif and libjxl). Tests swap in a spy or a failing table (`ImagoTesting`), or
/// replace a single entry and keep the other real:
///
/// ```swift
/// var functions = CodecFunctions.png          // CodecFunctions<PNGState>
/// functions.makeImage = { _, _, _ in throw MyError() }
/// let decoder = CodecDecoder(format: .png, functions: functions)
/// ```
public struct CodecFunctions<State: Sendable>: Sendable {
    /// Reads the header of `data`. Throws when the data cannot be opened.
    public var open: @Sendable (_ data: Data, _ options: ImageDecodingOptions) throws -> OpenedImage<State>
    /// Decodes frame `frameIndex` (every frame when `nil`) of an opened image.
    /// Throws when the image cannot be produced.
    ///
    /// ``CodecDecoder`` calls it only once the header passed its checks:
    /// the size and frame count are within ``ImageDecodingOptions``' limits
    /// and `frameIndex` is `nil` or in `0..<opened.frameCount`. The
    /// production tables rely on that and do not check those again.
    public var makeImage: @Sendable (_ opened: OpenedImage<State>, _ frameIndex: Int?, _ options: ImageDecodingOptions) throws -> Image
    /// Decodes the frames of an opened animation one at a time, in order,
    /// handing each to `body` as a one-frame image (the composited canvas,
    /// with its duration and the animation's loop count) and stopping when
    /// `body` returns `false` or after frame `last`; `nil` for a format
    /// without animations, whose one image comes from ``makeImage``.
    ///
    /// The contract is `makeImage`'s: ``CodecDecoder`` calls it only once
    /// the header passed its checks for frames `0...last`.
    public var frames: (@Sendable (_ opened: OpenedImage<State>, _ last: Int, _ options: ImageDecodingOptions,
                                   _ body: (Image) throws -> Bool) throws -> Void)?

    /// Creates a table from its functions.
    public init(
        open: @escaping @Sendable (_ data: Data, _ options: ImageDecodingOptions) throws -> OpenedImage<State>,
        makeImage: @escaping @Sendable (_ opened: OpenedImage<State>, _ frameIndex: Int?, _ options: ImageDecodingOptions) throws -> Image,
        frames: (@Sendable (_ opened: OpenedImage<State>, _ last: Int, _ options: ImageDecodingOptions,
                            _ body: (Image) throws -> Bool) throws -> Void)? = nil
    ) {
        self.open = open
        self.makeImage = makeImage
        self.frames = frames
    }
}
