import Foundation
import Imago
import ImagoCodecs
import ImagoTesting
import Testing

/// PNG thumbnails are decoded row by row and downscaled as the rows arrive.
/// They must equal, bit for bit, a full decode followed by the resize and
/// crop ``CodecDecoder`` applies, and fail exactly as a full decode fails.
@Suite struct PNGThumbnailTests {
    static let thumbnails = [
        Thumbnail(maximumPixelSize: 16), Thumbnail(maximumPixelSize: 1), Thumbnail(width: 7, height: 3),
        Thumbnail(width: 10, height: 20, mode: .fill), Thumbnail(width: 10, height: 20, mode: .crop),
        Thumbnail(width: 1, height: 1, mode: .crop), Thumbnail(width: 31, height: 33, mode: .crop),
        Thumbnail(maximumPixelSize: 16, filter: .lanczos3), Thumbnail(width: 10, height: 20, mode: .crop, filter: .mitchell),
        Thumbnail(width: 12, height: 12, filter: .lanczos3, linearLight: true),
    ]

    /// Without colour conversion: most PngSuite files carry `gAMA`, and a
    /// thumbnail is converted after scaling (fewer pixels) while the full
    /// decode is converted before the test's resize, so the two would differ
    /// by rounding. These tests are about the rows and the resampler.
    let decoder = ImageDecoders.png(functions: .png, colorConversion: nil)

    @Test(arguments: PNGDecoderTests.validFiles)
    func suiteThumbnailsEqualAFullDecodeResized(name: String) throws {
        let data = try Fixtures.data("pngsuite/\(name)")
        let full = try decoder.decode(data)
        for thumbnail in Self.thumbnails {
            let streamed = try decoder.decode(data, options: ImageDecodingOptions(thumbnail: thumbnail))
            #expect(streamed == Self.expected(full, thumbnail), "\(name) \(thumbnail)")
        }
    }

    @Test(arguments: [(PixelFormat.rgb8, 640, 480), (.rgba8, 333, 517), (.rgb8, 1, 300), (.rgba8, 300, 1)])
    func largerImagesStreamToTheSameThumbnail(format: PixelFormat, width: Int, height: Int) throws {
        let source = Self.noise(width: width, height: height, format: format)
        let data = try ImageEncoders.png(compression: .fast).encode(source)
        #expect(try decoder.decode(data) == source)
        for thumbnail in Self.thumbnails + [Thumbnail(maximumPixelSize: 256), Thumbnail(width: 256, height: 100, mode: .fill)] {
            let streamed = try decoder.decode(data, options: ImageDecodingOptions(thumbnail: thumbnail))
            #expect(streamed == Self.expected(source, thumbnail), "\(width)x\(height) \(format) \(thumbnail)")
        }
    }

    @Test func aLargeImageStreamsToTheSameThumbnail() throws {
        // 4.3 megapixels over many IDAT chunks, inflated and downscaled a row at a time.
        let source = TestImages.gradient(width: 2_100, height: 2_050)
        let data = try ImageEncoders.png(compression: .fast).encode(source)
        for thumbnail in [Thumbnail(maximumPixelSize: 64), Thumbnail(width: 300, height: 100, mode: .crop)] {
            let streamed = try decoder.decode(data, options: ImageDecodingOptions(thumbnail: thumbnail))
            #expect(streamed == Self.expected(source, thumbnail), "\(thumbnail)")
        }
    }

