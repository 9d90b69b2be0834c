import Foundation
import Imago
import ImagoCodecs
import ImagoTesting
import Testing

/// The PNG decoder over libspng, against PngSuite and hostile input.
@Suite struct PNGDecoderTests {
    struct Reference: Decodable {
        let width: Int
        let height: Int
        let format: String
        let fnv1a64: String
    }

    static let references: [String: Reference] = {
        let data = try! Fixtures.data("pngsuite-reference.json")
        return try! JSONDecoder().decode([String: Reference].self, from: data)
    }()

    static let validFiles = (try? Fixtures.pngSuite().filter { !$0.hasPrefix("x") }) ?? []
    static let corruptFiles = (try? Fixtures.pngSuite().filter { $0.hasPrefix("x") }) ?? []

    let decoder = ImageDecoders.png()

    @Test func suiteIsPresent() {
        #expect(Self.validFiles.count == 161)
        #expect(Self.corruptFiles.count == 14)
        #expect(Set(Self.references.keys) == Set(Self.validFiles))
    }

    @Test(arguments: validFiles)
    func validSuiteFileDecodesToTheReferencePixels(name: String) throws {
        let reference = try #require(Self.references[name])
        // The references come from Pillow, which ignores gAMA: compare the stored pixels.
        let image = try decoder.decode(try Fixtures.data("pngsuite/\(name)"), options: ImageDecodingOptions(colorManagement: .keepOriginal))
        #expect(image.width == reference.width)
        #expect(image.height == reference.height)
        #expect(image.pixelFormat.rawValue == reference.format)
        #expect(image.bytesPerRow == image.width * image.pixelFormat.bytesPerPixel)
        #expect(fnv1a64(image.pixels) == reference.fnv1a64)
    }

