extension Image {
    /// The image with every frame converted to `format`, rows packed
    /// (`bytesPerRow == width * format.bytesPerPixel`).
    ///
    /// Colour to gray uses ITU-R 601 luma; gray to colour repeats the value;
    /// a missing alpha becomes opaque; a dropped alpha is discarded (no
    /// compositing). Returns `self` when nothing changes.
    public func converted(to format: PixelFormat) -> Image {
        let packedStride = width * format.bytesPerPixel
        if format == pixelFormat && bytesPerRow == packedStride { return self }
        let source = pixelFormat
        let inBPP = source.bytesPerPixel, outBPP = format.bytesPerPixel
        let frames = frames.map { frame in
            let pixels = [UInt8](pixelCapacity: packedStride * height) { out, count in
                frame.pixels.withUnsafeBufferPointer { input in
                    for y in 0..<height {
                        var from = y * bytesPerRow
                        var to = y * packedStride
                        for _ in 0..<width {
                            let r, g, b, a: UInt8
                            switch source {
                            case .rgba8: (r, g, b, a) = (input[from], input[from + 1], input[from + 2], input[from + 3])
                            case .rgb8: (r, g, b, a) = (input[from], input[from + 1], input[from + 2], 255)
                            case .grayAlpha8: (r, g, b, a) = (input[from], input[from], input[from], input[from + 1])
                            case .gray8: (r, g, b, a) = (input[from], input[from], input[from], 255)
                            }
                            switch format {
                            case .rgba8: out[to] = r; out[to + 1] = g; out[to + 2] = b; out[to + 3] = a
                            case .rgb8: out[to] = r; out[to + 1] = g; out[to + 2] = b
                            case .grayAlpha8: out[to] = Self.luma(r, g, b); out[to + 1] = a
                            case .gray8: out[to] = Self.luma(r, g, b)
                            }
                            from += inBPP
                            to += outBPP
                        }
                    }
                }
                count = packedStride * height
            }
            return ImageFrame(pixels: pixels, duration: frame.duration)
        }
        return derived(width: width, height: height, pixelFormat: format, frames: frames)
    }

    /// ITU-R 601 luma, rounded.
    private static func luma(_ r: UInt8, _ g: UInt8, _ b: UInt8) -> UInt8 {
        let red: UInt32 = 77 * UInt32(r)
        let green: UInt32 = 150 * UInt32(g)
        let blue: UInt32 = 29 * UInt32(b)
        return UInt8((red + green + blue + 128) >> 8)
    }
}
