extension Image {
    /// The image turned upright, as `orientation` says the stored pixels must be turned.
    ///
    /// Every frame is transformed; width and height swap for the quarter
    /// turns. Returns `self` for ``ImageOrientation/up``. Cost: one pass over
    /// the pixels into a new buffer.
    public func applying(_ orientation: ImageOrientation) -> Image {
        guard orientation != .up else { return self }
        let bpp = pixelFormat.bytesPerPixel
        let (outWidth, outHeight) = orientation.swapsDimensions ? (height, width) : (width, height)
        let outStride = outWidth * bpp
        let lastX = width - 1, lastY = height - 1
        // For an output pixel (x, y), the stored pixel it comes from.
        let source: (Int, Int) -> (Int, Int) = switch orientation {
        case .up: { x, y in (x, y) }
        case .upMirrored: { x, y in (lastX - x, y) }
        case .down: { x, y in (lastX - x, lastY - y) }
        case .downMirrored: { x, y in (x, lastY - y) }
        case .leftMirrored: { x, y in (y, x) }
        case .right: { x, y in (y, lastY - x) }
        case .rightMirrored: { x, y in (lastX - y, lastY - x) }
        case .left: { x, y in (lastX - y, x) }
        }
        let frames = frames.map { frame in
            let pixels = [UInt8](pixelCapacity: outStride * outHeight) { out, count in
                frame.pixels.withUnsafeBufferPointer { input in
                    for y in 0..<outHeight {
                        for x in 0..<outWidth {
                            let (sx, sy) = source(x, y)
                            let from = sy * bytesPerRow + sx * bpp
                            let to = y * outStride + x * bpp
                            for channel in 0..<bpp { out[to + channel] = input[from + channel] }
                        }
                    }
                }
                count = outStride * outHeight
            }
            return ImageFrame(pixels: pixels, duration: frame.duration)
        }
        return derived(width: outWidth, height: outHeight, pixelFormat: pixelFormat, frames: frames)
    }
}

extension Image {
    /// The image turned clockwise by `degrees`, a multiple of 90 (negative
    /// turns anticlockwise). Every frame is turned.
    ///
    /// ```swift
    /// let portrait = landscape.rotated(degrees: 90)
    /// ```
    ///
    /// - Precondition: `degrees` is a multiple of 90.
    public func rotated(degrees: Int) -> Image {
        precondition(degrees % 90 == 0, "images turn by multiples of 90 degrees")
        return switch (degrees % 360 + 360) % 360 {
        case 90: applying(.right)
        case 180: applying(.down)
        case 270: applying(.left)
        default: self
        }
    }

    /// The image mirrored left to right when `horizontally`, top to bottom
    /// when `vertically` (both: turned half way, in one pass). Every frame
    /// is mirrored.
    ///
    /// ```swift
    /// let mirrored = selfie.flipped(horizontally: true)
    /// ```
    public func flipped(horizontally: Bool = false, vertically: Bool = false) -> Image {
        switch (horizontally, vertically) {
        case (true, true): applying(.down)
        case (true, false): applying(.upMirrored)
        case (false, true): applying(.downMirrored)
        case (false, false): self
        }
    }
}

extension ImageProcessors {
    /// Turns the image clockwise by a multiple of 90 degrees, as ``Image/rotated(degrees:)`` does.
    public struct Rotate: ImageProcessing, Hashable {
        /// The turn, normalised to 0, 90, 180 or 270.
        public let degrees: Int

        /// Creates the processor.
        ///
        /// - Precondition: `degrees` is a multiple of 90.
        public init(degrees: Int) {
            precondition(degrees % 90 == 0, "images turn by multiples of 90 degrees")
            self.degrees = (degrees % 360 + 360) % 360
        }

        /// `rotate(DEGREES)`.
        public var identifier: String { "rotate(\(degrees))" }

        public func process(_ image: Image) throws -> Image {
            image.rotated(degrees: degrees)
        }
    }

    /// Mirrors the image, as ``Image/flipped(horizontally:vertically:)`` does.
    public struct Flip: ImageProcessing, Hashable {
        /// Whether left and right swap.
        public let horizontally: Bool
        /// Whether top and bottom swap.
        public let vertically: Bool

        /// Creates the processor.
        public init(horizontally: Bool = false, vertically: Bool = false) {
            self.horizontally = horizontally
            self.vertically = vertically
        }

        /// `flip(h)`, `flip(v)`, `flip(hv)` or `flip()`.
        public var identifier: String { "flip(\(horizontally ? "h" : "")\(vertically ? "v" : ""))" }

        public func process(_ image: Image) throws -> Image {
            image.flipped(horizontally: horizontally, vertically: vertically)
        }
    }
}
