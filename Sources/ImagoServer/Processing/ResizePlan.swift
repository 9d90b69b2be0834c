#if Server
import Imago

/// The geometry of one request, worked out from the source's size and the
/// options before any pixel is touched: the size to resample to, then the
/// part of that to keep. imgproxy's rules:
///
/// - `fit` keeps the aspect ratio inside the box; `fill` covers the box and
///   crops the rest at the gravity; `fill-down` is `fill` that never
///   enlarges, cropping to the box's aspect ratio instead; `force`
///   stretches to the box; `auto` is `fill` when the source and the box have
///   the same orientation, else `fit`.
/// - A zero side follows the aspect ratio; two zeros keep the source's size.
/// - Without `enlarge` the image is never scaled up.
/// - No side of the result exceeds the maximum (8192 by default).
///
/// The plan reads the options; the arithmetic (scale, rounding, crop,
/// gravity) is the library's ``Imago/ResizeGeometry``, the same that
/// `Image.resized(toFit:height:mode:allowsUpscaling:)` and decoders'
/// thumbnails use: `fit`, `fill`, `fill-down` and `force` are its
/// ``Imago/ResizeMode/fit``, ``Imago/ResizeMode/crop``,
/// ``Imago/ResizeMode/cropToAspectRatio`` and ``Imago/ResizeMode/force``.
public struct ResizePlan: Sendable, Hashable {
    /// The size the source is resampled to.
    public var scaledWidth: Int
    /// The size the source is resampled to.
    public var scaledHeight: Int
    /// The size kept from the resampled image, at ``gravity``; equal to the
    /// scaled size when nothing is cropped.
    public var width: Int
    /// The size kept from the resampled image.
    public var height: Int
    /// Where the kept part sits in the resampled image.
    public var gravity: ProcessingOptions.Gravity

    /// Whether part of the resampled image is cropped away.
    public var crops: Bool { width != scaledWidth || height != scaledHeight }

    /// Works out the geometry for a source of `sourceWidth` x `sourceHeight`.
    public init(sourceWidth: Int, sourceHeight: Int, options: ProcessingOptions, maximumSide: Int = ImageServerPath.maximumOutputSide) {
        let source = (width: max(1, sourceWidth), height: max(1, sourceHeight))
        let geometry = ResizeGeometry(
            sourceWidth: source.width, sourceHeight: source.height, boxWidth: max(0, options.width), boxHeight: max(0, options.height),
            mode: Self.mode(for: options, sourceWidth: source.width, sourceHeight: source.height),
            gravity: options.gravity.geometryGravity, allowsUpscaling: options.enlarge, maximumSide: max(1, maximumSide)
        )
        scaledWidth = geometry.scaledWidth
        scaledHeight = geometry.scaledHeight
        width = geometry.width
        height = geometry.height
        gravity = options.gravity
    }

    /// The library's mode for the options' resizing type; `auto` decided
    /// by the orientations of the source and the box.
    static func mode(for options: ProcessingOptions, sourceWidth: Int, sourceHeight: Int) -> ResizeMode {
        switch options.resizingType {
        case .fit: return .fit
        case .fill: return .crop
        case .fillDown: return .cropToAspectRatio
        case .force: return .force
        case .auto:
            let sameOrientation = options.width > 0 && options.height > 0
                && (sourceWidth >= sourceHeight) == (options.width >= options.height)
            return sameOrientation ? .crop : .fit
        }
    }

    /// The top-left corner of the kept part for a fixed gravity (for
    /// ``ProcessingOptions/Gravity/smart`` the processor looks at the pixels
    /// instead; this is the centre).
    public var cropOrigin: (x: Int, y: Int) {
        gravity.geometryGravity.origin(ofWidth: width, height: height, inWidth: scaledWidth, height: scaledHeight)
    }
}

extension ProcessingOptions.Gravity {
    /// The library's gravity for this one; ``smart`` is the centre until
    /// the processor has looked at the pixels.
    var geometryGravity: ResizeGeometry.Gravity {
        switch self {
        case .center, .smart: .center
        case .north: .north
        case .south: .south
        case .east: .east
        case .west: .west
        case .northEast: .northEast
        case .northWest: .northWest
        case .southEast: .southEast
        case .southWest: .southWest
        }
    }
}
#endif
