import Foundation
import Imago
import ImagoCodecs
import ImagoTesting
import Testing

/// The JPEG decoder over libjpeg-turbo. The fixtures are 32x16, left half
/// red (220, 30, 30), right half blue (30, 30, 220): see
/// `scripts/fixtures/make-jpeg-fixtures.py`.
@Suite struct JPEGDecoderTests {
    let decoder = ImageDecoders.jpeg()

    private func decode(_ name: String, options: ImageDecodingOptions = ImageDecodingOptions()) throws -> Image {
        try decoder.decode(try Fixtures.data("jpeg/\(name)"), options: options)
    }

    /// Whether the pixel at (x, y) is close to `rgb` (lossy compression moves values a little).
    private func expect(_ image: Image, x: Int, y: Int, near rgb: [Int], sourceLocation: SourceLocation = #_sourceLocation) {
        let pixel = image.pixel(x: x, y: y).map(Int.init)
        let channels = image.pixelFormat == .gray8 ? [pixel[0], pixel[0], pixel[0]] : Array(pixel.prefix(3))
        #expect(zip(channels, rgb).allSatisfy { abs($0 - $1) <= 12 }, "pixel (\(x), \(y)) is \(channels), expected near \(rgb)", sourceLocation: sourceLocation)
    }

    @Test(arguments: ["baseline.jpg", "progressive.jpg", "subsampled420.jpg", "orientation1.jpg"])
    func colourJPEGsDecodeToRGBWithTheRightColours(name: String) throws {
        let image = try decode(name)
        #expect(image.width == 32 && image.height == 16)
        #expect(image.pixelFormat == .rgb8)
        expect(image, x: 4, y: 8, near: [220, 30, 30])
        expect(image, x: 28, y: 8, near: [30, 30, 220])
    }

    @Test func grayscaleStaysOneChannel() throws {
        let image = try decode("gray.jpg")
        #expect(image.pixelFormat == .gray8)
        #expect(image.pixels.count == 32 * 16)
        // ITU-R 601 luma of the two colours: 85 and 46.
        expect(image, x: 4, y: 8, near: [85, 85, 85])
        expect(image, x: 28, y: 8, near: [46, 46, 46])
    }

    @Test func cmykIsConvertedToRGB() throws {
        let image = try decode("cmyk.jpg")
        #expect(image.pixelFormat == .rgb8)
        expect(image, x: 4, y: 8, near: [220, 30, 30])
        expect(image, x: 28, y: 8, near: [30, 30, 220])
    }

    /// For each EXIF orientation: the upright size and where the red half ends up.
    @Test(arguments: [
        (1, 32, 16, "left"), (2, 32, 16, "right"), (3, 32, 16, "right"), (4, 32, 16, "left"),
        (5, 16, 32, "top"), (6, 16, 32, "top"), (7, 16, 32, "bottom"), (8, 16, 32, "bottom"),
    ])
    func exifOrientationIsApplied(orientation: Int, width: Int, height: Int, redSide: String) throws {
        let image = try decode("orientation\(orientation).jpg")
        #expect(image.width == width && image.height == height)
        let (red, blue): ((Int, Int), (Int, Int)) = switch redSide {
        case "left": ((4, 8), (28, 8))
        case "right": ((28, 8), (4, 8))
        case "top": ((8, 4), (8, 28))
        default: ((8, 28), (8, 4))
        }
        expect(image, x: red.0, y: red.1, near: [220, 30, 30])
        expect(image, x: blue.0, y: blue.1, near: [30, 30, 220])
    }

    @Test(arguments: [(320, 320, 240), (200, 200, 150), (400, 400, 300), (160, 160, 120), (100, 100, 75), (80, 80, 60), (2, 2, 2), (2000, 640, 480)])
    func maximumPixelSizeGivesExactlyThatLongerSide(target: Int, width: Int, height: Int) throws {
        let image = try decode("large.jpg", options: ImageDecodingOptions(maximumPixelSize: target))
        #expect(image.width == width && image.height == height)
        expect(image, x: 0, y: height / 2, near: [220, 30, 30])
    }

    @Test(arguments: [
        (Thumbnail(width: 50, height: 50, mode: .crop), 50, 50),
        (Thumbnail(width: 50, height: 50, mode: .fill), 67, 50),
        (Thumbnail(width: 100, height: 20, mode: .fit), 27, 20),
        (Thumbnail(width: 2000, height: 2000, mode: .crop), 640, 480),
    ])
    func thumbnailBoxesGiveTheirExactSize(thumbnail: Thumbnail, width: Int, height: Int) throws {
        let image = try decode("large.jpg", options: ImageDecodingOptions(thumbnail: thumbnail))
        #expect(image.width == width && image.height == height)
    }

