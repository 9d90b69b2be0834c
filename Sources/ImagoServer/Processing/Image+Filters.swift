#if Server
import Imago

extension Image {
    /// The image sharpened by an unsharp mask: each colour channel plus its
    /// difference from a blur of `radius` (three box passes), clamped; alpha
    /// is kept. Still images only: the first frame.
    func sharpened(radius: Int) -> Image {
        let packed = converted(to: pixelFormat)
        let blurred = packed.blurred(radius: radius)
        let bpp = pixelFormat.bytesPerPixel
        let colourChannels = pixelFormat.hasAlpha ? bpp - 1 : bpp
        let original = packed.pixels, soft = blurred.pixels
        var pixels = original
        let deadline = WorkDeadline.current
        let rowBytes = width * bpp
        for row in 0..<height {
            if deadline?.hasPassed == true { break }
            for index in row * rowBytes..<(row + 1) * rowBytes where index % bpp < colourChannels {
                let value = 2 * Int(original[index]) - Int(soft[index])
                pixels[index] = UInt8(clamping: value)
            }
        }
        var result = Image(width: width, height: height, pixelFormat: pixelFormat, pixels: pixels)
        result.colorProfile = colorProfile
        result.isPartial = isPartial
        return result
    }

    /// The image in square blocks of `blockSize` pixels from the top left,
    /// each the average of the pixels it covers (blocks at the right and
    /// bottom edges may be smaller). Still images only: the first frame.
    func pixelated(blockSize: Int) -> Image {
        let size = Swift.min(blockSize, Swift.max(width, height))
        guard size > 1 else { return self }
        let packed = converted(to: pixelFormat)
        let bpp = pixelFormat.bytesPerPixel
        let stride = width * bpp
        var pixels = packed.pixels
        var sums = [Int](repeating: 0, count: bpp)
        let deadline = WorkDeadline.current
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
        var result = Image(width: width, height: height, pixelFormat: pixelFormat, pixels: pixels)
        result.colorProfile = colorProfile
        result.isPartial = isPartial
        return result
    }
}
#endif
