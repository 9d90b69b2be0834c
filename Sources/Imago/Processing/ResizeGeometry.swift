/// How an image is fitted to a target box: by ``ResizeGeometry``, and so by
/// ``Image/resized(toFit:height:mode:allowsUpscaling:)``, ``Thumbnail`` and
/// ``ImageProcessors/Resize``.
///
/// Without upscaling (the default everywhere) a side is never made larger
/// than the source's.
public enum ResizeMode: String, Sendable, Hashable, CaseIterable {
    /// Scale so the whole image fits inside the box; aspect ratio kept.
    case fit
    /// Scale so the image covers the box; aspect ratio kept, one side may
    /// overflow and nothing is cut.
    case fill
    /// Cover the box, then cut the overflow at the gravity (the centre
    /// unless a ``ResizeGeometry`` says otherwise): exactly the box, or,
    /// when the image is not enlarged, only what exceeds the box is cut.
    /// (imgproxy's `fill`.)
    case crop
    /// ``crop``, except that an image that is not enlarged to cover the box
    /// is cut to the box's aspect ratio instead: the largest part of that
    /// shape is kept. (imgproxy's `fill-down`.)
    case cropToAspectRatio = "crop-aspect"
    /// Scale each side to the box's independently, ignoring the aspect
    /// ratio (without upscaling, a side smaller than the box keeps its
    /// size). A box with a zero side falls back to ``fit``. (imgproxy's `force`.)
    case force

    /// Whether the image is scaled to cover the box rather than fit inside it.
    var covers: Bool { self == .fill || self == .crop || self == .cropToAspectRatio }

    /// Whether what overflows the box is cut.
    var cuts: Bool { self == .crop || self == .cropToAspectRatio }
}

/// Where an image is resampled to and what part of it is kept, worked out
/// from the source's size and a target box before any pixel is touched.
///
/// This is the one place the box arithmetic lives: ``Image/resized(toFit:height:mode:allowsUpscaling:)``,
/// and a decoder's ``Thumbnail`` ask it; the image server's `ResizePlan`
/// works out imgproxy's sizes and produces one.
/// The image is resampled once, to ``scaledWidth`` x ``scaledHeight``, then
/// the rectangle at ``cropX``, ``cropY`` of ``width`` x ``height`` is cut
/// from the result (``Image/resized(to:filter:linearLight:)`` does both).
///
/// ```swift
/// let geometry = ResizeGeometry(sourceWidth: 4000, sourceHeight: 3000, boxWidth: 200, boxHeight: 200,
///                               mode: .crop, gravity: .east)
/// // scaled to 267x200, then x 67, y 0, 200x200 kept
/// let square = image.resized(to: geometry)
/// ```
///
/// The rules:
/// - The scale is the box's over the source's: the smaller of the two
///   sides' for ``ResizeMode/fit``, the larger for the covering modes, one
///   per side for ``ResizeMode/force``.
/// - A zero box side is free: the other side alone sets the scale (no
///   crop). Two zero sides keep the source's size (before the maximum).
/// - Without `allowsUpscaling` the scale is at most 1.
/// - With a `maximumSide`, the scale is lowered so no side exceeds it.
/// - Each scaled side is the source's side times its scale, rounded to the
///   nearest whole pixel (halves away from zero), and at least 1: a
///   10000x1 image fitted to 100x100 is 100x1.
/// - The part kept is the scaled image, or for ``ResizeMode/crop`` and
///   ``ResizeMode/cropToAspectRatio`` with both box sides given, the box
///   (no larger than the scaled image), placed at the ``Gravity``; its
///   spare pixels are split with the odd one after (towards the bottom right).
public struct ResizeGeometry: Sendable, Hashable, CustomStringConvertible {
    /// The width the source is resampled to.
    public let scaledWidth: Int
    /// The height the source is resampled to.
    public let scaledHeight: Int
    /// The left edge of the part kept, in the resampled image.
    public let cropX: Int
    /// The top edge of the part kept, in the resampled image.
    public let cropY: Int
    /// The width of the part kept: the result's width.
    public let width: Int
    /// The height of the part kept: the result's height.
    public let height: Int

    /// Whether part of the resampled image is cut away.
    public var crops: Bool { width != scaledWidth || height != scaledHeight }

