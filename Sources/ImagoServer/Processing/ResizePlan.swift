#if Server
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
        let source = (width: Double(max(1, sourceWidth)), height: Double(max(1, sourceHeight)))
        let box = (width: options.width, height: options.height)
        gravity = options.gravity
        var type = options.resizingType
        if type == .auto {
            let sameOrientation = box.width > 0 && box.height > 0 && (source.width >= source.height) == (box.width >= box.height)
            type = sameOrientation ? .fill : .fit
        }
        let widthScale = box.width > 0 ? Double(box.width) / source.width : nil
        let heightScale = box.height > 0 ? Double(box.height) / source.height : nil

        if type == .force, let widthScale, let heightScale {
            var (x, y) = (widthScale, heightScale)
            if !options.enlarge { (x, y) = (min(x, 1), min(y, 1)) }
            scaledWidth = Self.side(source.width * x, maximumSide)
            scaledHeight = Self.side(source.height * y, maximumSide)
            (width, height) = (scaledWidth, scaledHeight)
            return
        }

        let covers = type == .fill || type == .fillDown
        var scale: Double
        switch (widthScale, heightScale) {
        case let (x?, y?): scale = covers ? max(x, y) : min(x, y)
        case let (x?, nil): scale = x
        case let (nil, y?): scale = y
        case (nil, nil): scale = 1
        }
        let wanted = scale
        if !options.enlarge { scale = min(scale, 1) }
        // No side beyond the maximum, whatever the box asked.
        scale = min(scale, Double(maximumSide) / source.width, Double(maximumSide) / source.height)
        scaledWidth = Self.side(source.width * scale, maximumSide)
        scaledHeight = Self.side(source.height * scale, maximumSide)
        (width, height) = (scaledWidth, scaledHeight)
        guard covers, box.width > 0, box.height > 0 else { return }
        if scale >= wanted {
            // The box is covered: keep exactly the box.
            width = min(box.width, scaledWidth)
            height = min(box.height, scaledHeight)
        } else if type == .fillDown {
            // Not enlarged: keep the largest part with the box's aspect ratio.
            let boxAspect = Double(box.width) / Double(box.height)
            if Double(scaledWidth) / Double(scaledHeight) > boxAspect {
                width = min(scaledWidth, max(1, Int((Double(scaledHeight) * boxAspect).rounded())))
            } else {
                height = min(scaledHeight, max(1, Int((Double(scaledWidth) / boxAspect).rounded())))
            }
        } else {
            // fill that may not enlarge: crop what exceeds the box, no more.
            width = min(box.width, scaledWidth)
            height = min(box.height, scaledHeight)
        }
    }

    /// The top-left corner of the kept part for a fixed gravity (for
    /// ``ProcessingOptions/Gravity/smart`` the processor looks at the pixels
    /// instead; this is the centre).
    public var cropOrigin: (x: Int, y: Int) {
        let spareX = scaledWidth - width
        let spareY = scaledHeight - height
        let x: Int
        let y: Int
        switch gravity {
        case .west, .northWest, .southWest: x = 0
        case .east, .northEast, .southEast: x = spareX
        case .center, .north, .south, .smart: x = spareX / 2
        }
        switch gravity {
        case .north, .northWest, .northEast: y = 0
        case .south, .southWest, .southEast: y = spareY
        case .center, .east, .west, .smart: y = spareY / 2
        }
        return (x, y)
    }

    private static func side(_ value: Double, _ maximum: Int) -> Int {
        min(maximum, max(1, Int(value.rounded())))
    }
}
#endif
