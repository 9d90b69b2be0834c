/// What ``Image/trimmed(_:threshold:equalHorizontal:equalVertical:)`` cuts
/// away: a border of one colour, or of transparency.
public enum TrimReference: Sendable, Hashable {
    /// A border of the colour of the top-left pixel.
    case topLeftPixel
    /// A border of this colour (its alpha is ignored).
    case color(ImageColor)
    /// A border of fully transparent pixels (an image without alpha has none).
    case transparency
}

extension Image {
    /// The image with its border cut away, as libvips' `find_trim` finds
    /// it: a pixel belongs to the border when, after a 3x3 median filter,
    /// no channel differs from the reference by more than `threshold`.
    /// Transparent pixels count as magenta against a colour (so
    /// `.color(ImageColor(red: 255, green: 0, blue: 255))` trims
    /// transparency too, as imgproxy does). An image that is all border is
    /// returned whole. The border is found in the first frame; every frame
    /// is cut. Stops early under a ``WorkDeadline`` that passes.
    ///
    /// ```swift
    /// // A product shot on a white sweep, cut to the product.
    /// let product = shot.trimmed(.color(.white), threshold: 12)
    /// ```
    ///
    /// - Parameters:
    ///   - reference: The border's colour, or transparency.
    ///   - threshold: How far (in levels) a channel may stray and still be border.
    ///   - equalHorizontal: Cut the same from the left and the right (the smaller of the two).
    ///   - equalVertical: Cut the same from the top and the bottom.
    public func trimmed(_ reference: TrimReference = .topLeftPixel, threshold: Double = 10,
                        equalHorizontal: Bool = false, equalVertical: Bool = false) -> Image {
        precondition(threshold >= 0 && threshold.isFinite, "the threshold must be a finite number, 0 or more")
        guard let bounds = firstFrame.trimBounds(reference, threshold: threshold) else { return self }
        var (x0, x1, y0, y1) = bounds
        if equalHorizontal {
            let cut = Swift.min(x0, width - 1 - x1)
            (x0, x1) = (cut, width - 1 - cut)
        }
        if equalVertical {
            let cut = Swift.min(y0, height - 1 - y1)
            (y0, y1) = (cut, height - 1 - cut)
        }
        guard x0 > 0 || y0 > 0 || x1 < width - 1 || y1 < height - 1 else { return self }
        return cropped(x: x0, y: y0, width: x1 - x0 + 1, height: y1 - y0 + 1)
    }

    /// The first and last columns and rows that stand out from the border,
    /// in the first frame; `nil` when nothing does.
    private func trimBounds(_ reference: TrimReference, threshold: Double) -> (Int, Int, Int, Int)? {
        // The plane compared: RGB (transparency as magenta), or alpha alone.
        let plane: [UInt8], channels: Int, target: [Int]
        switch reference {
        case .transparency:
            guard pixelFormat.hasAlpha else { return nil }
            let rgba = converted(to: .rgba8).pixels
            plane = Swift.stride(from: 3, to: rgba.count, by: 4).map { rgba[$0] }
            (channels, target) = (1, [0])
        case .topLeftPixel, .color:
            let magenta = ImageColor(red: 255, green: 0, blue: 255)
            plane = (pixelFormat.hasAlpha ? flattened(onto: magenta) : self).converted(to: .rgb8).pixels
            channels = 3
            if case .color(let color) = reference {
                target = [Int(color.red), Int(color.green), Int(color.blue)]
            } else {
                target = [Int(plane[0]), Int(plane[1]), Int(plane[2])]
            }
        }
        let (width, height) = (self.width, self.height)
        let threshold = Int(Swift.min(threshold, 256).rounded(.down))
        let deadline = WorkDeadline.current
        /// Whether the median-filtered pixel at x, y stands out from the
        /// border: a channel's median of the 3x3 window is beyond the
        /// threshold exactly when at least 5 of its 9 values are beyond it
        /// on the same side, so no window is sorted.
        var calls = 0
        func standsOut(_ x: Int, _ y: Int) -> Bool {
            // Past the deadline every pixel stands out: the scans end at once.
            calls &+= 1
            if calls & 4095 == 0, deadline?.hasPassed == true { return true }
            for channel in 0..<channels {
                let low = target[channel] - threshold, high = target[channel] + threshold
                var above = 0, below = 0
                for dy in -1...1 {
                    let row = Swift.min(Swift.max(y + dy, 0), height - 1)
                    for dx in -1...1 {
                        let column = Swift.min(Swift.max(x + dx, 0), width - 1)
                        let value = Int(plane[(row * width + column) * channels + channel])
                        if value > high { above += 1 } else if value < low { below += 1 }
                    }
                }
                if above >= 5 || below >= 5 { return true }
            }
            return false
        }
        // Scan inward from each side; the work is the border's size, not the image's.
        guard let top = (0..<height).first(where: { y in (0..<width).contains { standsOut($0, y) } }) else { return nil }
        let bottom = (top..<height).reversed().first { y in (0..<width).contains { standsOut($0, y) } } ?? top
        let left = (0..<width).first { x in (top...bottom).contains { standsOut(x, $0) } } ?? 0
        let right = (left..<width).reversed().first { x in (top...bottom).contains { standsOut(x, $0) } } ?? left
        return (left, right, top, bottom)
    }
}

extension ImageProcessors {
    /// Cuts away a border, as ``Image/trimmed(_:threshold:equalHorizontal:equalVertical:)`` does.
    public struct Trim: ImageProcessing, Hashable {
        /// The border's colour, or transparency.
        public let reference: TrimReference
        /// How far a channel may stray and still be border, in levels.
        public let threshold: Double
        /// Whether the left and right cuts are equal.
        public let equalHorizontal: Bool
        /// Whether the top and bottom cuts are equal.
        public let equalVertical: Bool

        /// Creates the processor.
        public init(_ reference: TrimReference = .topLeftPixel, threshold: Double = 10,
                    equalHorizontal: Bool = false, equalVertical: Bool = false) {
            precondition(threshold >= 0 && threshold.isFinite, "the threshold must be a finite number, 0 or more")
            // A colour's alpha is ignored: left out of the identifier.
            if case .color(let color) = reference {
                self.reference = .color(ImageColor(red: color.red, green: color.green, blue: color.blue))
            } else {
                self.reference = reference
            }
            self.threshold = threshold
            self.equalHorizontal = equalHorizontal
            self.equalVertical = equalVertical
        }

        /// `trim(REFERENCE,THRESHOLD,H,V)`, such as `trim(topLeft,10.0,0,0)`.
        public var identifier: String {
            let reference = switch reference {
            case .topLeftPixel: "topLeft"
            case .color(let color): color.description
            case .transparency: "transparency"
            }
            return "trim(\(reference),\(threshold),\(equalHorizontal ? 1 : 0),\(equalVertical ? 1 : 0))"
        }

        public func process(_ image: Image) throws -> Image {
            image.trimmed(reference, threshold: threshold, equalHorizontal: equalHorizontal, equalVertical: equalVertical)
        }
    }
}
