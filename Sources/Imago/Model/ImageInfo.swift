/// What an image's header says, read without decoding its pixels.
public struct ImageInfo: Sendable, Hashable {
    /// The encoded format.
    public var format: ImageFormat
    /// The stored width in pixels.
    public var width: Int
    /// The stored height in pixels.
    public var height: Int
    /// The number of frames; 1 for a still image.
    public var frameCount: Int
    /// The colour profile the file embeds (or, for a PNG, the one its
    /// `gAMA` and `cHRM` chunks describe); `nil` for sRGB.
    public var colorProfile: ColorProfile?
    /// The orientation the file declares (EXIF), which decoding applies:
    /// ``width`` and ``height`` are the stored ones, before it.
    public var orientation: ImageOrientation = .up
    /// The file's EXIF and colour profile; `nil` when it has neither.
    public var metadata: ImageMetadata?

    /// Creates an image description.
    public init(format: ImageFormat, width: Int, height: Int, frameCount: Int, colorProfile: ColorProfile? = nil) {
        self.format = format
        self.width = width
        self.height = height
        self.frameCount = frameCount
        self.colorProfile = colorProfile
    }
}