    @Test func cropThumbnailLetsTheCodecScaleWhileDecoding() throws {
        // 640x480 cropped to 50x50 covers 67x50: the table gets the crop box unchanged,
        // and libjpeg-turbo decodes at 1/8 (80x60), the smallest scale covering 67, instead of full size.
        let spy = Locked<(Thumbnail?, Int, Int)?>(nil)
        var functions = CodecFunctions.jpeg
        functions.makeImage = { opened, index, options in
            let image = try CodecFunctions.jpeg.makeImage(opened, index, options)
            spy.withLock { $0 = (options.thumbnail, image.width, image.height) }
            return image
        }
        let box = Thumbnail(width: 50, height: 50, mode: .crop)
        let image = try CodecDecoder(format: .jpeg, functions: functions)
            .decode(try Fixtures.data("jpeg/large.jpg"), options: ImageDecodingOptions(thumbnail: box))
        let seen = try #require(spy.withLock { $0 })
        #expect(seen.0 == box && seen.1 == 80 && seen.2 == 60)
        #expect(image.width == 50 && image.height == 50)
    }

    @Test(arguments: [(320, 320, 240), (200, 240, 180), (160, 160, 120), (100, 160, 120), (80, 80, 60), (1, 80, 60), (2000, 640, 480)])
    func dctScalingPicksTheSmallestScaleThatCoversTheTarget(target: Int, width: Int, height: Int) throws {
        // The table alone, without the decoder's final resize.
        let table = CodecFunctions.jpeg
        let opened = try table.open(try Fixtures.data("jpeg/large.jpg"), ImageDecodingOptions())
        let image = try table.makeImage(opened, nil, ImageDecodingOptions(maximumPixelSize: target))
        #expect(image.width == width && image.height == height)
    }

    @Test func largestDeclarableSizeFailsWithThePixelLimitBeforeAnyPixelBufferExists() throws {
        var data = try [UInt8](Fixtures.data("jpeg/baseline.jpg"))
        // Rewrite the SOF0 frame header to 65500 x 65500, the largest libjpeg-turbo accepts.
        let sof = try #require((0..<data.count - 9).first { data[$0] == 0xFF && data[$0 + 1] == 0xC0 })
        data[sof + 5...sof + 8] = [0xFF, 0xDC, 0xFF, 0xDC]
        let pixelStepRan = Locked(false)
        var functions = CodecFunctions.jpeg
        functions.makeImage = { _, _, _ in
            pixelStepRan.withLock { $0 = true }
            return TestImages.solid(width: 1, height: 1)
        }
        let error = try #require(throws: ImageDecodingError.self) {
            try CodecDecoder(format: .jpeg, functions: functions).decode(Data(data))
        }
        #expect(error.code == .tooManyPixels)
        #expect(!pixelStepRan.withLock { $0 })
        // And the production decoder gives the same answer.
        let production = try #require(throws: ImageDecodingError.self) { try decoder.decode(Data(data)) }
        #expect(production.code == .tooManyPixels)
    }

    @Test func garbageCannotBeOpened() throws {
        let error = try #require(throws: ImageDecodingError.self) { try decoder.decode(Data([0xFF, 0xD8, 0xFF, 0x00, 0x01, 0x02])) }
        #expect(error.code == .couldNotOpen)
        #expect((error.underlying as? CodecError)?.library == "libjpeg-turbo", "\(String(describing: error))")
    }

    @Test func truncatedScanStillGivesTheImage() throws {
        let data = try Fixtures.data("jpeg/large.jpg")
        let image = try decoder.decode(data.prefix(data.count * 3 / 4))
        #expect(image.width == 640 && image.height == 480)
        expect(image, x: 2, y: 2, near: [220, 30, 30])
    }

    @Test(arguments: ["baseline.jpg", "progressive.jpg", "gray.jpg", "cmyk.jpg", "orientation6.jpg"])
    func survivesTruncationAndHeaderCorruption(name: String) throws {
        let report = DecoderVerifier.verify(decoder, on: try Fixtures.data("jpeg/\(name)"), headerLength: 200)
        #expect(report.failures.isEmpty, "\(report.failures)")
    }
}

/// The orientation transform on a bitmap whose every pixel differs.
@Suite struct ImageOrientationTests {
    let image = TestImages.gradient(width: 3, height: 2)

    private func corners(_ image: Image) -> [[UInt8]] {
        [(0, 0), (image.width - 1, 0), (0, image.height - 1), (image.width - 1, image.height - 1)]
            .map { Array(image.pixel(x: $0.0, y: $0.1)) }
    }

    @Test func everyOrientationMovesTheCornersWhereEXIFSays() {
        let (tl, tr, bl, br) = (corners(image)[0], corners(image)[1], corners(image)[2], corners(image)[3])
        let expected: [ImageOrientation: [[UInt8]]] = [
            .up: [tl, tr, bl, br],
            .upMirrored: [tr, tl, br, bl],
            .down: [br, bl, tr, tl],
            .downMirrored: [bl, br, tl, tr],
            .leftMirrored: [tl, bl, tr, br],
            .right: [bl, tl, br, tr],
            .rightMirrored: [br, tr, bl, tl],
            .left: [tr, br, tl, bl],
        ]
        for orientation in ImageOrientation.allCases {
            let turned = image.applying(orientation)
            #expect(turned.width == (orientation.swapsDimensions ? 2 : 3), "\(orientation)")
            #expect(corners(turned) == expected[orientation], "\(orientation)")
        }
    }

    @Test func quarterTurnsFourTimesGiveTheOriginal() {
        var turned = image
        for _ in 0..<4 { turned = turned.applying(.right) }
        #expect(turned == image)
    }
}
