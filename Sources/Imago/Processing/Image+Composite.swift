/// Where ``Image/composited(with:at:opacity:linearLight:)`` draws an overlay.
public enum OverlayPosition: Sendable, Hashable {
    /// At a gravity, moved inward from its edges by the offsets in pixels
    /// (from the centre: right and down); the overlay may hang over the
    /// edges, and what falls outside is cut.
    case gravity(Gravity, offsetX: Int = 0, offsetY: Int = 0)
    /// With its top-left corner at `x`, `y` (negative values hang over the
    /// top and left edges).
    case point(x: Int, y: Int)
    /// Repeated across the whole image, an odd number of times each way,
    /// centred, with `spacingX` and `spacingY` pixels between copies.
    case tiled(spacingX: Int = 0, spacingY: Int = 0)
}

extension Image {
    /// The image with `overlay` drawn over it (Porter-Duff *over*), its
    /// alpha times `opacity`: a watermark, a badge, a frame. The result is
    /// ``PixelFormat/rgba8`` when the image has alpha, else
    /// ``PixelFormat/rgb8``. The overlay's first frame is drawn on every
    /// frame. Stops early under a ``WorkDeadline`` that passes.
    ///
    /// ```swift
    /// // A logo at 60% in the bottom-right corner, 16 px from the edges.
    /// let marked = photo.composited(with: logo, at: .gravity(.southEast, offsetX: 16, offsetY: 16), opacity: 0.6)
    /// // The logo repeated over the whole image, 40 px apart.
    /// let proof = photo.composited(with: logo, at: .tiled(spacingX: 40, spacingY: 40), opacity: 0.3)
    /// ```
    ///
    /// - Parameters:
    ///   - overlay: The image drawn on top, in any pixel format.
    ///   - position: Where it is drawn.
    ///   - opacity: From 0 (nothing is drawn) to 1.
    ///   - linearLight: Blend light intensities (decoded from sRGB, encoded
    ///     after), as a camera would see one light over another, instead of
    ///     the stored values (as browsers and imgproxy blend).
    public func composited(with overlay: Image, at position: OverlayPosition = .gravity(.center),
                           opacity: Double = 1, linearLight: Bool = false) -> Image {
        precondition((0...1).contains(opacity), "the opacity is from 0 to 1")
        let base = converted(to: pixelFormat.hasAlpha ? .rgba8 : .rgb8)
        guard opacity > 0 else { return derived(width: width, height: height, pixelFormat: base.pixelFormat, frames: base.frames) }
        let mark = overlay.converted(to: .rgba8)
        let layer: Image, origin: (x: Int, y: Int)
        switch position {
        case .tiled(let spacingX, let spacingY):
            precondition(spacingX >= 0 && spacingY >= 0, "the spacing between tiles cannot be negative")
            // The tiles do not overlap: drawn once as a layer the size of
            // the image, then composited once, the work is the image's
            // pixels whatever the number of tiles.
            layer = Self.tiledLayer(of: mark, width: width, height: height,
                                    gap: (Swift.min(width, spacingX), Swift.min(height, spacingY)))
            origin = (0, 0)
        case .gravity(let gravity, let offsetX, let offsetY):
            layer = mark
            origin = gravity.origin(ofWidth: mark.width, height: mark.height, inWidth: width, height: height,
                                    offsetX: offsetX, offsetY: offsetY, clamped: false)
        case .point(let x, let y):
            (layer, origin) = (mark, (Gravity.held(x), Gravity.held(y)))
        }
        let frames = base.frames.map { frame in
            ImageFrame(pixels: Self.drawing(layer, over: frame.pixels, of: base, at: origin,
                                            opacity: opacity, linearLight: linearLight),
                       duration: frame.duration)
        }
        return derived(width: width, height: height, pixelFormat: base.pixelFormat, frames: frames)
    }

