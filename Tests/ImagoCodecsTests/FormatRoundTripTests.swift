import Foundation
import Imago
import ImagoCodecs
import ImagoTesting
import Testing

/// The BMP, ICO and HEIC writers: each file read back by Imago's decoder
/// for its format, and the limits each writer has.
@Suite struct FormatRoundTripTests {
    static let translucent: Image = {
        let gradient = TestImages.gradient(width: 19, height: 11)
        return Image(width: 19, height: 11, pixelFormat: .rgba8,
                     pixels: gradient.pixels.enumerated().map { $0.offset % 4 == 3 ? UInt8($0.offset / 4 * 5 % 256) : $0.element })
    }()

    // MARK: BMP

    @Test func anOpaqueImageIsATwentyFourBitBMP() throws {
        let image = TestImages.gradient(width: 13, height: 5)   // RGBA, every pixel opaque
        let data = try ImageEncoders.bmp().encode(image)
        #expect(data.count == 14 + 40 + 5 * 40)   // rows of 39 bytes padded to 40
        #expect(data[28] == 24)
        let decoded = try ImageDecoders.all.decode(data)
        #expect(decoded.pixelFormat == .rgb8 && decoded == image.converted(to: .rgb8))
    }

    @Test func alphaMakesAThirtyTwoBitBMPWithAMaskedAlpha() throws {
        let data = try ImageEncoders.bmp().encode(Self.translucent)
        #expect(data[14] == 124 && data[28] == 32 && data[30] == 3)   // V5 header, 32 bits, BI_BITFIELDS
        let decoded = try ImageDecoders.bmp().decode(data)
        #expect(decoded == Self.translucent)
    }

    @Test func grayIsWrittenAsColour() throws {
        let gray = TestImages.gradient(width: 6, height: 6).converted(to: .gray8)
        let decoded = try ImageDecoders.bmp().decode(try ImageEncoders.bmp().encode(gray))
        #expect(decoded == gray.converted(to: .rgb8))
    }

    @Test func aProfileIsEmbeddedInAVFiveHeader() throws {
        var image = TestImages.gradient(width: 4, height: 3).converted(to: .rgb8)
        image.colorProfile = ColorProfile(data: try Fixtures.data("color/display-p3.icc"))
        let data = try ImageEncoders.bmp().encode(image)
        let decoded = try ImageDecoders.bmp().decode(data, options: ImageDecodingOptions(colorManagement: .keepOriginal))
        #expect(decoded.colorProfile == image.colorProfile)
        #expect(decoded.pixels == image.pixels)
    }

    @Test func aGrayProfileIsNotWrittenOnColourPixels() throws {
        var gray = TestImages.gradient(width: 4, height: 4).converted(to: .gray8)
        gray.colorProfile = ColorProfile(data: try Fixtures.data("color/gray.icc"))
        let keep = ImageDecodingOptions(colorManagement: .keepOriginal)
        #expect(try ImageDecoders.bmp().decode(try ImageEncoders.bmp().encode(gray), options: keep).colorProfile == nil)
        #expect(try ImageDecoders.ico().decode(try ImageEncoders.ico().encode(gray), options: keep).colorProfile == nil)
        #expect(try ImageDecoders.tiff().decode(try ImageEncoders.tiff().encode(gray), options: keep).colorProfile == gray.colorProfile)
    }

    // MARK: ICO

    @Test func anIconHoldsOnePNG() throws {
        let data = try ImageEncoders.ico().encode(Self.translucent)
        #expect(ImageFormat(sniffing: data) == .ico)
        #expect(Array(data.prefix(8)) == [0, 0, 1, 0, 1, 0, 19, 11])
        #expect(ImageFormat(sniffing: data.dropFirst(22)) == .png)
        #expect(try ImageDecoders.all.decode(data) == Self.translucent)
        let info = try ImageDecoders.info(for: data)
        #expect(info.format == .ico && info.width == 19 && info.height == 11)
    }

