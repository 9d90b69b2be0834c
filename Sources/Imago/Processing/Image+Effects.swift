extension Image {
    /// The image with its corners cut to a quarter circle of `radius`
    /// pixels, anti-aliased, as ``PixelFormat/rgba8``. Every frame is processed.
    /// Stops early under a ``WorkDeadline`` that passes.
    public func roundingCorners(radius: Int) -> Image {
        let source = converted(to: .rgba8)
        let r = Double(min(radius, min(width, height) / 2))
        guard r > 0 else { return source }
        let deadline = WorkDeadline.current
        let frames = source.frames.map { frame in
            var pixels = frame.pixels
            for y in 0..<height {
                if deadline?.hasPassed == true { break }
                for x in 0..<width {
                    // Distance from the nearest corner's centre, for pixels in a corner square.
                    let cx = Double(x) + 0.5 < r ? r : (Double(x) + 0.5 > Double(width) - r ? Double(width) - r : -1)
                    let cy = Double(y) + 0.5 < r ? r : (Double(y) + 0.5 > Double(height) - r ? Double(height) - r : -1)
                    guard cx >= 0, cy >= 0 else { continue }
                    let dx = Double(x) + 0.5 - cx, dy = Double(y) + 0.5 - cy
                    let coverage = min(1, max(0, r - (dx * dx + dy * dy).squareRoot() + 0.5))
                    let alphaIndex = (y * width + x) * 4 + 3
                    pixels[alphaIndex] = UInt8((Double(pixels[alphaIndex]) * coverage).rounded())
                }
            }
            return ImageFrame(pixels: pixels, duration: frame.duration)
        }
        return derived(width: width, height: height, pixelFormat: .rgba8, frames: frames)
    }

    /// The image blurred by three passes of a box filter of `radius` pixels
    /// each way (edges clamp). Every frame is processed. Stops early under
    /// a ``WorkDeadline`` that passes.
    public func blurred(radius: Int) -> Image {
        guard radius > 0 else { return self }
        let packed = converted(to: pixelFormat)
        let blur = BoxBlur(width: width, height: height, channels: pixelFormat.bytesPerPixel, radius: radius)
        let frames = packed.frames.map { frame in
            ImageFrame(pixels: blur.applied(to: frame.pixels), duration: frame.duration)
        }
        return derived(width: width, height: height, pixelFormat: pixelFormat, frames: frames)
    }
}
