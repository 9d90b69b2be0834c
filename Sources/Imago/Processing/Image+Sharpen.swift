extension Image {
    /// The image sharpened by an unsharp mask: each colour channel moves
    /// away from a Gaussian-like blur of `sigma` (three box passes) by
    /// `amount` times its difference from it, where that difference is
    /// more than `threshold` levels; alpha is kept. Every frame is
    /// processed. Stops early under a ``WorkDeadline`` that passes.
    ///
    /// ```swift
    /// // Crisp again after a large downscale.
    /// let thumbnail = photo.resized(toFit: 400, height: 400).sharpened(sigma: 0.8)
    /// ```
    ///
    /// - Parameters:
    ///   - sigma: The blur's spread, in pixels; 0 returns the image.
    ///   - amount: How far each value moves: 1 doubles the local contrast.
    ///   - threshold: The smallest difference from the blur that is
    ///     sharpened (0 to 255), to leave flat areas and noise alone.
    public func sharpened(sigma: Double, amount: Double = 1, threshold: Int = 0) -> Image {
        precondition(sigma >= 0 && sigma.isFinite, "sigma must be a finite number, 0 or more")
        precondition(amount.isFinite, "the amount must be finite")
        precondition((0...255).contains(threshold), "the threshold is a number of levels, 0 to 255")
        guard sigma > 0, amount != 0 else { return self }
        let packed = converted(to: pixelFormat)
        let soft = packed.blurred(radius: Self.boxRadius(sigma: sigma))
        let bpp = pixelFormat.bytesPerPixel
        let colourChannels = pixelFormat.hasAlpha ? bpp - 1 : bpp
        let rowBytes = width * bpp
        let deadline = WorkDeadline.current
        // The common case, in integers: twice the value less the blur.
        let plain = amount == 1 && threshold == 0
        let frames = zip(packed.frames, soft.frames).map { original, blurred in
            var pixels = original.pixels
            blurred.pixels.withUnsafeBufferPointer { soft in
                pixels.withUnsafeMutableBufferPointer { pixels in
                    for row in 0..<height {
                        if deadline?.hasPassed == true { break }
                        var index = row * rowBytes
                        for _ in 0..<width {
                            for channel in index..<index + colourChannels {
                                let value = Int(pixels[channel]), difference = value - Int(soft[channel])
                                if plain {
                                    pixels[channel] = UInt8(clamping: value + difference)
                                } else if abs(difference) > threshold {
                                    pixels[channel] = UInt8(clamping: value + Int((amount * Double(difference)).rounded()))
                                }
                            }
                            index += bpp
                        }
                    }
                }
            }
            return ImageFrame(pixels: pixels, duration: original.duration)
        }
        return derived(width: width, height: height, pixelFormat: pixelFormat, frames: frames)
    }

    /// The image blurred like a Gaussian of `sigma` pixels: three box
    /// passes of the radius r with σ ≈ √(r(r+1)), at least 1 (see
    /// ``blurred(radius:)``); 0 returns the image.
    ///
    /// ```swift
    /// let soft = photo.blurred(sigma: 4)
    /// ```
    public func blurred(sigma: Double) -> Image {
        precondition(sigma >= 0 && sigma.isFinite, "sigma must be a finite number, 0 or more")
        return sigma > 0 ? blurred(radius: Self.boxRadius(sigma: sigma)) : self
    }

    /// The radius of three box passes that blur like a Gaussian of
    /// `sigma`: sigma ≈ √(r(r+1)), at least 1.
    static func boxRadius(sigma: Double) -> Int {
        max(1, Int((((sigma * sigma) + 0.25).squareRoot() - 0.5).rounded()))
    }

    /// The image in square blocks of `blockSize` pixels from the top left,
    /// each the average of the pixels it covers (blocks at the right and
    /// bottom edges may be smaller). Every frame is processed. Stops early
    /// under a ``WorkDeadline`` that passes.
    ///
    /// ```swift
    /// let hidden = faceRegion.pixelated(blockSize: 12)
    /// ```
    ///
    /// - Precondition: `blockSize` is at least 1 (1 returns the image).
    public func pixelated(blockSize: Int) -> Image {
        precondition(blockSize >= 1, "a block is at least 1 pixel")
        let size = Swift.min(blockSize, Swift.max(width, height))
        guard size > 1 else { return self }
        let packed = converted(to: pixelFormat)
        let bpp = pixelFormat.bytesPerPixel
        let stride = width * bpp
        let deadline = WorkDeadline.current
        let frames = packed.frames.map { frame in
            var pixels = frame.pixels
            var sums = [Int](repeating: 0, count: bpp)
            for top in Swift.stride(from: 0, to: height, by: size) {
                if deadline?.hasPassed == true { break }
                let bottom = Swift.min(top + size, height)
                for left in Swift.stride(from: 0, to: width, by: size) {
                    let right = Swift.min(left + size, width)
                    for channel in 0..<bpp { sums[channel] = 0 }
                    for row in top..<bottom {
                        for column in left..<right {
                            for channel in 0..<bpp { sums[channel] += Int(pixels[row * stride + column * bpp + channel]) }
                        }
                    }
                    let count = (bottom - top) * (right - left)
                    for row in top..<bottom {
                        for column in left..<right {
                            for channel in 0..<bpp { pixels[row * stride + column * bpp + channel] = UInt8((sums[channel] + count / 2) / count) }
                        }
                    }
                }
            }
            return ImageFrame(pixels: pixels, duration: frame.duration)
        }
        return derived(width: width, height: height, pixelFormat: pixelFormat, frames: frames)
    }
}

extension ImageProcessors {
    /// An unsharp mask, as ``Image/sharpened(sigma:amount:threshold:)`` applies it.
    public struct Sharpen: ImageProcessing, Hashable {
        /// The blur's spread, in pixels.
        public let sigma: Double
        /// How far each value moves from the blur.
        public let amount: Double
        /// The smallest difference that is sharpened, in levels.
        public let threshold: Int

        /// Creates the processor.
        public init(sigma: Double, amount: Double = 1, threshold: Int = 0) {
            precondition(sigma >= 0 && sigma.isFinite, "sigma must be a finite number, 0 or more")
            precondition(amount.isFinite, "the amount must be finite")
            precondition((0...255).contains(threshold), "the threshold is a number of levels, 0 to 255")
            self.sigma = sigma
            self.amount = amount
            self.threshold = threshold
        }

        /// `sharpen(SIGMA,AMOUNT,THRESHOLD)`.
        public var identifier: String { "sharpen(\(sigma),\(amount),\(threshold))" }

        public func process(_ image: Image) throws -> Image {
            image.sharpened(sigma: sigma, amount: amount, threshold: threshold)
        }
    }

    /// Square blocks of averaged pixels, as ``Image/pixelated(blockSize:)`` makes them.
    public struct Pixelate: ImageProcessing, Hashable {
        /// The side of a block, in pixels.
        public let blockSize: Int

        /// Creates the processor.
        public init(blockSize: Int) {
            precondition(blockSize >= 1, "a block is at least 1 pixel")
            self.blockSize = blockSize
        }

        /// `pixelate(SIZE)`.
        public var identifier: String { "pixelate(\(blockSize))" }

        public func process(_ image: Image) throws -> Image {
            image.pixelated(blockSize: blockSize)
        }
    }
}
