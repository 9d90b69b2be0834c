extension Image {
    /// The image placed with its top-left corner at `x`, `y` on a `width` x
    /// `height` canvas filled with `background`; whatever falls outside the
    /// canvas is cut. Every frame is processed.
    ///
    /// The result has alpha when the image has it or the background is not
    /// opaque (``ImageColor/clear``, the default, adds it); it is gray when
    /// the image is gray and the background is a gray.
    ///
    /// ```swift
    /// // A 10 px white frame around the image.
    /// let framed = image.placed(onWidth: image.width + 20, height: image.height + 20, x: 10, y: 10, background: .white)
    /// ```
    ///
    /// - Precondition: `width` and `height` are positive.
    public func placed(onWidth width: Int, height: Int, x: Int, y: Int, background: ImageColor = .clear) -> Image {
        precondition(width > 0 && height > 0, "the canvas must not be empty")
        // A place beyond any canvas is held at ±2^40, so no sum traps.
        let x = Gravity.held(x), y = Gravity.held(y)
        let needsAlpha = pixelFormat.hasAlpha || !background.isOpaque
        let gray = pixelFormat.isGray && background.isGray
        let format: PixelFormat = switch (gray, needsAlpha) {
        case (true, false): .gray8
        case (true, true): .grayAlpha8
        case (false, false): .rgb8
        case (false, true): .rgba8
        }
        let source = converted(to: format)
        let bpp = format.bytesPerPixel
        let fill = background.channels(for: format)
        let rowStride = width * bpp
        // The rows and columns of the image that land on the canvas.
        let firstColumn = max(0, -x), lastColumn = min(source.width, width - x)
        let firstRow = max(0, -y), lastRow = min(source.height, height - y)
        let deadline = WorkDeadline.current
        // One row of the fill, copied where the canvas shows.
        let fillRow = Array(repeatElement(fill, count: width).joined())
        let visible = firstColumn < lastColumn && firstRow < lastRow
        let frames = source.frames.map { frame in
            let pixels = [UInt8](pixelCapacity: rowStride * height) { output, count in
                frame.pixels.withUnsafeBufferPointer { input in
                    fillRow.withUnsafeBufferPointer { fillRow in
                        let canvas = output.baseAddress!, background = fillRow.baseAddress!
                        for row in 0..<height {
                            let target = canvas + row * rowStride
                            let imageRow = row - y
                            guard visible, imageRow >= firstRow, imageRow < lastRow, deadline?.hasPassed != true else {
                                target.update(from: background, count: rowStride)
                                continue
                            }
                            // Fill to the left of the image, the image's row, fill to the right.
                            let left = (firstColumn + x) * bpp, right = (lastColumn + x) * bpp
                            target.update(from: background, count: left)
                            target.advanced(by: left).update(from: input.baseAddress! + imageRow * source.bytesPerRow + firstColumn * bpp,
                                                             count: right - left)
                            target.advanced(by: right).update(from: background + right, count: rowStride - right)
                        }
                    }
                }
                count = rowStride * height
            }
            return ImageFrame(pixels: pixels, duration: frame.duration)
        }
        return derived(width: width, height: height, pixelFormat: format, frames: frames)
    }

    /// The image on a `width` x `height` canvas of `background`, placed at
    /// `gravity` (centred by default): a canvas smaller than the image on a
    /// side cuts it there, around the gravity. Every frame is processed.
    ///
    /// ```swift
    /// // A square for a grid of thumbnails, the image centred on white.
    /// let side = max(image.width, image.height)
    /// let square = image.extended(toWidth: side, height: side, background: .white)
    /// ```
    public func extended(toWidth width: Int, height: Int, gravity: Gravity = .center, background: ImageColor = .clear) -> Image {
        let origin = gravity.origin(ofWidth: self.width, height: self.height, inWidth: width, height: height, clamped: false)
        return placed(onWidth: width, height: height, x: origin.x, y: origin.y, background: background)
    }

    /// The image with `top`, `right`, `bottom` and `left` pixels of
    /// `background` added around it. Every frame is processed.
    ///
    /// ```swift
    /// let padded = image.padded(top: 8, right: 8, bottom: 8, left: 8, background: .white)
    /// ```
    ///
    /// - Precondition: no side is negative.
    public func padded(top: Int, right: Int, bottom: Int, left: Int, background: ImageColor = .clear) -> Image {
        precondition(top >= 0 && right >= 0 && bottom >= 0 && left >= 0, "padding cannot be negative")
        return placed(onWidth: width + left + right, height: height + top + bottom, x: left, y: top, background: background)
    }

    /// The image composited over an opaque `background` (its alpha is
    /// ignored), without alpha: ``PixelFormat/gray8`` for a gray image on a
    /// gray, else ``PixelFormat/rgb8``; `self` when the image has no alpha.
    /// Every frame is processed.
    ///
    /// ```swift
    /// // A PNG with transparency, ready for JPEG.
    /// let opaque = logo.flattened(onto: .white)
    /// ```
    public func flattened(onto background: ImageColor = .white) -> Image {
        guard pixelFormat.hasAlpha else { return self }
        let gray = pixelFormat == .grayAlpha8 && background.isGray
        let format: PixelFormat = gray ? .gray8 : .rgb8
        let source = converted(to: gray ? .grayAlpha8 : .rgba8)
        let inBPP = source.pixelFormat.bytesPerPixel, outBPP = format.bytesPerPixel
        let back = [UInt32(background.red), UInt32(background.green), UInt32(background.blue)]
        let deadline = WorkDeadline.current
        let frames = source.frames.map { frame in
            var pixels = [UInt8](repeating: 0, count: width * height * outBPP)
            frame.pixels.withUnsafeBufferPointer { input in
                pixels.withUnsafeMutableBufferPointer { output in
                    for row in 0..<height {
                        if deadline?.hasPassed == true { break }
                        var from = row * source.bytesPerRow
                        var to = row * width * outBPP
                        for _ in 0..<width {
                            let alpha = UInt32(input[from + inBPP - 1])
                            for channel in 0..<outBPP {
                                let value = UInt32(input[from + channel]) * alpha + back[channel] * (255 - alpha)
                                output[to + channel] = UInt8((value + 127) / 255)
                            }
                            from += inBPP
                            to += outBPP
                        }
                    }
                }
            }
            return ImageFrame(pixels: pixels, duration: frame.duration)
        }
        return derived(width: width, height: height, pixelFormat: format, frames: frames)
    }
}