    @Test(arguments: corruptFiles)
    func corruptSuiteFileIsRejectedWithATypedError(name: String) throws {
        let decoding = try #require(throws: ImageDecodingError.self, "\(name)") {
            try decoder.decode(try Fixtures.data("pngsuite/\(name)"))
        }
        #expect(decoding.format == .png)
        #expect(decoding.underlying is CodecError)
    }

    @Test func transparencyChunkGivesAnAlphaChannel() throws {
        // tbrn2c08: RGB with a tRNS colour; pixels of that colour become transparent.
        let image = try decoder.decode(try Fixtures.data("pngsuite/tbrn2c08.png"))
        #expect(image.pixelFormat == .rgba8)
        #expect(image.pixels.enumerated().contains { $0.offset % 4 == 3 && $0.element == 0 })
    }

    @Test func sixteenBitImagesAreReducedToEightBits() throws {
        let image = try decoder.decode(try Fixtures.data("pngsuite/basn6a16.png"))
        #expect(image.pixelFormat == .rgba8)
        #expect(image.pixels.count == 32 * 32 * 4)
    }

    @Test func hugeDeclaredSizeFailsWithThePixelLimitBeforeAnyPixelBufferExists() throws {
        let data = Self.png(width: 100_000, height: 100_000)
        // The real header reader, and a pixel step that records whether it ran.
        let pixelStepRan = Locked(false)
        var functions = CodecFunctions.png
        functions.makeImage = { _, _, _ in
            pixelStepRan.withLock { $0 = true }
            return TestImages.solid(width: 1, height: 1)
        }
        let error = try #require(throws: ImageDecodingError.self) { try CodecDecoder(format: .png, functions: functions).decode(data) }
        #expect(error.code == .tooManyPixels)
        #expect(!pixelStepRan.withLock { $0 })
        // And the production decoder gives the same answer.
        let production = try #require(throws: ImageDecodingError.self) { try decoder.decode(data) }
        #expect(production.code == .tooManyPixels)
    }

    @Test func pixelLimitIsConfigurable() throws {
        let data = try Fixtures.data("pngsuite/basn2c08.png")
        let error = try #require(throws: ImageDecodingError.self) {
            try decoder.decode(data, options: ImageDecodingOptions(maximumPixelCount: 1023))
        }
        #expect(error.code == .tooManyPixels)
        _ = try decoder.decode(data, options: ImageDecodingOptions(maximumPixelCount: 1024))
    }

    @Test func aLimitSmallerThanOneSideIsStillDecidedByTheDecoder() throws {
        // Given a 32x32 image and a limit smaller than its width
        let data = try Fixtures.data("pngsuite/basn2c08.png")
        // When it is decoded
        let error = try #require(throws: ImageDecodingError.self) {
            try decoder.decode(data, options: ImageDecodingOptions(maximumPixelCount: 16))
        }
        // Then the pixel limit rejects it (libspng's own limits do not turn it into "could not open")
        #expect(error.code == .tooManyPixels)
    }

    @Test func libspngRefusesToDecodeMoreThanTheApprovedHeader() throws {
        // Given the real table and a header made to look smaller than the file's
        let table = CodecFunctions.png
        var opened = try table.open(try Fixtures.data("pngsuite/basn2c08.png"), ImageDecodingOptions())
        opened.width = 16
        // When its pixels are made, libspng's image limits (set from that header) refuse the file
        let error = try #require(throws: CodecError.self) { try table.makeImage(opened, nil, ImageDecodingOptions()) }
        #expect(error.library == "libspng")
    }

    @Test func garbageCannotBeOpened() throws {
        let error = try #require(throws: ImageDecodingError.self) { try decoder.decode(Data("not a png at all".utf8)) }
        #expect(error.code == .couldNotOpen)
    }

    @Test func frameZeroIsTheImageAndFrameOneDoesNotExist() throws {
        let data = try Fixtures.data("pngsuite/basn2c08.png")
        _ = try decoder.decode(data, options: ImageDecodingOptions(frameIndex: 0))
        let error = try #require(throws: ImageDecodingError.self) { try decoder.decode(data, options: ImageDecodingOptions(frameIndex: 1)) }
        #expect(error.code == .frameOutOfRange)
    }

    @Test(arguments: ["basn0g01.png", "basn2c16.png", "basi3p08.png", "basn6a08.png", "tbrn2c08.png", "s09n3p02.png"])
    func survivesTruncationAndHeaderCorruption(name: String) throws {
        let report = DecoderVerifier.verify(decoder, on: try Fixtures.data("pngsuite/\(name)"))
        #expect(report.failures.isEmpty, "\(report.failures)")
        #expect(report.cases.count > 100)
    }

    /// A PNG whose IHDR declares `width` x `height`, with no image data.
    static func png(width: UInt32, height: UInt32) -> Data {
        var ihdr = Data("IHDR".utf8)
        for value in [width, height] { withUnsafeBytes(of: value.bigEndian) { ihdr.append(contentsOf: $0) } }
        ihdr.append(contentsOf: [8, 6, 0, 0, 0])
        var data = Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0, 13])
        data.append(ihdr)
        withUnsafeBytes(of: crc32(ihdr).bigEndian) { data.append(contentsOf: $0) }
        return data
    }
}

/// FNV-1a, 64 bits, as hex: the checksum the reference script writes.
func fnv1a64(_ bytes: [UInt8]) -> String {
    var hash: UInt64 = 0xCBF2_9CE4_8422_2325
    for byte in bytes {
        hash = (hash ^ UInt64(byte)) &* 0x100_0000_01B3
    }
    let hex = String(hash, radix: 16)
    return String(repeating: "0", count: 16 - hex.count) + hex
}

/// The CRC-32 of PNG chunks.
func crc32(_ data: Data) -> UInt32 {
    var crc: UInt32 = 0xFFFF_FFFF
    for byte in data {
        crc ^= UInt32(byte)
        for _ in 0..<8 { crc = (crc >> 1) ^ (crc & 1 == 1 ? 0xEDB8_8320 : 0) }
    }
    return ~crc
}
