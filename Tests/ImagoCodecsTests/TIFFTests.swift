import Foundation
import Imago
import ImagoCodecs
import ImagoTesting
import Testing

/// TIFF through libtiff: the encoder's files read back exactly, the
/// layouts only libtiff's RGBA path reads, the orientation, the pixel
/// limit from the header, and libtiff's errors as typed errors.
@Suite struct TIFFTests {
    let decoder = ImageDecoders.tiff()

    /// A translucent gradient: alpha falls from left to right.
    static let translucent: Image = {
        let gradient = TestImages.gradient(width: 23, height: 9)
        return Image(width: 23, height: 9, pixelFormat: .rgba8,
                     pixels: gradient.pixels.enumerated().map { $0.offset % 4 == 3 ? UInt8(255 - ($0.offset / 4 % 23) * 11) : $0.element })
    }()

    @Test(arguments: TIFFEncoder.Compression.allCases, PixelFormat.allCases)
    func everyPixelFormatRoundTripsExactly(compression: TIFFEncoder.Compression, format: PixelFormat) throws {
        let image = Self.translucent.converted(to: format)
        let data = try ImageEncoders.tiff(compression: compression).encode(image)
        #expect(ImageFormat(sniffing: data) == .tiff)
        let decoded = try ImageDecoders.all.decode(data)
        #expect(decoded.pixelFormat == format)
        #expect(decoded == image)
        let info = try ImageDecoders.info(for: data)
        #expect(info.format == .tiff && info.width == 23 && info.height == 9 && info.frameCount == 1)
    }

    @Test func theProfileIsEmbeddedAndReadBack() throws {
        var image = TestImages.gradient(width: 8, height: 8).converted(to: .rgb8)
        image.colorProfile = ColorProfile(data: try Fixtures.data("color/adobe-rgb.icc"))
        let data = try ImageEncoders.tiff().encode(image)
        #expect(try decoder.decode(data, options: ImageDecodingOptions(colorManagement: .keepOriginal)).colorProfile == image.colorProfile)
        #expect(try decoder.decode(data).colorProfile == nil)   // converted to sRGB
    }

    @Test func sixteenBitsGoThroughTheRGBAPath() throws {
        // 2x1 RGB, 16 bits a sample, little-endian: red, then a middle gray.
        let tiff = TIFFBuilder(width: 2, height: 1, samples: 3, bitsPerSample: 16, photometric: 2,
                               pixels: littleEndian(0xFFFF, 2) + [0, 0, 0, 0] + [UInt8](repeating: 0x80, count: 6))
        let image = try decoder.decode(tiff.data)
        #expect(image.pixelFormat == .rgb8)
        #expect(image.pixel(x: 0, y: 0) == [255, 0, 0])
        #expect(image.pixel(x: 1, y: 0) == [128, 128, 128])
    }

    @Test func samplesLibtiffsRGBAReaderRefusesAreScaledToEightBits() throws {
        // 12-bit gray, packed: 0xFFF, 0x800 (3 bytes); scaled over 0...4095.
        let twelve = TIFFBuilder(width: 2, height: 1, samples: 1, bitsPerSample: 12, photometric: 1, pixels: [0xFF, 0xF8, 0x00])
        #expect(try decoder.decode(twelve.data).pixels == [255, 128])
        // 32-bit unsigned gray: the top and the middle of the range.
        let wide = TIFFBuilder(width: 2, height: 1, samples: 1, bitsPerSample: 32, photometric: 1,
                               pixels: littleEndian(0xFFFF_FFFF, 4) + littleEndian(0x8000_0000, 4))
        #expect(try decoder.decode(wide.data).pixels == [255, 128])
        // 32-bit floats (sample format 3): 0...1, clamped.
        var float = TIFFBuilder(width: 3, height: 1, samples: 1, bitsPerSample: 32, photometric: 1,
                                pixels: [Float(0.5), 2, -1].flatMap { littleEndian(Int($0.bitPattern), 4) })
        float.sampleFormat = 3
        #expect(try decoder.decode(float.data).pixels == [128, 255, 0])
    }

    @Test func aPaletteImageIsExpanded() throws {
        let map = [0xFFFF, 0] + [0, 0xFFFF] + [0, 0]   // index 0 red, 1 green
        let tiff = TIFFBuilder(width: 2, height: 1, samples: 1, bitsPerSample: 1, photometric: 3, colorMap: map, pixels: [0b0100_0000])
        let image = try decoder.decode(tiff.data)
        #expect(image.pixel(x: 0, y: 0) == [255, 0, 0] && image.pixel(x: 1, y: 0) == [0, 255, 0])
    }

