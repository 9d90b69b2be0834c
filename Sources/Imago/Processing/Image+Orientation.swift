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