extension ImageProcessors {
    /// Places the image on a canvas of a given size at a gravity, as
    /// ``Image/extended(toWidth:height:gravity:background:)`` does.
    public struct Extend: ImageProcessing, Hashable {
        /// The canvas width.
        public let width: Int
        /// The canvas height.
        public let height: Int
        /// Where the image sits on the canvas.
        public let gravity: Gravity
        /// The canvas colour.
        public let background: ImageColor

        /// Creates the processor.
        public init(width: Int, height: Int, gravity: Gravity = .center, background: ImageColor = .clear) {
            precondition(width > 0 && height > 0, "the canvas must not be empty")
            self.width = width
            self.height = height
            self.gravity = gravity
            self.background = background
        }

        /// `extend(WxH,GRAVITY,#rrggbbaa)`.
        public var identifier: String { "extend(\(width)x\(height),\(gravity.rawValue),\(background))" }

        public func process(_ image: Image) throws -> Image {
            image.extended(toWidth: width, height: height, gravity: gravity, background: background)
        }
    }

    /// Adds space around the image, as ``Image/padded(top:right:bottom:left:background:)`` does.
    public struct Pad: ImageProcessing, Hashable {
        /// The pixels added above.
        public let top: Int
        /// The pixels added to the right.
        public let right: Int
        /// The pixels added below.
        public let bottom: Int
        /// The pixels added to the left.
        public let left: Int
        /// The colour of the space.
        public let background: ImageColor

        /// Creates the processor.
        public init(top: Int, right: Int, bottom: Int, left: Int, background: ImageColor = .clear) {
            precondition(top >= 0 && right >= 0 && bottom >= 0 && left >= 0, "padding cannot be negative")
            (self.top, self.right, self.bottom, self.left) = (top, right, bottom, left)
            self.background = background
        }

        /// Creates the processor with the same space on every side.
        public init(_ all: Int, background: ImageColor = .clear) {
            self.init(top: all, right: all, bottom: all, left: all, background: background)
        }

        /// `pad(TOP,RIGHT,BOTTOM,LEFT,#rrggbbaa)`.
        public var identifier: String { "pad(\(top),\(right),\(bottom),\(left),\(background))" }

        public func process(_ image: Image) throws -> Image {
            image.padded(top: top, right: right, bottom: bottom, left: left, background: background)
        }
    }

    /// Composites transparent pixels over a colour, as ``Image/flattened(onto:)`` does.
    public struct Flatten: ImageProcessing, Hashable {
        /// The colour under the image (its alpha is ignored).
        public let background: ImageColor

        /// Creates the processor.
        public init(background: ImageColor = .white) {
            // Its alpha is ignored: left out of the identifier.
            self.background = ImageColor(red: background.red, green: background.green, blue: background.blue)
        }

        /// `flatten(#rrggbbaa)`.
        public var identifier: String { "flatten(\(background))" }

        public func process(_ image: Image) throws -> Image {
            image.flattened(onto: background)
        }
    }
}