    /// A transparent RGBA `width` x `height` layer with `stamp` (RGBA)
    /// repeated `gap` apart, an odd number of times each way, centred: each
    /// of the stamp's rows is laid out once across the width, then copied
    /// to every other row it falls on.
    private static func tiledLayer(of stamp: Image, width: Int, height: Int, gap: (x: Int, y: Int)) -> Image {
        let tileWidth = stamp.width + gap.x, tileHeight = stamp.height + gap.y
        func count(_ side: Int, _ tile: Int) -> Int {
            let needed = (side + tile - 1) / tile
            return needed % 2 == 0 ? needed + 1 : needed
        }
        // The tile is the stamp with the gap as a transparent margin split around it.
        let origin = (x: gap.x / 2 - (count(width, tileWidth) * tileWidth - width) / 2,
                      y: gap.y / 2 - (count(height, tileHeight) * tileHeight - height) / 2)
        let rowBytes = width * 4
        var pixels = [UInt8](repeating: 0, count: rowBytes * height)
        // The columns of the layer each stamp column lands on, as (layer x, stamp x) runs.
        var runs: [(to: Int, from: Int, count: Int)] = []
        var x = origin.x
        while x < width {
            let first = Swift.max(0, -x), last = Swift.min(stamp.width, width - x)
            if first < last { runs.append((x + first, first, last - first)) }
            x += tileWidth
        }
        let deadline = WorkDeadline.current
        // The layer row where each stamp row was first drawn, to copy from after.
        var drawn = [Int](repeating: -1, count: stamp.height)
        stamp.pixels.withUnsafeBufferPointer { input in
            pixels.withUnsafeMutableBufferPointer { output in
                let layer = output.baseAddress!
                for row in stride(from: Swift.max(0, origin.y), to: height, by: 1) {
                    if deadline?.hasPassed == true { break }
                    let within = (row - origin.y) % tileHeight
                    guard within < stamp.height else { continue }
                    let target = layer + row * rowBytes
                    if drawn[within] >= 0 {
                        target.update(from: layer + drawn[within] * rowBytes, count: rowBytes)
                    } else {
                        let from = input.baseAddress! + within * stamp.bytesPerRow
                        for run in runs { (target + run.to * 4).update(from: from + run.from * 4, count: run.count * 4) }
                        drawn[within] = row
                    }
                }
            }
        }
        return Image(width: width, height: height, pixelFormat: .rgba8, pixels: pixels)
    }

    /// `pixels` (a frame of `base`, RGB or RGBA) with `mark` (RGBA) drawn at
    /// `origin` with *over*, its alpha times `opacity`; the parts outside are cut.
    private static func drawing(_ mark: Image, over pixels: [UInt8], of base: Image, at origin: (x: Int, y: Int),
                                opacity: Double, linearLight: Bool) -> [UInt8] {
        let (x, y) = origin
        guard x < base.width, y < base.height, x > -mark.width, y > -mark.height else { return pixels }
        let firstColumn = Swift.max(0, -x), lastColumn = Swift.min(mark.width, base.width - x)
        let firstRow = Swift.max(0, -y), lastRow = Swift.min(mark.height, base.height - y)
        let bpp = base.pixelFormat.bytesPerPixel
        let hasAlpha = bpp == 4
        // The mark's alpha times the opacity, in 0...255 * 255.
        let scale = UInt32((opacity * 255).rounded())
        var pixels = pixels
        let deadline = WorkDeadline.current
        LinearLight.decoded.withUnsafeBufferPointer { light in
            LinearLight.encoded.withUnsafeBufferPointer { table in
                mark.pixels.withUnsafeBufferPointer { input in
                    pixels.withUnsafeMutableBufferPointer { output in
                        for row in firstRow..<lastRow {
                            if deadline?.hasPassed == true { break }
                            var from = row * mark.bytesPerRow + firstColumn * 4
                            var to = (row + y) * base.bytesPerRow + (firstColumn + x) * bpp
                            for _ in firstColumn..<lastColumn {
                                let markAlpha = UInt32(input[from + 3]) * scale  // 0...65025
                                if markAlpha > 0 {
                                    // out_a = m_a + b_a (1 - m_a); out_c = (m_c m_a + b_c b_a (1 - m_a)) / out_a.
                                    let backAlpha = hasAlpha ? UInt32(output[to + 3]) * 255 : 65025
                                    let backPart = backAlpha * (65025 - markAlpha) / 65025
                                    let outAlpha = markAlpha + backPart
                                    if linearLight {
                                        let m = Float(markAlpha) / Float(outAlpha), b = Float(backPart) / Float(outAlpha)
                                        for channel in 0..<3 {
                                            let value = light[Int(input[from + channel])] * m + light[Int(output[to + channel])] * b
                                            output[to + channel] = LinearLight.encode(value, table)
                                        }
                                    } else if hasAlpha {
                                        for channel in 0..<3 {
                                            let value = (UInt64(input[from + channel]) * UInt64(markAlpha)
                                                + UInt64(output[to + channel]) * UInt64(backPart) + UInt64(outAlpha / 2)) / UInt64(outAlpha)
                                            output[to + channel] = UInt8(Swift.min(255, value))
                                        }
                                    } else {
                                        for channel in 0..<3 {
                                            let value = UInt32(input[from + channel]) * markAlpha
                                                + UInt32(output[to + channel]) * (65025 - markAlpha)
                                            output[to + channel] = UInt8((value + 32512) / 65025)
                                        }
                                    }
                                    if hasAlpha { output[to + 3] = UInt8((outAlpha + 127) / 255) }
                                }
                                from += 4
                                to += bpp
                            }
                        }
                    }
                }
            }
        }
        return pixels
    }
}