    @Test func associatedAlphaComesOutStraight() throws {
        // Premultiplied: half-transparent white stored as 128, 128, 128, 128.
        let tiff = TIFFBuilder(width: 1, height: 1, samples: 4, photometric: 2, extraSamples: [1], pixels: [128, 128, 128, 128])
        let image = try decoder.decode(tiff.data)
        #expect(image.pixelFormat == .rgba8 && image.pixel(x: 0, y: 0) == [255, 255, 255, 128])
    }

    @Test func aWhiteIsZeroImageIsInverted() throws {
        let tiff = TIFFBuilder(width: 2, height: 1, samples: 1, photometric: 0, pixels: [0, 255])
        let image = try decoder.decode(tiff.data)
        #expect(image.pixelFormat == .gray8 && image.pixels == [255, 0])
    }

    @Test(arguments: [(1, [0, 1, 2, 3]), (3, [3, 2, 1, 0]), (6, [2, 0, 3, 1]), (8, [1, 3, 0, 2])])
    func theOrientationIsApplied(orientation: Int, expected: [UInt8]) throws {
        // 2x2 gray, stored 0 1 / 2 3.
        let tiff = TIFFBuilder(width: 2, height: 2, samples: 1, photometric: 1, orientation: orientation, pixels: [0, 1, 2, 3])
        let image = try decoder.decode(tiff.data)
        #expect(image.pixels == expected)
        #expect(try ImageDecoders.info(for: tiff.data).orientation.rawValue == orientation)
        // The same through the RGBA path (16 bits).
        let wide = TIFFBuilder(width: 2, height: 2, samples: 1, bitsPerSample: 16, photometric: 1, orientation: orientation,
                               pixels: [0, 0, 0, 1, 0, 2, 0, 3])
        #expect(try decoder.decode(wide.data).pixels == expected)
    }

    @Test func theFirstPageIsRead() throws {
        var tiff = TIFFBuilder(width: 1, height: 1, samples: 1, photometric: 1, pixels: [7])
        tiff.nextPages = [TIFFBuilder(width: 3, height: 3, samples: 1, photometric: 1, pixels: [UInt8](repeating: 9, count: 9))]
        let image = try decoder.decode(tiff.data)
        #expect(image.width == 1 && image.pixels == [7])
    }

    @Test func hugeDimensionsAreRefusedFromTheHeader() throws {
        let tiff = TIFFBuilder(width: 100_000, height: 100_000, samples: 3, photometric: 2, pixels: [1, 2, 3])
        let error = try #require(throws: ImageDecodingError.self) { try decoder.decode(tiff.data) }
        #expect(error.code == .tooManyPixels)
        let info = try ImageDecoders.info(for: tiff.data)
        #expect(info.width == 100_000 && info.height == 100_000 && info.format == .tiff)
    }

    @Test func aPageThatEndsEarlyIsAnErrorWithLibtiffsMessage() throws {
        let data = try ImageEncoders.tiff().encode(TestImages.gradient(width: 64, height: 64))
        // The strip's bytes cut: the directory (written last) stays.
        var bytes = [UInt8](data)
        let directory = Int(bytes[4]) | Int(bytes[5]) << 8 | Int(bytes[6]) << 16 | Int(bytes[7]) << 24
        for index in 8..<min(directory, 8 + 600) { bytes[index] = 0xA5 }
        let error = try #require(throws: ImageDecodingError.self) { try decoder.decode(Data(bytes)) }
        #expect(error.code == .couldNotProduceImage)
        let underlying = error.underlying as? CodecError
        #expect(underlying?.library == "libtiff")
        #expect(underlying?.message.isEmpty == false)
    }

    @Test(arguments: [[UInt8]("II*\0".utf8), [UInt8]("MM\0*".utf8) + [0, 0, 0, 8], [UInt8]("II*\0".utf8) + [0xFF, 0xFF, 0xFF, 0x7F]])
    func aBrokenHeaderIsATypedError(bytes: [UInt8]) throws {
        let error = try #require(throws: ImageDecodingError.self) { try decoder.decode(Data(bytes)) }
        #expect(error.code == .couldNotOpen)
        #expect((error.underlying as? CodecError)?.library == "libtiff")
    }

    @Test func everyTruncationAndCorruptedHeaderByteGivesATypedError() throws {
        let files = [
            try ImageEncoders.tiff(compression: .lzw).encode(Self.translucent),
            TIFFBuilder(width: 3, height: 2, samples: 3, bitsPerSample: 16, photometric: 2, orientation: 6, pixels: [UInt8](repeating: 0x40, count: 36)).data,
        ]
        for file in files {
            let report = DecoderVerifier.verify(decoder, on: file, headerLength: min(file.count, 400))
            #expect(report.failures.isEmpty, "\(report.failures)")
        }
    }
}
