import Foundation
import Imago
import ImagoCodecs
import ImagoTesting
import Testing

/// Imago's BMP reader on files made byte by byte: every header size, bit
/// depth, mask and compression it reads, both row orders, and the files
/// it must refuse with a typed error.
@Suite struct BMPDecoderTests {
    let decoder = ImageDecoders.bmp()
    let red: [UInt8] = [255, 0, 0], green: [UInt8] = [0, 255, 0], blue: [UInt8] = [0, 0, 255], white: [UInt8] = [255, 255, 255]

    /// The pixels of `image` as RGBA quads, top row first.
    func rgba(_ image: Image) -> [[UInt8]] {
        let converted = image.converted(to: .rgba8)
        return (0..<image.height).flatMap { y in (0..<image.width).map { x in converted.pixel(x: x, y: y) } }
    }

    // MARK: Palettes

    @Test(arguments: [1, 2, 4, 8])
    func aPaletteImageDecodesBottomUp(bitCount: Int) throws {
        // 3x2: top row red, green, blue; bottom row white, red, green (two colours at 1 bit). Stored bottom row first.
        let palette = bitCount == 1 ? [red, white] : [red, green, blue, white]
        let indices = bitCount == 1 ? [[1, 0, 1], [0, 1, 0]] : [[3, 0, 1], [0, 1, 2]]   // bottom, top
        let packed = indices.map { row -> [UInt8] in
            var bytes = [UInt8](repeating: 0, count: (3 * bitCount + 7) / 8)
            for (x, index) in row.enumerated() {
                let bit = x * bitCount
                bytes[bit / 8] |= UInt8(index << (8 - bitCount - bit % 8))
            }
            return bytes
        }
        let file = BMPBuilder(width: 3, height: 2, bitCount: bitCount, palette: palette, pixels: BMPBuilder.rows(packed))
        let image = try decoder.decode(file.data)
        #expect(image.pixelFormat == .rgb8)
        #expect(rgba(image) == indices.reversed().flatMap { $0.map { palette[$0] + [255] } })
    }

    @Test func anIndexPastAShortPaletteIsBlack() throws {
        let file = BMPBuilder(width: 2, height: 1, bitCount: 8, palette: [red], pixels: BMPBuilder.rows([[0, 200]]))
        #expect(rgba(try decoder.decode(file.data)) == [red + [255], [0, 0, 0, 255]])
    }

    @Test func aCoreHeaderHasThreeByteEntries() throws {
        let file = BMPBuilder(width: 2, height: 2, bitCount: 8, headerSize: 12, palette: [red, green], pixels: BMPBuilder.rows([[0, 1], [1, 0]]))
        #expect(rgba(try decoder.decode(file.data)) == [green + [255], red + [255], red + [255], green + [255]])
    }

    // MARK: 16, 24 and 32 bits

    @Test func twentyFourBitsTopDownAndBottomUp() throws {
        let bgrRows: [[UInt8]] = [[0, 0, 255, 0, 255, 0], [255, 0, 0, 255, 255, 255]]   // red green / blue white
        let bottomUp = try decoder.decode(BMPBuilder(width: 2, height: 2, bitCount: 24, pixels: BMPBuilder.rows(bgrRows.reversed())).data)
        let topDown = try decoder.decode(BMPBuilder(width: 2, height: -2, bitCount: 24, pixels: BMPBuilder.rows(bgrRows)).data)
        #expect(rgba(bottomUp) == [red, green, blue, white].map { $0 + [255] })
        #expect(topDown == bottomUp)
    }

    @Test func sixteenBitsDefaultToFiveFiveFive() throws {
        // 0x7C00 red, 0x03E0 green, 0x001F blue, 0x4210 a middle gray (16/31).
        let file = BMPBuilder(width: 4, height: 1, bitCount: 16, pixels: BMPBuilder.rows([[0x00, 0x7C, 0xE0, 0x03, 0x1F, 0x00, 0x10, 0x42]]))
        #expect(rgba(try decoder.decode(file.data)) == [red + [255], green + [255], blue + [255], [132, 132, 132, 255]])
    }

    @Test func sixteenBitsWithFiveSixFiveMasks() throws {
        let file = BMPBuilder(width: 3, height: 1, bitCount: 16, compression: 3, masks: [0xF800, 0x07E0, 0x001F],
                              pixels: BMPBuilder.rows([[0x00, 0xF8, 0xE0, 0x07, 0x1F, 0x00]]))
        #expect(rgba(try decoder.decode(file.data)) == [red + [255], green + [255], blue + [255]])
    }

