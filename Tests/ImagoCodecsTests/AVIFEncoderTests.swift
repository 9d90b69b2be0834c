import Foundation
import Imago
import ImagoCodecs
import ImagoTesting
import ImagoTestingSupport
import Testing

/// AVIF output through libheif and libaom, read back by Imago's
/// own AVIF decoder (libavif with dav1d).
@Suite struct AVIFEncoderTests {
    /// A 40x24 card: gradients, saturated bars and a gray ramp.
    static func card(alpha: Bool) -> Image {
        let width = 40, height = 24
        let format: PixelFormat = alpha ? .rgba8 : .rgb8
        var pixels: [UInt8] = []
        for y in 0..<height {
            for x in 0..<width {
                let bar = [[230, 40, 30], [30, 200, 60], [40, 60, 220], [240, 240, 240]][x / 10]
                let rgb = y < 12 ? bar : [x * 6, x * 6, x * 6]
                pixels += rgb.map { UInt8(min($0 + y, 255)) }
                if alpha { pixels.append(UInt8(y < 8 ? 255 : y * 10)) }
            }
        }
        return Image(width: width, height: height, pixelFormat: format, pixels: pixels)
    }

    @Test(arguments: [false, true])
    func losslessRoundTripKeepsEveryPixel(alpha: Bool) throws {
        let image = Self.card(alpha: alpha)
        let data = try ImageEncoders.avif(lossless: true).encode(image)
        #expect(ImageFormat(sniffing: data) == .avif)
        let decoded = try ImageDecoders.avif().decode(data)
        #expect(decoded.width == image.width && decoded.height == image.height)
        #expect(decoded.pixelFormat == image.pixelFormat)
        // Every alpha is at least 80: no colour hides under a transparent pixel.
        assertImage(decoded, matches: image, .exact, name: "alpha \(alpha)")
    }

    @Test func lossyRoundTripIsCloseAndSmallerAtLowerQuality() throws {
        let image = Self.card(alpha: true)
        let good = try ImageEncoders.avif(quality: 90).encode(image)
        let poor = try ImageEncoders.avif(quality: 20).encode(image)
        #expect(poor.count < good.count)
        let decoded = try ImageDecoders.avif().decode(good)
        #expect(decoded.pixelFormat == .rgba8)
        // 4:2:0 chroma on the card's hard colour edges costs most of the error
        // (31.5 dB; colour premultiplied by the card's alpha, down to 80).
        assertImage(decoded, matches: image, .psnr(atLeast: 29.5))
    }

    @Test func opaqueAlphaIsDroppedAndGrayIsExpanded() throws {
        let opaque = Image(width: 2, height: 1, pixelFormat: .grayAlpha8, pixels: [10, 255, 200, 255])
        let decoded = try ImageDecoders.avif().decode(try ImageEncoders.avif(lossless: true).encode(opaque))
        #expect(decoded.pixelFormat == .rgb8)
        #expect(decoded.pixels == [10, 10, 10, 200, 200, 200])
    }

    @Test func anImagesProfileIsEmbeddedAndReadBack() throws {
        let profile = ColorProfile(data: try Fixtures.data("color/adobe-rgb.icc"))
        var image = Self.card(alpha: false)
        image.colorProfile = profile
        let data = try ImageEncoders.avif(lossless: true).encode(image)
        #expect(try ImageDecoders.info(for: data).colorProfile == profile)
        let kept = try ImageDecoders.avif().decode(data, options: ImageDecodingOptions(colorManagement: .keepOriginal))
        #expect(kept.colorProfile == profile)
        assertImage(kept, matches: image, .exact)
        let converted = try ImageDecoders.avif().decode(data)
        #expect(converted.colorProfile == nil)
        // Converted to sRGB, most pixels differ from the stored values.
        let conversion = ImageComparison(converted, storedValues(image))
        #expect(conversion.differingPixelCount > image.width * image.height / 2, "\(conversion)")
    }
}