    @Test(arguments: PNGDecoderTests.corruptFiles)
    func corruptSuiteFilesFailAsThumbnailsToo(name: String) throws {
        let data = try Fixtures.data("pngsuite/\(name)")
        let decoding = try #require(throws: ImageDecodingError.self, "\(name)") {
            try decoder.decode(data, options: ImageDecodingOptions(maximumPixelSize: 4))
        }
        #expect(decoding.underlying is CodecError)
    }

    @Test func brokenChecksumAfterTheImageDataFailsTheThumbnail() throws {
        var bytes = [UInt8](try ImageEncoders.png().encode(TestImages.gradient(width: 64, height: 48)))
        bytes[bytes.count - 1] ^= 0xFF   // IEND's CRC
        let data = Data(bytes)
        for options in [ImageDecodingOptions(), ImageDecodingOptions(maximumPixelSize: 8)] {
            let error = try #require(throws: ImageDecodingError.self, "\(options)") { try decoder.decode(data, options: options) }
            #expect(error.underlying is CodecError, "\(options): \(error)")
        }
    }

    @Test func truncatedImageDataFailsTheThumbnail() throws {
        let bytes = [UInt8](try ImageEncoders.png(compression: .fast).encode(Self.noise(width: 200, height: 150, format: .rgb8)))
        let data = Data(bytes.prefix(bytes.count / 2))
        let error = try #require(throws: ImageDecodingError.self) {
            try decoder.decode(data, options: ImageDecodingOptions(maximumPixelSize: 32))
        }
        #expect(error.code == .couldNotProduceImage, "\(error)")
    }

    /// What ``CodecDecoder`` makes of a full decode: resized to the
    /// thumbnail's scaled size, then centre-cropped for `.crop`.
    static func expected(_ full: Image, _ thumbnail: Thumbnail) -> Image {
        let scaled = thumbnail.scaledSize(width: full.width, height: full.height)
        var image = full
        if full.width > scaled.width || full.height > scaled.height {
            image = full.resized(width: min(scaled.width, full.width), height: min(scaled.height, full.height), filter: thumbnail.filter,
                                 linearLight: thumbnail.linearLight)
        }
        if thumbnail.mode == .crop && (image.width > thumbnail.width || image.height > thumbnail.height) {
            let width = min(image.width, thumbnail.width), height = min(image.height, thumbnail.height)
            image = image.cropped(x: (image.width - width) / 2, y: (image.height - height) / 2, width: width, height: height)
        }
        return image
    }

    /// Thumbnails of an animation, of five shapes, against ``expected(_:_:)``
    /// of a full decode: every frame with its duration and the loop count,
    /// one frame (the third, also drawn on the full canvas first), and
    /// frame by frame through `decodeFrames`.
    static func checkAnimationThumbnails(_ decoder: CodecDecoder, _ data: Data, loopCount: Int) throws {
        let full = try decoder.decode(data)
        let thumbnails = [Thumbnail(maximumPixelSize: 16), Thumbnail(width: 10, height: 20, mode: .crop),
                          Thumbnail(width: 40, height: 9), Thumbnail(maximumPixelSize: 1), Thumbnail(maximumPixelSize: 100)]
        for thumbnail in thumbnails {
            let expected = expected(full, thumbnail)
            let image = try decoder.decode(data, options: ImageDecodingOptions(thumbnail: thumbnail))
            #expect(image == expected, "\(thumbnail)")
            #expect(image.frames.map(\.duration) == full.frames.map(\.duration) && image.loopCount == loopCount)
            let third = try decoder.decode(data, options: ImageDecodingOptions(frameIndex: 2, thumbnail: thumbnail))
            #expect(third.pixels == expected.frames[2].pixels, "frame 2, \(thumbnail)")
            var delivered: [[UInt8]] = []
            try decoder.decodeFrames(data, options: ImageDecodingOptions(thumbnail: thumbnail), maximumFrames: full.frames.count) { frame in
                delivered.append(frame.pixels)
                return true
            }
            #expect(delivered == expected.frames.map(\.pixels), "frames, \(thumbnail)")
        }
    }

    /// Random pixels, fully random alpha included, so any mistake in the
    /// weighting shows.
    static func noise(width: Int, height: Int, format: PixelFormat) -> Image {
        var generator = SeededGenerator(seed: UInt64(width * 7919 + height))
        let pixels = (0..<width * height * format.bytesPerPixel).map { _ in UInt8.random(in: 0...255, using: &generator) }
        return Image(width: width, height: height, pixelFormat: format, pixels: pixels)
    }
}
