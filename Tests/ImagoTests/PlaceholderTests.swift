import Foundation
import Imago
import Testing

/// BlurHash and ThumbHash strings, against the reference encoders: the
/// expected values come from `scripts/make-placeholder-vectors` (Wolt's C
/// BlurHash encoder and the ThumbHash encoder on PyPI) on images made by
/// the same formulas.
@Suite struct PlaceholderTests {
    static func gradient(_ width: Int, _ height: Int) -> Image {
        var pixels: [UInt8] = []
        for y in 0..<height {
            for x in 0..<width { pixels += [UInt8((x * 8) % 256), UInt8((y * 10) % 256), UInt8(((x + y) * 4) % 256)] }
        }
        return Image(width: width, height: height, pixelFormat: .rgb8, pixels: pixels)
    }

    static func noise(_ width: Int, _ height: Int) -> Image {
        var state: UInt32 = 1
        let pixels = (0..<width * height * 3).map { _ -> UInt8 in
            state = state &* 1_664_525 &+ 1_013_904_223
            return UInt8(state >> 24)
        }
        return Image(width: width, height: height, pixelFormat: .rgb8, pixels: pixels)
    }

    static let images = ["gradient": gradient(32, 24), "noise": noise(17, 13), "tall": gradient(9, 40)]

    @Test(arguments: [
        ("gradient", 4, 3, "LxH27b2kwzX5mAWYjuf7gKfkfQfj"),
        ("gradient", 1, 1, "00H27b"),
        ("gradient", 9, 9, "|xH27b2kwzX5a{oeWoofWnmAWYjuf7fRf6fRf6fRgKfkfQfjfQfjfQfjfQn+WojtfQfQfQfQfQfQe:fRfQfQfQfQfQfQfQofWojtfQfQfQfQfQfQe.fRfQfQfQfQfQfQfQofWojtfQfQfQfQfQfQeofRfQfQfQfQfQfQfQ"),
        ("noise", 4, 3, "LDH{4g,KO|][=gn6RgVsMxZ:F_T1"),
        ("noise", 1, 1, "00H{4g"),
        ("noise", 9, 9, "|IH{4g,JO$=jV@TKtj^6T1,]iyR#VtMwoaj0VxT1M{a5KNT1TBRhOqO*pW?@n6OmR*Q;Tb-BvnXzTX$LbXx@jDaOtRrMO?--V|#SrtJ:R:b-TCWY=LNEnln6raO?whryOs--$vXSxIZ+F_jCs+k;#6xR#Gz{REXWxA$L$~"),
        ("tall", 4, 3, "Lf4YV%Xha_kpitf6fRf5dOerfQer"),
        ("tall", 1, 1, "004YV%"),
        ("tall", 9, 9, "|f4YV%Xha_kpa_kpa_kpa_itf6fRf5fRf5fRf5fRdOerfQerfQerfQerfQjYfQfQfPfQfPfQfPfQg]f%fQf%fQf%fQf%fQiPe;fQe;fQe;fQe;fQepf7fQf7fQf7fQf7fQk.f%fQf%fQf%fQf*fQeof7fQf6fQf6fQf6fQ"),
    ])
    func blurHashMatchesTheReference(_ name: String, _ x: Int, _ y: Int, _ expected: String) throws {
        let image = try #require(Self.images[name])
        #expect(image.blurHash(xComponents: x, yComponents: y) == expected)
    }

    @Test(arguments: [
        ("gradient", "XRgODZpwd4eBiIiHiHiIh3iACPeI"),
        ("noise", "YfgBFYRDLNRTQrBiqOZ0p/dX69B5"),
        ("tall", "E2cJOhCEgBiIdIt1iI9Dl/c="),
    ])
    func thumbHashMatchesTheReference(_ name: String, _ expected: String) throws {
        let image = try #require(Self.images[name])
        #expect(image.thumbHash().base64EncodedString() == expected)
    }

    @Test func thumbHashMarksAlphaAndFitsLargeImages() {
        // Half transparent: the header's alpha bit (bit 23) is set.
        let pixels = (0..<20 * 20).flatMap { index -> [UInt8] in index % 20 < 10 ? [255, 0, 0, 255] : [0, 0, 0, 0] }
        let hash = Image(width: 20, height: 20, pixelFormat: .rgba8, pixels: pixels).thumbHash()
        #expect(hash[2] & 0x80 != 0)
        // A large image is scaled to fit 100x100 first, and still hashes.
        let large = Self.gradient(640, 480)
        #expect(large.thumbHash().count == large.resized(maximumPixelSize: 100).thumbHash().count)
        #expect(large.thumbHash()[2] & 0x80 == 0)
    }
}
