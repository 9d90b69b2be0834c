/// A size to decode an image to, for decoders that can scale down while
/// decoding (JPEG's DCT scaling) and resize the rest of the way.
///
/// ```swift
/// ImageDecodingOptions(thumbnail: Thumbnail(width: 256, height: 256, mode: .crop))
/// ImageDecodingOptions(maximumPixelSize: 256)   // the same as Thumbnail(maximumPixelSize: 256)
/// ```
///
/// Images are never enlarged: one smaller than the box keeps its size
/// (``ResizeMode/crop`` still cuts what exceeds the box). The arithmetic is
/// ``ResizeGeometry``'s, the same as ``Image/resized(toFit:height:mode:allowsUpscaling:)``'s,
/// so a thumbnail has the pixels of a full decode resized to the same box
/// (except where the decoder scales while decoding: JPEG's DCT scaling and
/// libwebp's scaler round differently).
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

    /// Where an image of `width` x `height` (upright) is resampled to and
    /// what is kept of it: the ``ResizeGeometry`` of the box and the mode,
    /// centred, never enlarged.
    public func geometry(width imageWidth: Int, height imageHeight: Int) -> ResizeGeometry {
        ResizeGeometry(sourceWidth: imageWidth, sourceHeight: imageHeight, boxWidth: width, boxHeight: height, mode: mode)
    }

    /// The size an image of `width` x `height` is scaled to before any
    /// crop: ``geometry(width:height:)``'s scaled size.
    public func scaledSize(width imageWidth: Int, height imageHeight: Int) -> (width: Int, height: Int) {
        let geometry = geometry(width: imageWidth, height: imageHeight)
        return (geometry.scaledWidth, geometry.scaledHeight)
    }

    /// ``scaledSize(width:height:)``, never larger than the image: the size
    /// decoders that downscale an animation's frames as they draw them
    /// (GIF, WebP) draw at.
    package func downscaledSize(width imageWidth: Int, height imageHeight: Int) -> (width: Int, height: Int) {
        let scaled = scaledSize(width: imageWidth, height: imageHeight)
        return (min(scaled.width, imageWidth), min(scaled.height, imageHeight))
    }

    /// What resamples an RGBA canvas of `width` x `height` to
    /// ``downscaledSize(width:height:)`` (the size CodecDecoder would resize
    /// a full decode to), or `nil` when that is the canvas's own size.
    package func downscalingPlan(width imageWidth: Int, height imageHeight: Int) -> ResamplingPlan? {
        let size = downscaledSize(width: imageWidth, height: imageHeight)
        guard size != (imageWidth, imageHeight) else { return nil }
        return ResamplingPlan(sourceWidth: imageWidth, sourceHeight: imageHeight, format: .rgba8, width: size.width, height: size.height,
                              filter: filter, linearLight: linearLight)
    }

    /// The longer side a uniformly scaled copy of an image of `width` x
    /// `height` needs so that it covers ``scaledSize(width:height:)`` in
    /// both directions, in either orientation: a bound for decoders that
    /// scale by the longer side and may turn the image upright afterwards
    /// (JPEG with an EXIF orientation). For the modes that keep the aspect
    /// ratio it is the scaled size's longer side; ``ResizeMode/force`` may
    /// need more.
    package func longerSideCoveringEitherOrientation(width imageWidth: Int, height imageHeight: Int) -> Int {
        func bound(_ width: Int, _ height: Int) -> Int {
            let scaled = scaledSize(width: width, height: height)
            let longer = max(scaled.width, scaled.height)
            guard mode == .force else { return longer }
            let scale = max(Double(scaled.width) / Double(width), Double(scaled.height) / Double(height))
            return max(longer, Int((Double(max(width, height)) * scale).rounded(.up)))
        }
        return max(bound(imageWidth, imageHeight), bound(imageHeight, imageWidth))
    }

    /// The box as an image's stored pixels see it, before `orientation`
    /// turns them upright: width and height swapped for a quarter turn.
    package func forStoredPixels(turnedBy orientation: ImageOrientation) -> Thumbnail {
        orientation.swapsDimensions ? Thumbnail(width: height, height: width, mode: mode, filter: filter, linearLight: linearLight) : self
    }

    /// The box, mode, filter and light, such as `256x256,crop,lanczos3`
    /// (part of the pipeline's key for the decoded image).
    public var description: String {
        "\(width)x\(height),\(mode.rawValue)" + (filter == .area ? "" : ",\(filter.rawValue)") + (linearLight ? ",linear" : "")
    }
}