    @Test func thirtyTwoBitsKeepTheirAlphaByte() throws {
        // BGRA: half-transparent red, opaque blue.
        let file = BMPBuilder(width: 2, height: 1, bitCount: 32, pixels: [0, 0, 255, 128, 255, 0, 0, 255])
        let image = try decoder.decode(file.data)
        #expect(image.pixelFormat == .rgba8)
        #expect(rgba(image) == [[255, 0, 0, 128], [0, 0, 255, 255]])
    }

    @Test func thirtyTwoBitsWhoseAlphaIsAllZeroAreOpaque() throws {
        let file = BMPBuilder(width: 2, height: 1, bitCount: 32, pixels: [0, 0, 255, 0, 255, 0, 0, 0])
        let image = try decoder.decode(file.data)
        #expect(image.pixelFormat == .rgb8)
        #expect(rgba(image) == [red + [255], blue + [255]])
    }

    @Test(arguments: [56, 108, 124])
    func largerHeadersCarryTheirMasks(headerSize: Int) throws {
        // ABGR order in the masks: alpha in the low byte, red in the high one.
        let file = BMPBuilder(width: 2, height: 1, bitCount: 32, compression: 3, headerSize: headerSize,
                              masks: [0xFF00_0000, 0x00FF_0000, 0x0000_FF00, 0x0000_00FF], pixels: [64, 0, 0, 255, 255, 0, 255, 0])
        #expect(rgba(try decoder.decode(file.data)) == [[255, 0, 0, 64], [0, 255, 0, 255]])
    }

    @Test func alphaBitfieldsFollowAnInfoHeader() throws {
        let file = BMPBuilder(width: 1, height: 1, bitCount: 16, compression: 6, masks: [0x0F00, 0x00F0, 0x000F, 0xF000], pixels: [0x0F, 0x8F, 0, 0])
        #expect(rgba(try decoder.decode(file.data)) == [[255, 0, 255, 136]])
    }

    @Test func aVFiveHeaderEmbedsItsProfile() throws {
        let profile = [UInt8](try Fixtures.data("color/adobe-rgb.icc"))
        let file = BMPBuilder(width: 1, height: 1, bitCount: 24, headerSize: 124, pixels: [0, 0, 255, 0], profile: profile)
        let image = try decoder.decode(file.data, options: ImageDecodingOptions(colorManagement: .keepOriginal))
        #expect(image.colorProfile?.data == Data(profile))
        #expect(try ImageDecoders.info(for: file.data).colorProfile?.data == Data(profile))
    }

    // MARK: Run-length encoding

