import Foundation
import Imago
import ImagoCodecs
import ImagoTesting
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
        #expect(differingBytes(decoded.pixels, image.pixels) == 0)
    }

    @Test func lossyRoundTripIsCloseAndSmallerAtLowerQuality() throws {
        let image = Self.card(alpha: true)
        let good = try ImageEncoders.avif(quality: 90).encode(image)
        let poor = try ImageEncoders.avif(quality: 20).encode(image)
        #expect(poor.count < good.count)
        let decoded = try ImageDecoders.avif().decode(good)
        #expect(decoded.pixelFormat == .rgba8)
        let psnr = peakSignalToNoiseRatio(decoded.pixels, image.pixels)
        // 4:2:0 chroma on the card's hard colour edges costs most of the error.
        #expect(psnr > 27, "PSNR \(psnr) dB")
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
        #expect(differingBytes(kept.pixels, image.pixels) == 0)
        let converted = try ImageDecoders.avif().decode(data)
        #expect(converted.colorProfile == nil)
        #expect(differingBytes(converted.pixels, image.pixels) > image.pixels.count / 2)
    }
}

/// How many bytes of `a` differ from `b`'s (every extra byte of either counts).
func differingBytes(_ a: [UInt8], _ b: [UInt8]) -> Int {
    zip(a, b).filter { $0 != $1 }.count + abs(a.count - b.count)
}

/// The PSNR of `a` against `b`, in dB (infinite when they are equal).
func peakSignalToNoiseRatio(_ a: [UInt8], _ b: [UInt8]) -> Double {
    precondition(a.count == b.count)
    let squared = zip(a, b).reduce(0.0) { sum, pair in
        let difference = Double(pair.0) - Double(pair.1)
        return sum + difference * difference
    }
    guard squared > 0 else { return .infinity }
    return 10 * log10(255 * 255 / (squared / Double(a.count)))
}
