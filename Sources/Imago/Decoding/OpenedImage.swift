import Foundation

/// What a codec learned from a header: enough to check limits before
/// decoding, and the codec's own `State` for the pixel step.
///
/// A table's ``CodecFunctions/open`` returns one and its
/// ``CodecFunctions/makeImage`` receives it back with the same `State`
/// type, so the state needs no cast. A codec that needs no state (a test
/// double) uses `Void`:
///
/// ```swift
/// let opened = OpenedImage(width: 4, height: 4)                     // OpenedImage<Void>
/// let typed = OpenedImage(width: 4, height: 4, state: header)       // OpenedImage<MyHeader>
/// ```
public struct OpenedImage<State: Sendable>: Sendable {
    /// The canvas width in pixels.
    public var width: Int
    /// The canvas height in pixels.
    public var height: Int
    /// The number of frames; 1 for a still image.
    public var frameCount: Int
    /// Codec-specific state carried from ``CodecFunctions/open`` to
    /// ``CodecFunctions/makeImage`` (typically the data and parsed header fields).
    public var state: State
    /// The colour profile the file embeds, if any. ``CodecDecoder`` converts
    /// the table's image from it to sRGB, or attaches it to the image, as
    /// ``ImageDecodingOptions/colorManagement`` says; `makeImage` itself
    /// leaves the pixels as stored.
    public var colorProfile: ColorProfile?
    /// The orientation the file declares (EXIF), which `makeImage` applies;
    /// ``ImageOrientation/up`` when it declares none, or when the codec's
    /// library applies it itself (HEIC and AVIF transformations).
    public var orientation: ImageOrientation = .up
    /// The file's EXIF block (a TIFF structure, optionally after
    /// `Exif\0\0`), which ``CodecDecoder`` attaches to the image as
    /// ``ImageMetadata/exif``; `nil` when there is none.
    public var exif: Data?
    /// How many scans the decoder will work through: a progressive JPEG's
    /// (each a pass over the image's coefficients); 1 for anything else.
    /// Checked against ``ImageDecodingOptions/maximumScanCount``.
    public var scanCount: Int = 1
    /// How many separately coded tiles make the image: an AVIF or HEIC
    /// grid's; 1 for anything else. Checked against
    /// ``ImageDecodingOptions/maximumTileCount``.
    public var tileCount: Int = 1

    /// Creates a description of an opened image with its codec state.
    public init(width: Int, height: Int, frameCount: Int = 1, state: State, colorProfile: ColorProfile? = nil) {
        self.width = width
        self.height = height
        self.frameCount = frameCount
        self.state = state
        self.colorProfile = colorProfile
    }
}

extension OpenedImage where State == Void {
    /// Creates a description of an opened image that carries no codec state.
    public init(width: Int, height: Int, frameCount: Int = 1, colorProfile: ColorProfile? = nil) {
        self.init(width: width, height: height, frameCount: frameCount, state: (), colorProfile: colorProfile)
    }
}
