import Foundation
import Imago
import ImagoCodecs
import ImagoTesting
import ImagoTestingSupport
import Testing

/// The WebP encoder over libwebp's simple encoding API.
@Suite struct WebPEncoderTests {
    let decoder = CodecDecoder(format: .webp, functions: .webp)

    /// A `width` x `height` image in `pixelFormat` whose channels all differ
    /// from pixel to pixel; alpha, if any, runs from 1 to 255 (never 0).
    static func pattern(width: Int, height: Int, pixelFormat: PixelFormat, bytesPerRow: Int? = nil) -> Image {
        let stride = bytesPerRow ?? width * pixelFormat.bytesPerPixel
        var pixels = [UInt8](repeating: 0xEE, count: stride * height)
        for y in 0..<height {
            for x in 0..<width {
                let values: [UInt8] = [UInt8(x * 255 / max(1, width - 1)), UInt8(y * 255 / max(1, height - 1)), UInt8((x * 7 + y * 13) % 256), UInt8(1 + (x + y) * 254 / max(1, width + height - 2))]
                let channels: [UInt8] = switch pixelFormat {
                case .rgba8: values
                case .rgb8: Array(values.prefix(3))
                case .grayAlpha8: [values[0], values[3]]
                case .gray8: [values[0]]
                }
                let start = y * stride + x * pixelFormat.bytesPerPixel
                pixels.replaceSubrange(start..<start + channels.count, with: channels)
            }
        }
        return Image(width: width, height: height, pixelFormat: pixelFormat, bytesPerRow: stride, pixels: pixels)
    }

    /// Every pixel of `image`'s first frame, row by row, without row padding.
    static func rows(_ image: Image) -> [[UInt8]] {
        (0..<image.height).flatMap { y in (0..<image.width).map { x in pixel(of: image, x: x, y: y) } }
    }

    @Test func producesWebP() throws {
        let encoder = WebPEncoder()
        #expect(encoder.format == .webp)
        #expect(encoder.quality == 80 && !encoder.lossless)
        let data = try encoder.encode(TestImages.gradient(width: 16, height: 16))
        #expect(ImageFormat(sniffing: data) == .webp)
    }

    @Test func losslessRoundTripKeepsEveryRGBPixel() throws {
        let image = Self.pattern(width: 23, height: 17, pixelFormat: .rgb8)
        let decoded = try decoder.decode(WebPEncoder(lossless: true).encode(image))
        #expect(decoded == image)
    }

    @Test func losslessRoundTripKeepsEveryRGBAPixel() throws {
        let image = Self.pattern(width: 23, height: 17, pixelFormat: .rgba8)
        let decoded = try decoder.decode(WebPEncoder(lossless: true).encode(image))
        #expect(decoded == image)
    }

    @Test func paddedRowsAreReadWithTheImagesStride() throws {
        let padded = Self.pattern(width: 10, height: 6, pixelFormat: .rgba8, bytesPerRow: 10 * 4 + 12)
        let decoded = try decoder.decode(WebPEncoder(lossless: true).encode(padded))
        #expect(decoded.bytesPerRow == 40)
        #expect(Self.rows(decoded) == Self.rows(padded))
    }

    @Test func grayImagesAreEncodedAsRGB() throws {
        let gray = Self.pattern(width: 9, height: 5, pixelFormat: .gray8, bytesPerRow: 11)
        let decoded = try decoder.decode(WebPEncoder(lossless: true).encode(gray))
        #expect(decoded.pixelFormat == .rgb8)
        #expect(Self.rows(decoded) == Self.rows(gray).map { [$0[0], $0[0], $0[0]] })
    }

    @Test func grayAlphaImagesAreEncodedAsRGBA() throws {
        let gray = Self.pattern(width: 9, height: 5, pixelFormat: .grayAlpha8)
        let decoded = try decoder.decode(WebPEncoder(lossless: true).encode(gray))
        #expect(decoded.pixelFormat == .rgba8)
        #expect(Self.rows(decoded) == Self.rows(gray).map { [$0[0], $0[0], $0[0], $0[1]] })
    }

    @Test func lossyRoundTripStaysCloseToTheOriginal() throws {
        let image = TestImages.solid(width: 32, height: 32, red: 200, green: 80, blue: 40)
        let data = try WebPEncoder(quality: 90).encode(image)
        let decoded = try decoder.decode(data)
        #expect(decoded.width == 32 && decoded.height == 32)
        // Opaque RGBA input is stored without alpha.
        #expect(decoded.pixelFormat == .rgb8)
        assertImage(decoded, matches: image, .within(levels: 6))
    }

    @Test func lowerQualityGivesSmallerFiles() throws {
        let image = Self.pattern(width: 64, height: 64, pixelFormat: .rgb8)
        let small = try WebPEncoder(quality: 5).encode(image)
        let large = try WebPEncoder(quality: 100).encode(image)
        #expect(small.count < large.count)
    }

    @Test(arguments: [Float.nan, -20, 250])
    func qualityOutsideTheRangeStillEncodes(quality: Float) throws {
        let data = try WebPEncoder(quality: quality).encode(TestImages.gradient(width: 8, height: 8))
        #expect(try decoder.decode(data).width == 8)
    }

    @Test func encodesOnlyTheFirstFrame() throws {
        let first = Self.pattern(width: 4, height: 4, pixelFormat: .rgba8)
        let second = TestImages.solid(width: 4, height: 4)
        let animation = Image(width: 4, height: 4, frames: [first.frames[0], second.frames[0]])
        let decoded = try decoder.decode(WebPEncoder(lossless: true).encode(animation))
        #expect(decoded.frames.count == 1)
        #expect(decoded.pixels == first.pixels)
    }

    @Test(arguments: [(WebPEncoder.maximumDimension + 1, 1), (1, WebPEncoder.maximumDimension + 1)])
    func imageLargerThanWebPAllowsIsUnsupported(width: Int, height: Int) throws {
        let image = Image(width: width, height: height, pixelFormat: .gray8, pixels: [UInt8](repeating: 0, count: width * height))
        let error = try #require(throws: ImageEncodingError.self) { try WebPEncoder().encode(image) }
        #expect(error.code == .unsupportedImage)
        #expect(error.format == .webp)
    }
}
