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
        let channels = pixelFormat.bytesPerPixel
        let frames = packed.frames.map { frame in
            var pixels = frame.pixels
            for _ in 0..<3 {
                pixels = Self.boxBlur(pixels, width: width, height: height, channels: channels, radius: radius, horizontal: true)
                pixels = Self.boxBlur(pixels, width: width, height: height, channels: channels, radius: radius, horizontal: false)
            }
            return ImageFrame(pixels: pixels, duration: frame.duration)
        }
        return derived(width: width, height: height, pixelFormat: pixelFormat, frames: frames)
    }

    /// One box-filter pass along rows or columns, with a running sum.
    private static func boxBlur(_ input: [UInt8], width: Int, height: Int, channels: Int, radius: Int, horizontal: Bool) -> [UInt8] {
        let (lines, length) = horizontal ? (height, width) : (width, height)
        let window = 2 * radius + 1
        var output = input
        let deadline = WorkDeadline.current
        input.withUnsafeBufferPointer { input in
            output.withUnsafeMutableBufferPointer { output in
                for line in 0..<lines {
                    if deadline?.hasPassed == true { break }
                    for channel in 0..<channels {
                        func index(_ position: Int) -> Int {
                            let clamped = min(max(position, 0), length - 1)
                            return (horizontal ? line * width + clamped : clamped * width + line) * channels + channel
                        }
                        var sum = 0
                        for position in -radius...radius { sum += Int(input[index(position)]) }
                        for position in 0..<length {
                            output[index(position)] = UInt8((sum + window / 2) / window)
                            sum += Int(input[index(position + radius + 1)]) - Int(input[index(position - radius)])
                        }
                    }
                }
            }
        }
        return output
    }
}
