import Foundation
import Imago
import ImagoCodecs
import ImagoTesting
import Testing

/// The colours of the fixtures, as written by `scripts/fixtures/make-webp-fixtures.py`.
enum WebPFixtureColours {
    static let red: [UInt8] = [220, 30, 40]
    static let green: [UInt8] = [20, 200, 60]
    static let blue: [UInt8] = [30, 50, 210]
    static let white: [UInt8] = [250, 250, 250]
}

/// The pixel at (`x`, `y`) of frame `frame` of `image`.
func pixel(of image: Image, frame: Int = 0, x: Int, y: Int) -> [UInt8] {
    let start = y * image.bytesPerRow + x * image.pixelFormat.bytesPerPixel
    return Array(image.frames[frame].pixels[start..<start + image.pixelFormat.bytesPerPixel])
}

/// The WebP decoder over libwebp (stills) and libwebpdemux (animations):
/// exact pixels from lossless files, composited frames, limits checked before decoding, and
/// typed errors for damaged files.
@Suite struct WebPDecoderTests {
    typealias Colour = WebPFixtureColours
    let decoder = CodecDecoder(format: .webp, functions: .webp)
    let fixtures = ["lossless-rgb.webp", "lossy-rgb.webp", "lossless-alpha.webp", "animated.webp"]

    // MARK: Still images

    @Test func losslessImageDecodesToExactRGBPixels() throws {
        let image = try decoder.decode(Fixtures.data("webp/lossless-rgb.webp"))
        #expect(image.width == 8 && image.height == 8)
        #expect(image.pixelFormat == .rgb8)
        #expect(image.bytesPerRow == 24)
        #expect(image.frames.count == 1 && image.loopCount == 1 && image.frames[0].duration == nil)
        let quadrants = [Colour.red, Colour.green, Colour.blue, Colour.white]
        for y in 0..<8 {
            for x in 0..<8 {
                #expect(pixel(of: image, x: x, y: y) == quadrants[(y / 4) * 2 + x / 4], "pixel (\(x), \(y))")
            }
        }
    }

    @Test func lossyImageDecodesToPixelsCloseToTheOriginal() throws {
        let image = try decoder.decode(Fixtures.data("webp/lossy-rgb.webp"))
        #expect(image.width == 16 && image.height == 16)
        #expect(image.pixelFormat == .rgb8)
        let quadrants = [Colour.red, Colour.green, Colour.blue, Colour.white]
        // The centre 4x4 of each 8x8 block, away from chroma bleeding at the edges.
        for y in 0..<16 where (2..<6).contains(y % 8) {
            for x in 0..<16 where (2..<6).contains(x % 8) {
                let expected = quadrants[(y / 8) * 2 + x / 8]
                let actual = pixel(of: image, x: x, y: y)
                #expect(zip(actual, expected).allSatisfy { abs(Int($0) - Int($1)) <= 8 }, "pixel (\(x), \(y)): \(actual) vs \(expected)")
            }
        }
    }

    @Test func losslessImageWithAlphaDecodesToExactRGBA() throws {
        let image = try decoder.decode(Fixtures.data("webp/lossless-alpha.webp"))
        #expect(image.pixelFormat == .rgba8)
        let quadrants = [Colour.red + [255], Colour.green + [128], Colour.blue + [64], Colour.white + [0]]
        for y in 0..<8 {
            for x in 0..<8 {
                #expect(pixel(of: image, x: x, y: y) == quadrants[(y / 4) * 2 + x / 4], "pixel (\(x), \(y))")
            }
        }
    }

    @Test func frameZeroOfAStillImageIsTheImage() throws {
        let data = try Fixtures.data("webp/lossless-rgb.webp")
        let whole = try decoder.decode(data)
        let first = try decoder.decode(data, options: ImageDecodingOptions(frameIndex: 0))
        #expect(first == whole)
    }

    // MARK: Animations

    @Test func animationHasItsFrameCountDurationsAndLoopCount() throws {
        let image = try decoder.decode(Fixtures.data("webp/animated.webp"))
        #expect(image.width == 8 && image.height == 8)
        #expect(image.pixelFormat == .rgba8)
        #expect(image.frames.count == 3)
        #expect(image.frames.map(\.duration) == [0.1, 0.2, 0.3])
        #expect(image.loopCount == 3)
    }

