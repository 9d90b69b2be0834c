/// Which part of the image a crop keeps.
public enum CropAnchor: Sendable, Hashable {
    /// The part at a gravity, moved inward from its edges by the offsets in
    /// pixels (from the centre: right and down), and kept inside the image.
    case gravity(Gravity, offsetX: Int = 0, offsetY: Int = 0)
    /// The part centred on a point, given as fractions of the width and
    /// height (0 to 1), as near the centre as the image allows.
    case focusPoint(x: Double, y: Double)
    /// The part a smart crop chooses from the pixels.
    case smart(SmartCrop)

    /// The top-left corner of a `width` x `height` part in `outerWidth` x
    /// `outerHeight`, inside it; `nil` for ``smart(_:)``, which needs the pixels.
    package func origin(ofWidth width: Int, height: Int, inWidth outerWidth: Int, height outerHeight: Int) -> (x: Int, y: Int)? {
        switch self {
        case .gravity(let gravity, let offsetX, let offsetY):
            return gravity.origin(ofWidth: width, height: height, inWidth: outerWidth, height: outerHeight,
                                  offsetX: offsetX, offsetY: offsetY)
        case .focusPoint(let fx, let fy):
            // The point rounded half to even, the part centred on it, kept inside.
            func start(_ fraction: Double, _ outer: Int, _ inner: Int) -> Int {
                let point = fraction.isNaN ? 0.5 : Swift.min(Swift.max(fraction, 0), 1)
                let centred = Int((Double(outer) * point).rounded(.toNearestOrEven)) - inner / 2
                return Swift.max(0, Swift.min(centred, outer - inner))
            }
            return (start(fx, outerWidth, width), start(fy, outerHeight, height))
        case .smart:
            return nil
        }
    }
}

/// The size of the part a crop keeps.
public enum CropSize: Sendable, Hashable {
    /// Pixels; a side of 0, or one larger than the image's, is the whole side.
    case pixels(width: Int, height: Int)
    /// Fractions of the image's sides, above 0 and at most 1 (rounded to
    /// whole pixels, at least 1); a fraction of 0 is the whole side.
    case fraction(width: Double, height: Double)
    /// The largest part of this shape (such as 16 by 9).
    case aspectRatio(width: Int, height: Int)

    /// The size kept from a `width` x `height` image.
    func resolved(width: Int, height: Int) -> (width: Int, height: Int) {
        switch self {
        case .pixels(let w, let h):
            precondition(w >= 0 && h >= 0, "a crop side cannot be negative")
            return (w == 0 ? width : Swift.min(w, width), h == 0 ? height : Swift.min(h, height))
        case .fraction(let w, let h):
            precondition((0...1).contains(w) && (0...1).contains(h), "a crop fraction is from 0 to 1")
            return (w == 0 ? width : ResizeGeometry.side(Double(width) * w, width),
                    h == 0 ? height : ResizeGeometry.side(Double(height) * h, height))
        case .aspectRatio(let w, let h):
            precondition(w > 0 && h > 0, "an aspect ratio's sides are positive")
            return ResizeGeometry.largestPart(ofAspect: Double(w) / Double(h), inWidth: width, height: height)
        }
    }
}

extension Image {
    /// The part of the image of `size` at `anchor` (centred by default).
    /// A smart crop looks at the first frame; every frame is cut.
    ///
    /// ```swift
    /// // A 16:9 banner from any photo, keeping its most detailed part.
    /// let banner = photo.cropped(to: .aspectRatio(width: 16, height: 9), anchor: .smart(.entropy))
    /// // The top-right 200x100 pixels, 10 pixels in from the edges.
    /// let corner = photo.cropped(to: .pixels(width: 200, height: 100), anchor: .gravity(.northEast, offsetX: 10, offsetY: 10))
    /// ```
    public func cropped(to size: CropSize, anchor: CropAnchor = .gravity(.center)) -> Image {
        let kept = size.resolved(width: width, height: height)
        let origin: (x: Int, y: Int)
        if case .smart(let strategy) = anchor {
            origin = smartCropOrigin(width: kept.width, height: kept.height, strategy: strategy)
        } else {
            origin = anchor.origin(ofWidth: kept.width, height: kept.height, inWidth: width, height: height)!
        }
        return cropped(x: origin.x, y: origin.y, width: kept.width, height: kept.height)
    }
}

extension ImageProcessors {
    /// Keeps part of the image, as ``Image/cropped(to:anchor:)`` does.
    public struct Crop: ImageProcessing, Hashable {
        /// The size of the part kept.
        public var size: CropSize
        /// Which part is kept.
        public var anchor: CropAnchor

        /// Creates the processor.
        public init(to size: CropSize, anchor: CropAnchor = .gravity(.center)) {
            self.size = size
            self.anchor = anchor
        }

        /// `crop(SIZE,ANCHOR)`, such as `crop(aspect16:9,smart-entropy)`.
        public var identifier: String {
            let size = switch size {
            case .pixels(let w, let h): "\(w)x\(h)"
            case .fraction(let w, let h): "fraction\(w)x\(h)"
            case .aspectRatio(let w, let h): "aspect\(w):\(h)"
            }
            let anchor = switch anchor {
            case .gravity(let gravity, let x, let y): "\(gravity.rawValue)\(x == 0 && y == 0 ? "" : "+\(x)+\(y)")"
            case .focusPoint(let x, let y): "focus\(x):\(y)"
            case .smart(let strategy): "smart-\(strategy.rawValue)"
            }
            return "crop(\(size),\(anchor))"
        }

        public func process(_ image: Image) throws -> Image {
            image.cropped(to: size, anchor: anchor)
        }
    }
}