    @Test func rle8RunsAbsoluteRunsDeltasAndSkippedPixels() throws {
        // 4x3, bottom-up. Row 0 (bottom): a run of 4 red, end of line. Row 1: an absolute run 1, 2, 0 (padded),
        // end of line (x 3 skipped). Row 2: a delta of (2, 0), one green, end of bitmap (x 0, 1 and 3 skipped).
        let codes: [UInt8] = [4, 0, 0, 0, 0, 3, 1, 2, 0, 0, 0, 0, 0, 2, 2, 0, 1, 1, 0, 1]
        let file = BMPBuilder(width: 4, height: 3, bitCount: 8, compression: 1, palette: [red, green, blue], pixels: codes)
        let image = try decoder.decode(file.data)
        #expect(image.pixelFormat == .rgba8)
        let clear: [UInt8] = [0, 0, 0, 0]
        #expect(rgba(image) == [clear, clear, green + [255], clear,
                                green + [255], blue + [255], red + [255], clear,
                                red + [255], red + [255], red + [255], red + [255]])
    }

    @Test func rle4AlternatesItsTwoIndices() throws {
        // 5x1: a run of 5 alternating 1 and 2, then end of bitmap.
        let file = BMPBuilder(width: 5, height: 1, bitCount: 4, compression: 2, palette: [red, green, blue], pixels: [5, 0x12, 0, 1])
        #expect(rgba(try decoder.decode(file.data)) == [green, blue, green, blue, green].map { $0 + [255] })
    }

    @Test func aRunPastTheRowIsCut() throws {
        let file = BMPBuilder(width: 2, height: 1, bitCount: 8, compression: 1, palette: [red], pixels: [200, 0, 0, 1])
        #expect(rgba(try decoder.decode(file.data)) == [red + [255], red + [255]])
    }

    @Test func runLengthDataThatStopsEarlyIsAnError() throws {
        let file = BMPBuilder(width: 4, height: 4, bitCount: 8, compression: 1, palette: [red], pixels: [4, 0, 0, 0])
        let error = try #require(throws: ImageDecodingError.self) { try decoder.decode(file.data) }
        #expect(error.code == .couldNotProduceImage)
        #expect((error.underlying as? CodecError)?.library == "imago-bmp")
    }

    // MARK: Refusals

    @Test(arguments: [0, 3, 5, 7, 9, 64, 30_000])
    func anUnsupportedBitDepthIsRefused(bitCount: Int) throws {
        // imgproxy's bmp_overflow_test: 512x1 with an invalid bit count.
        let file = BMPBuilder(width: 512, height: 1, bitCount: bitCount, pixels: [UInt8](repeating: 0xAB, count: 2048))
        let error = try #require(throws: ImageDecodingError.self) { try decoder.decode(file.data) }
        #expect(error.code == .couldNotOpen)
        #expect(error.format == .bmp)
        #expect((error.underlying as? CodecError)?.code == 2, "\(String(describing: error))")
        #expect(throws: ImageDecodingError.self) { try ImageDecoders.info(for: file.data) }
    }

    @Test(arguments: [(4, 8), (5, 24), (1, 4), (2, 8), (3, 24), (3, 8)])
    func aCompressionThatDoesNotFitTheDepthIsRefused(compression: Int, bitCount: Int) throws {
        let file = BMPBuilder(width: 2, height: 2, bitCount: bitCount, compression: compression, palette: [red], pixels: [UInt8](repeating: 0, count: 64))
        let error = try #require(throws: ImageDecodingError.self) { try decoder.decode(file.data) }
        #expect(error.code == .couldNotOpen)
    }

    @Test func aMaskThatIsNotOneRunIsRefused() throws {
        let file = BMPBuilder(width: 1, height: 1, bitCount: 16, compression: 3, masks: [0xF0F0, 0x0F00, 0x000F], pixels: [0, 0, 0, 0])
        let error = try #require(throws: ImageDecodingError.self) { try decoder.decode(file.data) }
        #expect(error.code == .couldNotOpen)
    }

    @Test func hugeDimensionsAreRefusedFromTheHeader() throws {
        // 100000 x 100000 at 24 bits would be 30 GB; the file holds four bytes of pixels.
        let file = BMPBuilder(width: 100_000, height: 100_000, bitCount: 24, pixels: [0, 0, 0, 0])
        let error = try #require(throws: ImageDecodingError.self) { try decoder.decode(file.data) }
        #expect(error.code == .tooManyPixels)
        let info = try ImageDecoders.info(for: file.data)
        #expect(info.format == .bmp && info.width == 100_000 && info.height == 100_000)
        // Within the limit, the rows the header promises must be there before anything is allocated.
        let small = ImageDecodingOptions(maximumPixelCount: 20_000_000_000)
        let missingRows = try #require(throws: ImageDecodingError.self) { try decoder.decode(file.data, options: small) }
        #expect(missingRows.code == .couldNotProduceImage)
        // Width x height x bits past Int: refused, never wrapped around.
        let widest = BMPBuilder(width: Int(Int32.max), height: Int(Int32.max), bitCount: 32, pixels: [0, 0, 0, 0])
        let unlimited = ImageDecodingOptions(maximumPixelCount: .max)
        #expect(throws: ImageDecodingError.self) { try decoder.decode(widest.data, options: unlimited) }
    }

    @Test func everyTruncationAndCorruptedHeaderByteGivesATypedError() throws {
        let files = [
            BMPBuilder(width: 5, height: 3, bitCount: 4, palette: [red, green, blue], pixels: BMPBuilder.rows([[0x01, 0x20, 0x10], [0x12, 0x00, 0x20], [0x22, 0x11, 0x00]])),
            BMPBuilder(width: 3, height: 2, bitCount: 32, compression: 3, headerSize: 124, masks: [0xFF0000, 0xFF00, 0xFF, 0xFF00_0000],
                       pixels: [UInt8](repeating: 0x80, count: 24)),
            BMPBuilder(width: 4, height: 3, bitCount: 8, compression: 1, palette: [red, green, blue],
                       pixels: [4, 0, 0, 0, 0, 3, 1, 2, 0, 0, 0, 0, 0, 2, 2, 0, 1, 1, 0, 1]),
        ]
        for file in files {
            let report = DecoderVerifier.verify(decoder, on: file.data, headerLength: file.data.count)
            #expect(report.failures.isEmpty, "\(report.failures)")
        }
    }

    @Test func infoReadsTheHeaderAlone() throws {
        let data = try ImageEncoders.bmp().encode(TestImages.gradient(width: 33, height: 7))
        let info = try ImageDecoders.info(for: data)
        #expect(info.format == .bmp && info.width == 33 && info.height == 7 && info.frameCount == 1)
        #expect(ImageFormat(sniffing: data) == .bmp)
    }
}
