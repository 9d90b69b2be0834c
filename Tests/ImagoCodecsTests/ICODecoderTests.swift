import Foundation
import Imago
import ImagoCodecs
import ImagoTesting
import Testing

/// The icon reader: its directory, the choice of the largest image, PNG
/// and BMP images (XOR pixels, AND mask), and damaged directories.
@Suite struct ICODecoderTests {
    let decoder = ImageDecoders.ico()

    /// A BMP image for an icon: 24-bit `width`x`height`, every pixel `bgr`, with an AND mask.
    func bitmapEntry(width: Int, height: Int, bgr: [UInt8], transparent: [[Bool]]) -> ICOBuilder.Entry {
        let rows = [[UInt8]](repeating: (0..<width).flatMap { _ in bgr }, count: height)
        let dib = BMPBuilder(width: width, height: 2 * height, bitCount: 24, pixels: BMPBuilder.rows(rows)).dib
        return ICOBuilder.Entry(width: width, height: height, bitCount: 24, bytes: dib + ICOBuilder.andMask(width: width, transparent: transparent))
    }

    @Test func theANDMaskGivesATwentyFourBitImageItsAlpha() throws {
        // 3x2 blue; the top-left pixel transparent.
        let entry = bitmapEntry(width: 3, height: 2, bgr: [255, 0, 0], transparent: [[true, false, false], [false, false, false]])
        let image = try decoder.decode(ICOBuilder(entries: [entry]).data)
        #expect(image.pixelFormat == .rgba8 && image.width == 3 && image.height == 2)
        #expect(image.pixel(x: 0, y: 0)[3] == 0)
        #expect(image.pixel(x: 1, y: 0) == [0, 0, 255, 255])
        #expect(image.pixel(x: 0, y: 1) == [0, 0, 255, 255])
    }

    @Test(arguments: [
        // 2x1 BGRA: half-transparent green and opaque red keep their alpha; the AND mask (all transparent) is ignored.
        ([0, 255, 0, 128, 0, 0, 255, 255], [true, true], [[0, 255, 0, 128], [255, 0, 0, 255]]),
        // Alpha all 0: the pixels have none, and the AND mask gives it.
        ([0, 255, 0, 0, 0, 0, 255, 0], [false, true], [[0, 255, 0, 255], [255, 0, 0, 0]]),
    ] as [([UInt8], [Bool], [[UInt8]])])
    func thirtyTwoBitPixelsUseTheirAlphaOrElseTheMask(bgra: [UInt8], transparent: [Bool], expected: [[UInt8]]) throws {
        let dib = BMPBuilder(width: 2, height: 2, bitCount: 32, pixels: bgra).dib
        let entry = ICOBuilder.Entry(width: 2, height: 1, bitCount: 32, bytes: dib + ICOBuilder.andMask(width: 2, transparent: [transparent]))
        let image = try decoder.decode(ICOBuilder(entries: [entry]).data)
        #expect(image.pixel(x: 0, y: 0) == expected[0])
        #expect(image.pixel(x: 1, y: 0)[3] == expected[1][3])
    }

    @Test func aMissingANDMaskLeavesThePixelsOpaque() throws {
        let dib = BMPBuilder(width: 2, height: 4, bitCount: 8, palette: [[10, 20, 30]], pixels: BMPBuilder.rows([[0, 0], [0, 0]])).dib
        let image = try decoder.decode(ICOBuilder(entries: [ICOBuilder.Entry(width: 2, height: 2, bitCount: 8, bytes: dib)]).data)
        #expect(image.pixelFormat == .rgb8 && image.pixel(x: 1, y: 1) == [10, 20, 30])
    }

    @Test func theLargestImageIsChosen() throws {
        let png = [UInt8](try ImageEncoders.png().encode(TestImages.solid(width: 40, height: 40, red: 9, green: 8, blue: 7)))
        let icon = ICOBuilder(entries: [
            bitmapEntry(width: 16, height: 16, bgr: [0, 0, 255], transparent: []),
            ICOBuilder.Entry(width: 40, height: 40, bitCount: 32, bytes: png),
            bitmapEntry(width: 32, height: 32, bgr: [0, 255, 0], transparent: []),
        ])
        let image = try decoder.decode(icon.data)
        #expect(image.width == 40 && image.pixel(x: 20, y: 20).prefix(3) == [9, 8, 7])
        let info = try ImageDecoders.info(for: icon.data)
        #expect(info.format == .ico && info.width == 40 && info.height == 40)
        // Of two the same size, the deeper one.
        var shallow = bitmapEntry(width: 8, height: 8, bgr: [0, 0, 255], transparent: [])
        shallow.bitCount = 4
        let deep = bitmapEntry(width: 8, height: 8, bgr: [0, 255, 0], transparent: [])
        #expect(try decoder.decode(ICOBuilder(entries: [shallow, deep]).data).pixel(x: 0, y: 0).prefix(3) == [0, 255, 0])
    }

    @Test func anEntryOutsideTheDataIsSkipped() throws {
        var icon = [UInt8](ICOBuilder(entries: [bitmapEntry(width: 4, height: 4, bgr: [0, 0, 255], transparent: []),
                                                bitmapEntry(width: 8, height: 8, bgr: [0, 255, 0], transparent: [])]).data)
        // The second (larger) entry's offset points past the end.
        icon.replaceSubrange(6 + 16 + 12..<6 + 16 + 16, with: littleEndian(1 << 30, 4))
        #expect(try decoder.decode(Data(icon)).width == 4)
    }

    @Test(arguments: [
        [0, 0, 1, 0, 0, 0],                    // no images
        [0, 0, 3, 0, 1, 0],                    // type 3
        [0, 0, 1, 0, 2, 0, 16, 16, 0, 0],      // a directory of two, cut
    ] as [[UInt8]])
    func aBrokenDirectoryIsATypedError(bytes: [UInt8]) throws {
        let error = try #require(throws: ImageDecodingError.self) { try decoder.decode(Data(bytes)) }
        #expect(error.code == .couldNotOpen)
        #expect((error.underlying as? CodecError)?.library == "imago-ico")
    }

    @Test func aPNGImageLargerThanTheLimitIsRefusedFromItsHeader() throws {
        let png = [UInt8](try ImageEncoders.png().encode(TestImages.gradient(width: 300, height: 200)))
        let icon = ICOBuilder(entries: [ICOBuilder.Entry(width: 0, height: 200, bitCount: 32, bytes: png)]).data
        let error = try #require(throws: ImageDecodingError.self) {
            try decoder.decode(icon, options: ImageDecodingOptions(maximumPixelCount: 50_000))
        }
        #expect(error.code == .tooManyPixels)
        #expect(try decoder.decode(icon).width == 300)
    }

    @Test func everyTruncationAndCorruptedHeaderByteGivesATypedError() throws {
        let icons = [
            ICOBuilder(entries: [bitmapEntry(width: 5, height: 3, bgr: [1, 2, 3], transparent: [[true, false, true, false, true]])]).data,
            try ImageEncoders.ico().encode(TestImages.gradient(width: 9, height: 6)),
        ]
        for icon in icons {
            let report = DecoderVerifier.verify(decoder, on: icon, headerLength: icon.count)
            #expect(report.failures.isEmpty, "\(report.failures)")
        }
    }
}