    @Test func animationFramesAreCompositedCanvases() throws {
        let image = try decoder.decode(Fixtures.data("webp/animated.webp"))
        let red = Colour.red + [255], blue = Colour.blue + [255], green = Colour.green + [255]
        // Frames 1 and 2 are stored as 4x4 sub-rectangles; the rest of the
        // canvas must come from the frames before them.
        let expected: [[[UInt8]]] = [
            [red, red, red, red],
            [blue, red, red, red],
            [blue, red, red, green],
        ]
        for frame in 0..<3 {
            for y in 0..<8 {
                for x in 0..<8 {
                    #expect(
                        pixel(of: image, frame: frame, x: x, y: y) == expected[frame][(y / 4) * 2 + x / 4],
                        "frame \(frame), pixel (\(x), \(y))"
                    )
                }
            }
        }
    }

    @Test func frameIndexReturnsThatCompositedFrameAlone() throws {
        let data = try Fixtures.data("webp/animated.webp")
        let all = try decoder.decode(data)
        for index in 0..<3 {
            let one = try decoder.decode(data, options: ImageDecodingOptions(frameIndex: index))
            #expect(one.frames == [all.frames[index]])
            #expect(one.width == 8 && one.height == 8 && one.pixelFormat == .rgba8)
            #expect(one.loopCount == 3)
        }
    }

    @Test func animationCountsEveryFrameAgainstThePixelLimit() throws {
        let data = try Fixtures.data("webp/animated.webp")
        let limit = ImageDecodingOptions(maximumPixelCount: 8 * 8 * 2)
        let error = try #require(throws: ImageDecodingError.self) { try decoder.decode(data, options: limit) }
        #expect(error.code == .tooManyPixels)
        // Frame 2 is composited from frames 0...2: over the limit; frame 1 is within it.
        var lastFrame = limit
        lastFrame.frameIndex = 2
        let composited = try #require(throws: ImageDecodingError.self) { try decoder.decode(data, options: lastFrame) }
        #expect(composited.code == .tooManyPixels)
        var secondFrame = limit
        secondFrame.frameIndex = 1
        #expect(try decoder.decode(data, options: secondFrame).frames.count == 1)
    }

    @Test func animationWithTooManyFramesIsRejected() throws {
        let data = try Fixtures.data("webp/animated.webp")
        let error = try #require(throws: ImageDecodingError.self) {
            try decoder.decode(data, options: ImageDecodingOptions(maximumFrameCount: 2))
        }
        #expect(error.code == .tooManyFrames)
    }

    @Test func missingFrameIsOutOfRange() throws {
        let data = try Fixtures.data("webp/animated.webp")
        let error = try #require(throws: ImageDecodingError.self) { try decoder.decode(data, options: ImageDecodingOptions(frameIndex: 3)) }
        #expect(error.code == .frameOutOfRange)
    }

    // MARK: Hostile input

    @Test func stillHeaderDeclaringAHugeImageIsRejectedBeforeDecoding() throws {
        // A lossless (VP8L) header for 16384x16384 pixels, 268 megapixels, and no pixel data.
        let side = UInt32(16_384 - 1)
        let bits = side | side << 14
        let header: [UInt8] = [0x2F] + littleEndian(bits)
        let data = riff(chunk: "VP8L", payload: header)
        // The real header reader, and a pixel step that must never run.
        var functions = CodecFunctions.webp
        functions.makeImage = { _, _, _ in throw CodecError(library: "test", code: 0, message: "the pixel step ran") }
        let error = try #require(throws: ImageDecodingError.self) { try CodecDecoder(format: .webp, functions: functions).decode(data) }
        #expect(error.code == .tooManyPixels)
    }

    @Test func animationDeclaringAHugeCanvasIsRejectedBeforeDecoding() throws {
        // The animated fixture with its canvas enlarged to 10000x10000: its
        // frames still fit, so only the pixel limit stops it.
        var bytes = try [UInt8](Fixtures.data("webp/animated.webp"))
        bytes.replaceSubrange(24..<30, with: littleEndian24(10_000 - 1) + littleEndian24(10_000 - 1))
        for options in [ImageDecodingOptions(), ImageDecodingOptions(frameIndex: 0)] {
            let error = try #require(throws: ImageDecodingError.self) { try decoder.decode(Data(bytes), options: options) }
            #expect(error.code == .tooManyPixels)
        }
    }

    @Test func animationWithAFrameOutsideTheCanvasCannotBeOpened() throws {
        // The animated fixture with its canvas shrunk to 4x4: the 8x8 first frame overflows it.
        var bytes = try [UInt8](Fixtures.data("webp/animated.webp"))
        bytes.replaceSubrange(24..<30, with: littleEndian24(4 - 1) + littleEndian24(4 - 1))
        let error = try #require(throws: ImageDecodingError.self) { try decoder.decode(Data(bytes)) }
        #expect(error.code == .couldNotOpen)
        #expect((error.underlying as? CodecError)?.library == "libwebp")
    }

    @Test(arguments: [
        Data(),
        Data("not an image at all".utf8),
        TestImages.webpSignature,
        Data("RIFF\u{24}\u{0}\u{0}\u{0}WEBPVP8 \u{18}\u{0}\u{0}\u{0}garbagegarbagegarbage!!!".utf8),
    ])
    func garbageCannotBeOpened(data: Data) throws {
        let error = try #require(throws: ImageDecodingError.self) { try decoder.decode(data) }
        #expect(error.code == .couldNotOpen)
        #expect(error.format == .webp)
        #expect((error.underlying as? CodecError)?.library == "libwebp")
    }

    @Test func truncatedStillImageFailsWithATypedError() throws {
        let data = try Fixtures.data("webp/lossy-rgb.webp")
        let error = try #require(throws: ImageDecodingError.self) { try decoder.decode(data.prefix(data.count - 10)) }
        #expect(error.code == .couldNotOpen || error.code == .couldNotProduceImage)
        #expect(error.underlying is CodecError)
    }

    @Test func verifierFindsNoFailuresOnAnyFixture() throws {
        for name in fixtures {
            let report = DecoderVerifier.verify(decoder, on: try Fixtures.data("webp/\(name)"))
            #expect(report.failures.isEmpty, "\(name): \(report.failures)")
        }
    }
}