    @Test func aTwoHundredFiftySixPixelIconIsWrittenAsZero() throws {
        let data = try ImageEncoders.ico().encode(TestImages.gradient(width: 256, height: 256))
        #expect(data[6] == 0 && data[7] == 0)
        let decoded = try ImageDecoders.ico().decode(data)
        #expect(decoded.width == 256 && decoded.height == 256)
    }

    @Test(arguments: [(257, 16), (16, 257), (1000, 1000)])
    func anIconOverTwoHundredFiftySixPixelsIsRefused(width: Int, height: Int) throws {
        let error = try #require(throws: ImageEncodingError.self) {
            try ImageEncoders.ico().encode(TestImages.solid(width: width, height: height))
        }
        #expect(error.code == .unsupportedImage)
        #expect(error.format == .ico)
    }

    // MARK: HEIC

    @Test func libheifHasAnHEVCEncoderHere() {
        #expect(HEICEncoder.isAvailable)
    }

    @Test func aHEICReadsBackCloseToTheOriginal() throws {
        let image = TestImages.gradient(width: 40, height: 24).converted(to: .rgb8)
        let data = try ImageEncoders.heic(quality: 90).encode(image)
        #expect(ImageFormat(sniffing: data) == .heic)
        let decoded = try ImageDecoders.heic().decode(data)
        #expect(decoded.width == 40 && decoded.height == 24 && decoded.pixelFormat == .rgb8)
        let error = ImageComparison(decoded, image).meanAbsoluteDifference
        #expect(error < 3, "\(error)")
    }

    @Test func aHEICKeepsAlphaAndTheEXIF() throws {
        let data = try ImageEncoders.heic().encode(Self.translucent)
        let decoded = try ImageDecoders.heic().decode(data)
        #expect(decoded.pixelFormat == .rgba8)
        // 2.68 levels, colour premultiplied by alpha.
        let error = ImageComparison(decoded, Self.translucent).meanAbsoluteDifference
        #expect(error < 3.7, "\(error)")
        // EXIF through ImageEncoders.encode(_:as:), as the server writes it.
        var tagged = TestImages.gradient(width: 32, height: 32)
        tagged.metadata = ImageMetadata(exif: try ImageDecoders.jpeg().decode(try Fixtures.data("jpeg/orientation6.jpg")).metadata?.exif)
        let decision = OutputDecision(format: .heic, isAnimated: false, quality: 50, variesWithAccept: false, metadata: .keepAll)
        let written = try ImageEncoders.encode(tagged, as: decision)
        #expect(try ImageDecoders.info(for: written).metadata?.exif != nil)
    }

    @Test func aLowerQualityMakesASmallerHEIC() throws {
        let image = TestImages.gradient(width: 64, height: 64)
        #expect(try ImageEncoders.heic(quality: 20).encode(image).count < ImageEncoders.heic(quality: 95).encode(image).count)
    }

    // MARK: The one mapping

    @Test func everyFormatHasAnEncoderAndTheNewOnesTheirDefaults() throws {
        for format in ImageFormat.allCases {
            #expect(ImageEncoders.encoder(for: format)?.format == format, "\(format)")
            #expect(format.isWritable)
        }
        #expect(ImageEncoders.defaultQuality(for: .heic) == 60)
        #expect((ImageEncoders.encoder(for: .heic) as? HEICEncoder)?.quality == 60)
        #expect((ImageEncoders.encoder(for: .heic, quality: 35) as? HEICEncoder)?.quality == 35)
        #expect((ImageEncoders.encoder(for: .tiff) as? TIFFEncoder)?.compression == .deflate)
        for format in [ImageFormat.bmp, .ico, .tiff] {
            #expect(ImageEncoders.defaultQuality(for: format) == nil)
            #expect(ImageEncoders.animationEncoder(for: format) == nil)
            let decision = OutputDecision(format: format, isAnimated: false, quality: nil, variesWithAccept: false, metadata: .strip)
            let data = try ImageEncoders.encode(Self.translucent, as: decision)
            #expect(ImageFormat(sniffing: data) == format)
            #expect(try ImageDecoders.all.decode(data) == Self.translucent, "\(format)")
        }
    }
}
