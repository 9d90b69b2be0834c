import Foundation
import Imago

/// Fixture images made in code.
public enum TestImages {
    /// An RGBA image of one colour.
    public static func solid(
        width: Int,
        height: Int,
        red: UInt8 = 200,
        green: UInt8 = 80,
        blue: UInt8 = 40,
        alpha: UInt8 = 255
    ) -> Image {
        let pixel = [red, green, blue, alpha]
        return Image(width: width, height: height, pixelFormat: .rgba8, pixels: Array((0..<width * height).map { _ in pixel }.joined()))
    }

    /// An RGBA image whose red channel grows left to right and green top to
    /// bottom: every pixel differs, so crops and flips are visible.
    public static func gradient(width: Int, height: Int) -> Image {
        var pixels = [UInt8]()
        pixels.reserveCapacity(width * height * 4)
        for y in 0..<height {
            for x in 0..<width {
                pixels += [UInt8(x * 255 / max(1, width - 1)), UInt8(y * 255 / max(1, height - 1)), 128, 255]
            }
        }
        return Image(width: width, height: height, pixelFormat: .rgba8, pixels: pixels)
    }

    /// The first bytes of a PNG file: sniffed as PNG, but not a decodable image.
    public static let pngSignature = Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])
    /// The first bytes of a JPEG file.
    public static let jpegSignature = Data([0xFF, 0xD8, 0xFF, 0xE0])
    /// The first bytes of a GIF file.
    public static let gifSignature = Data("GIF89a".utf8)
    /// The first bytes of a WebP file.
    public static let webpSignature = Data("RIFF\u{0}\u{0}\u{0}\u{0}WEBPVP8 ".utf8)
}