    /// Works out the geometry for a source of `sourceWidth` x `sourceHeight`
    /// and a box of `boxWidth` x `boxHeight`, as the type's summary says.
    ///
    /// - Parameters:
    ///   - sourceWidth: The source's width, at least 1.
    ///   - sourceHeight: The source's height, at least 1.
    ///   - boxWidth: The box's width; 0 leaves it free.
    ///   - boxHeight: The box's height; 0 leaves it free.
    ///   - mode: How the source is fitted to the box.
    ///   - gravity: Where a cut keeps the image.
    ///   - allowsUpscaling: Whether a side may become larger than the source's.
    ///   - maximumSide: The largest side of the scaled image; `nil` for no limit.
    public init(sourceWidth: Int, sourceHeight: Int, boxWidth: Int, boxHeight: Int, mode: ResizeMode = .fit,
                gravity: Gravity = .center, allowsUpscaling: Bool = false, maximumSide: Int? = nil) {
        precondition(sourceWidth > 0 && sourceHeight > 0, "the source must not be empty")
        precondition(boxWidth >= 0 && boxHeight >= 0, "a box side cannot be negative")
        precondition((maximumSide ?? 1) > 0, "the maximum side must be at least 1")
        let source = (width: Double(sourceWidth), height: Double(sourceHeight))
        let limit = maximumSide ?? Int(Int32.max)
        let widthScale = boxWidth > 0 ? Double(boxWidth) / source.width : nil
        let heightScale = boxHeight > 0 ? Double(boxHeight) / source.height : nil

        if mode == .force, var x = widthScale, var y = heightScale {
            if !allowsUpscaling { (x, y) = (min(x, 1), min(y, 1)) }
            scaledWidth = Self.side(source.width * x, limit)
            scaledHeight = Self.side(source.height * y, limit)
            (cropX, cropY, width, height) = (0, 0, scaledWidth, scaledHeight)
            return
        }

        let wanted: Double = switch (widthScale, heightScale) {
        case let (x?, y?): mode.covers ? max(x, y) : min(x, y)
        case let (x?, nil): x
        case let (nil, y?): y
        case (nil, nil): 1
        }
        var scale = allowsUpscaling ? wanted : min(wanted, 1)
        scale = min(scale, Double(limit) / source.width, Double(limit) / source.height)
        scaledWidth = Self.side(source.width * scale, limit)
        scaledHeight = Self.side(source.height * scale, limit)

        var kept = (width: scaledWidth, height: scaledHeight)
        if mode.cuts && boxWidth > 0 && boxHeight > 0 {
            kept = (min(boxWidth, scaledWidth), min(boxHeight, scaledHeight))
            if mode == .cropToAspectRatio && scale < wanted {
                // Not scaled up to cover the box: the largest part with the box's shape.
                kept = Self.largestPart(ofAspect: Double(boxWidth) / Double(boxHeight), inWidth: scaledWidth, height: scaledHeight)
            }
        }
        (width, height) = kept
        (cropX, cropY) = gravity.origin(ofWidth: kept.width, height: kept.height, inWidth: scaledWidth, height: scaledHeight)
    }

    /// A geometry worked out elsewhere (the image server's `ResizePlan`, with
    /// imgproxy's arithmetic): resample to `scaledWidth` x `scaledHeight`,
    /// then keep `width` x `height` at `cropX`, `cropY`.
    ///
    /// - Precondition: the sizes are positive and the part kept lies inside the scaled image.
    package init(scaledWidth: Int, scaledHeight: Int, cropX: Int, cropY: Int, width: Int, height: Int) {
        precondition(scaledWidth > 0 && scaledHeight > 0 && width > 0 && height > 0, "a geometry's sizes are positive")
        precondition(cropX >= 0 && cropY >= 0 && cropX + width <= scaledWidth && cropY + height <= scaledHeight,
                     "the part kept lies inside the scaled image")
        (self.scaledWidth, self.scaledHeight, self.cropX, self.cropY, self.width, self.height) =
            (scaledWidth, scaledHeight, cropX, cropY, width, height)
    }

    /// The largest part of `width` x `height` whose width over height is `aspect`.
    static func largestPart(ofAspect aspect: Double, inWidth width: Int, height: Int) -> (width: Int, height: Int) {
        Double(width) / Double(height) > aspect
            ? (side(Double(height) * aspect, width), height)
            : (width, side(Double(width) / aspect, height))
    }

    /// A side of `value` pixels: rounded to the nearest (halves away from
    /// zero), at least 1 and at most `maximum`. The one rounding rule.
    static func side(_ value: Double, _ maximum: Int) -> Int {
        guard value < Double(maximum) else { return maximum }
        return max(1, Int(value.rounded()))
    }

    /// The scaled size and the part kept, such as `267x200 -> 200x200+33+0`.
    public var description: String {
        "\(scaledWidth)x\(scaledHeight)" + (crops ? " -> \(width)x\(height)+\(cropX)+\(cropY)" : "")
    }
}

extension Image {
    /// The image resampled to the geometry's scaled size with `filter`,
    /// then cut to its part kept.
    ///
    /// `self` is the source the geometry was worked out for, or a copy of
    /// it already scaled part of the way (as a decoder's DCT scaling does):
    /// either way it is resampled once, to ``ResizeGeometry/scaledWidth`` x
    /// ``ResizeGeometry/scaledHeight``, and not at all when it has that
    /// size. See ``resized(width:height:filter:linearLight:)`` for `filter`
    /// and `linearLight`.
    public func resized(to geometry: ResizeGeometry, filter: ResamplingFilter = .area, linearLight: Bool = false) -> Image {
        resized(width: geometry.scaledWidth, height: geometry.scaledHeight, filter: filter, linearLight: linearLight)
            .cropped(x: geometry.cropX, y: geometry.cropY, width: geometry.width, height: geometry.height)
    }
}