/// A RIFF/WEBP file holding one chunk.
func riff(chunk: String, payload: [UInt8]) -> Data {
    let padded = payload + (payload.count.isMultiple(of: 2) ? [] : [0])
    let body = Array("WEBP".utf8) + Array(chunk.utf8) + littleEndian(UInt32(payload.count)) + padded
    return Data(Array("RIFF".utf8) + littleEndian(UInt32(body.count)) + body)
}

func littleEndian(_ value: UInt32) -> [UInt8] {
    (0..<4).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) }
}

func littleEndian24(_ value: UInt32) -> [UInt8] {
    Array(littleEndian(value).prefix(3))
}

@Suite struct WebPThumbnailTests {
    @Test func aStillThumbnailIsScaledByLibwebpToTheExactSize() throws {
        // 120x90 lossless image of two halves: red on the left, blue on the right.
        var pixels = [UInt8]()
        for _ in 0..<90 { for x in 0..<120 { pixels += x < 60 ? [220, 30, 30] : [30, 30, 220] } }
        let data = try WebPEncoder(lossless: true).encode(Image(width: 120, height: 90, pixelFormat: .rgb8, pixels: pixels))
        let image = try CodecDecoder(format: .webp, functions: .webp).decode(data, options: ImageDecodingOptions(maximumPixelSize: 40))
        #expect(image.width == 40 && image.height == 30)
        #expect(image.pixel(x: 2, y: 15) == [220, 30, 30])
        #expect(image.pixel(x: 37, y: 15) == [30, 30, 220])
        // The table itself returned that size: no resize was needed after it.
        let table = CodecFunctions.webp
        let opened = try table.open(data, ImageDecodingOptions())
        let scaled = try table.makeImage(opened, nil, ImageDecodingOptions(maximumPixelSize: 40))
        #expect(scaled.width == 40 && scaled.height == 30)
    }

    /// An animation's thumbnail downscales each frame as libwebp composites
    /// it; the result must be a full decode followed by the resize and crop
    /// CodecDecoder applies, and the table must hand back small frames.
    @Test func animationThumbnailsDownscaleEachFrameAsAFullDecodeThenResizeWould() throws {
        var generator = SeededGenerator(seed: 0x3EB)
        let writer = try WebPAnimationEncoder(quality: 90).makeWriter(width: 61, height: 43, loopCount: 2)
        for index in 0..<4 {
            let pixels = (0..<(61 * 43 * 4)).map { offset in
                offset % 4 == 3 ? 255 : (offset / 4) % 61 < 20 * index ? UInt8(40 * index) : UInt8.random(in: 0...255, using: &generator)
            }
            try writer.add(Image(width: 61, height: 43, pixelFormat: .rgba8, bytesPerRow: 61 * 4, pixels: pixels), duration: 0.05 * Double(index + 1))
        }
        let data = try writer.finish()
        let decoder = CodecDecoder(format: .webp, functions: .webp)
        #expect(try decoder.decode(data).frames.count == 4)
        try PNGThumbnailTests.checkAnimationThumbnails(decoder, data, loopCount: 2)
        let table = CodecFunctions.webp
        let small = try table.makeImage(try table.open(data, ImageDecodingOptions()), nil, ImageDecodingOptions(thumbnail: Thumbnail(maximumPixelSize: 16)))
        let scaled = Thumbnail(maximumPixelSize: 16).scaledSize(width: 61, height: 43)
        #expect(small.width == scaled.width && small.height == scaled.height && small.frames.count == 4)
    }
}
