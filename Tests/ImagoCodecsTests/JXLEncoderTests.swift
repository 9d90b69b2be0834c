import Foundation
import Imago
import ImagoCodecs
import ImagoTesting
import Testing

/// JPEG XL writing with libjxl, read back by the decoder.
@Suite struct JXLEncoderTests {
    /// A 64x48 gradient, RGB or with an alpha ramp.
    static func image(alpha: Bool = false) -> Image {
        var pixels = [UInt8]()
        for y in 0..<48 {
            for x in 0..<64 {
                pixels += [UInt8(x * 4), UInt8(y * 5), UInt8((x + y) * 2)]
                if alpha { pixels.append(UInt8(x * 255 / 63)) }
            }
        }
        return Image(width: 64, height: 48, pixelFormat: alpha ? .rgba8 : .rgb8, pixels: pixels)
    }

    @Test func losslessKeepsEveryPixel() throws {
        for alpha in [false, true] {
            let source = Self.image(alpha: alpha)
            let data = try JXLEncoder(lossless: true).encode(source)
            #expect(ImageFormat(sniffing: data) == .jxl)
            let decoded = try ImageDecoders.all.decode(data)
            #expect((decoded.width, decoded.height, decoded.pixelFormat) == (64, 48, source.pixelFormat))
            #expect(decoded.pixels == source.pixels, "alpha: \(alpha)")
            #expect(try JXLEncoder(quality: 100).encode(source) == data, "quality 100 is lossless")
        }
    }

    @Test func lossyIsCloseAndSmallerAsQualityFalls() throws {
        let source = Self.image()
        let high = try JXLEncoder(quality: 95).encode(source)
        let low = try JXLEncoder(quality: 30).encode(source)
        #expect(low.count < high.count)
        let decoded = try ImageDecoders.all.decode(high)
        let mean = ImageComparison(decoded, source).meanAbsoluteDifference
        #expect(mean < 2, "mean channel error \(mean)")
        // An opaque image with an alpha channel is written without one.
        let opaque = Image(width: 64, height: 48, pixelFormat: .rgba8, pixels: Array(source.converted(to: .rgba8).pixels))
        #expect(try ImageDecoders.all.decode(JXLEncoder().encode(opaque)).pixelFormat == .rgb8)
    }

    @Test func theQualityMapsToCJXLsDistance() {
        #expect(JXLEncoder.distance(forQuality: 100) == 0)
        #expect(abs(JXLEncoder.distance(forQuality: 90) - 1.0) < 1e-5)
        #expect(abs(JXLEncoder.distance(forQuality: 30) - 6.4) < 1e-5)
        #expect(JXLEncoder.distance(forQuality: 0) <= 25)
        #expect(JXLEncoder.distance(forQuality: -5) == JXLEncoder.distance(forQuality: 0))
    }

    @Test func aProfileIsEmbedded() throws {
        let resources = Bundle.module.url(forResource: "Resources", withExtension: nil)!
        let profile = ColorProfile(data: try Data(contentsOf: resources.appendingPathComponent("color/display-p3.icc")))
        var source = Self.image()
        source.colorProfile = profile
        var options = ImageDecodingOptions()
        options.colorManagement = .keepOriginal
        let decoded = try ImageDecoders.all.decode(JXLEncoder(lossless: true).encode(source), options: options)
        #expect(decoded.colorProfile != nil)
        #expect(decoded.pixels == source.pixels)
    }
}
