import Imago

/// Images made in code for the processing operations' tests (canvas,
/// sharpen, orientation, trim, crop, composite, processors, deadlines),
/// the library's and the image server's alike.
public enum ProcessingFixtures {
    /// A `width` x `height` image of one pixel value, in any format.
    public static func uniform(width: Int, height: Int, _ pixel: [UInt8], format: PixelFormat) -> Image {
        precondition(pixel.count == format.bytesPerPixel)
        return Image(width: width, height: height, pixelFormat: format,
                     pixels: Array(repeatElement(pixel, count: width * height).joined()))
    }

    /// An RGB image whose pixel at x, y is `[x, y, (7x + 13y) % 256]`:
    /// every pixel of an image up to 256 on a side differs, and says where
    /// it came from.
    public static func numbered(width: Int, height: Int) -> Image {
        var pixels = [UInt8]()
        pixels.reserveCapacity(width * height * 3)
        for y in 0..<height {
            for x in 0..<width { pixels += [UInt8(x), UInt8(y), UInt8((7 * x + 13 * y) % 256)] }
        }
        return Image(width: width, height: height, pixelFormat: .rgb8, pixels: pixels)
    }

    /// A photo-like RGBA image (the server tests' fixture): red grows across,
    /// green down, blue wraps along the diagonals. With `varyingAlpha`, the
    /// alpha goes from 255 down to 192 across every 64 columns.
    public static func photo(width: Int = 300, height: Int = 200, varyingAlpha: Bool = false) -> Image {
        var pixels = [UInt8]()
        pixels.reserveCapacity(width * height * 4)
        for y in 0..<height {
            for x in 0..<width {
                pixels += [UInt8(x * 255 / width), UInt8(y * 255 / height), UInt8((x + y) % 256),
                           varyingAlpha ? UInt8(255 - x % 64) : 255]
            }
        }
        return Image(width: width, height: height, pixels: pixels)
    }

    /// `image` (as RGBA) centred on an opaque white canvas `border` pixels larger on each side.
    public static func framed(_ image: Image, border: Int = 20) -> Image {
        let rgba = image.converted(to: .rgba8)
        let width = image.width + 2 * border
        var pixels = [UInt8](repeating: 255, count: width * (image.height + 2 * border) * 4)
        for y in 0..<image.height {
            let from = y * image.width * 4, to = ((y + border) * width + border) * 4
            pixels.replaceSubrange(to..<to + image.width * 4, with: rgba.pixels[from..<from + image.width * 4])
        }
        return Image(width: width, height: image.height + 2 * border, pixelFormat: .rgba8, pixels: pixels)
    }

    /// 350x250 white, with five nested rectangles of darker gray (imgproxy's
    /// trim fixture): the k-th starts 15k - 5 pixels from the left and top
    /// edges and 15k + 5 from the right and bottom ones, and differs from
    /// white by 50, 125, 175, 210 and 240.
    public static let rings: Image = {
        let (width, height) = (350, 250)
        var pixels = [UInt8](repeating: 255, count: width * height * 3)
        for (k, difference) in zip(1...5, [50, 125, 175, 210, 240]) {
            let near = 15 * k - 5, far = 15 * k + 5
            for y in near..<(height - far) {
                for x in near..<(width - far) {
                    for channel in 0..<3 { pixels[(y * width + x) * 3 + channel] = UInt8(255 - difference) }
                }
            }
        }
        return Image(width: width, height: height, pixelFormat: .rgb8, pixels: pixels)
    }()

    /// A 60x20 RGBA image: a flat gray left part (40 columns), and a
    /// detailed right part (20 columns of pseudo-random colours).
    public static func flatThenDetailed() -> Image {
        var pixels: [UInt8] = []
        var seed: UInt32 = 12345
        for _ in 0..<20 {
            for x in 0..<60 {
                if x < 40 {
                    pixels += [128, 128, 128, 255]
                } else {
                    seed = seed &* 1_103_515_245 &+ 12345
                    let value = UInt8(truncatingIfNeeded: seed >> 16)
                    pixels += [value, value &+ 60, value &+ 120, 255]
                }
            }
        }
        return Image(width: 60, height: 20, pixelFormat: .rgba8, pixels: pixels)
    }

    /// The pixel at `x`, `y` of frame `frame` (``Image/pixel(x:y:)`` reads the first only).
    public static func pixel(_ image: Image, frame: Int, x: Int, y: Int) -> [UInt8] {
        let bpp = image.pixelFormat.bytesPerPixel
        let start = y * image.bytesPerRow + x * bpp
        return Array(image.frames[frame].pixels[start..<start + bpp])
    }

    /// A `frames`-frame animation of `width` x `height` RGB frames, frame `k`
    /// all `colours[k]`, shown for `0.1 * (k + 1)` seconds, looping twice.
    public static func animation(width: Int, height: Int, colours: [[UInt8]]) -> Image {
        let frames = colours.enumerated().map { k, colour in
            ImageFrame(pixels: Array(repeatElement(colour, count: width * height).joined()), duration: 0.1 * Double(k + 1))
        }
        return Image(width: width, height: height, pixelFormat: .rgb8, frames: frames, loopCount: 2)
    }
}