extension ImageProcessors {
    /// Draws an overlay over the image, as ``Image/composited(with:at:opacity:linearLight:)`` does.
    public struct Composite: ImageProcessing, Hashable {
        /// The image drawn on top. Setting another names it by its pixels'
        /// digest again, unless the processor was given an `id`.
        public var overlay: Image {
            didSet { if explicitID == nil { overlayID = Self.digest(of: overlay) } }
        }
        /// Where it is drawn.
        public var position: OverlayPosition
        /// Its opacity, from 0 to 1.
        public var opacity: Double
        /// Whether light intensities are blended instead of stored values.
        public var linearLight: Bool
        /// What names the overlay in ``identifier``: the `id` given, else a
        /// digest of its pixels.
        public private(set) var overlayID: String
        /// The `id` given at creation.
        private let explicitID: String?

        /// Creates the processor.
        ///
        /// - Parameter id: A name for the overlay that changes whenever its
        ///   pixels do (such as `"logo-v2"`); without one, the overlay is
        ///   named by a digest of its pixels, computed here, once.
        public init(overlay: Image, id: String? = nil, at position: OverlayPosition = .gravity(.center),
                    opacity: Double = 1, linearLight: Bool = false) {
            precondition((0...1).contains(opacity), "the opacity is from 0 to 1")
            self.overlay = overlay
            self.position = position
            self.opacity = opacity
            self.linearLight = linearLight
            self.explicitID = id
            self.overlayID = id ?? Self.digest(of: overlay)
        }

        /// The first 16 hex digits of a SHA-256 of the overlay's size, format and pixels.
        private static func digest(of image: Image) -> String {
            let packed = image.converted(to: image.pixelFormat)
            let header = Array("\(image.width)x\(image.height),\(image.pixelFormat);".utf8)
            return String(SHA256.hex(of: header + packed.pixels).prefix(16))
        }

        /// `composite(ID,POSITION,OPACITY[,linear])`.
        public var identifier: String {
            let position = switch position {
            case .gravity(let gravity, let x, let y): "\(gravity.rawValue)\(x == 0 && y == 0 ? "" : "+\(x)+\(y)")"
            case .point(let x, let y): "at\(x),\(y)"
            case .tiled(let x, let y): "tiled\(x)x\(y)"
            }
            return "composite(\(overlayID),\(position),\(opacity)\(linearLight ? ",linear" : ""))"
        }

        public func process(_ image: Image) throws -> Image {
            image.composited(with: overlay, at: position, opacity: opacity, linearLight: linearLight)
        }

        public static func == (lhs: Self, rhs: Self) -> Bool { lhs.identifier == rhs.identifier }
        public func hash(into hasher: inout Hasher) { hasher.combine(identifier) }
    }
}
