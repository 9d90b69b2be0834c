/// A size to decode an image to, for decoders that can scale down while
/// decoding (JPEG's DCT scaling) and resize the rest of the way.
///
/// ```swift
/// ImageDecodingOptions(thumbnail: Thumbnail(width: 256, height: 256, mode: .crop))
/// ImageDecodingOptions(maximumPixelSize: 256)   // the same as Thumbnail(maximumPixelSize: 256)
/// ```
///
/// Images are never enlarged: one smaller than the box keeps its size
/// (``ResizeMode/crop`` still cuts what exceeds the box).
public struct Thumbnail: Sendable, Hashable, CustomStringConvertible {
    /// The box width.
    public var width: Int
    /// The box height.
    public var height: Int
    /// How the image is fitted to the box.
    public var mode: ResizeMode
    /// The filter for the resizing left after the decoder's own scaling
    /// (JPEG's DCT scaling and libwebp's scaler run first, whatever the filter).
    public var filter: ResamplingFilter
    /// Whether that resizing averages light intensities rather than stored
    /// sRGB values (see ``Image/resized(width:height:filter:linearLight:)``).
    public var linearLight: Bool

    /// Creates a thumbnail box.
    public init(width: Int, height: Int, mode: ResizeMode = .fit, filter: ResamplingFilter = .area, linearLight: Bool = false) {
        precondition(width > 0 && height > 0, "a thumbnail box must not be empty")
        self.width = width
        self.height = height
        self.mode = mode
        self.filter = filter
        self.linearLight = linearLight
    }

    /// A square box that bounds the longer side.
    public init(maximumPixelSize: Int) {
        self.init(maximumPixelSize: maximumPixelSize, filter: .area)
    }

    /// A square box that bounds the longer side, resized with `filter`.
    public init(maximumPixelSize: Int, filter: ResamplingFilter, linearLight: Bool = false) {
        self.init(width: maximumPixelSize, height: maximumPixelSize, mode: .fit, filter: filter, linearLight: linearLight)
    }

    /// The size an image of `width` x `height` is scaled to before any
    /// crop: fitted in the box, or covering it; never larger than the image.
    public func scaledSize(width imageWidth: Int, height imageHeight: Int) -> (width: Int, height: Int) {
        let scaleX = Double(width) / Double(imageWidth), scaleY = Double(height) / Double(imageHeight)
        let scale = min(1, mode == .fit ? min(scaleX, scaleY) : max(scaleX, scaleY))
        return (max(1, Int((Double(imageWidth) * scale).rounded())), max(1, Int((Double(imageHeight) * scale).rounded())))
    }

    /// The longest side of ``scaledSize(width:height:)`` for an image of
    /// `width` x `height`, in either orientation: a bound for decoders that
    /// scale by the longer side and may turn the image upright afterwards
    /// (JPEG with an EXIF orientation).
    package func longerSideCoveringEitherOrientation(width imageWidth: Int, height imageHeight: Int) -> Int {
        let straight = scaledSize(width: imageWidth, height: imageHeight)
        let turned = scaledSize(width: imageHeight, height: imageWidth)
        return max(straight.width, straight.height, turned.width, turned.height)
    }

    /// The box as an image's stored pixels see it, before `orientation`
    /// turns them upright: width and height swapped for a quarter turn.
    package func forStoredPixels(turnedBy orientation: ImageOrientation) -> Thumbnail {
        orientation.swapsDimensions ? Thumbnail(width: height, height: width, mode: mode, filter: filter, linearLight: linearLight) : self
    }

    public var description: String {
        "\(width)x\(height),\(mode.rawValue)" + (filter == .area ? "" : ",\(filter.rawValue)") + (linearLight ? ",linear" : "")
    }
}
