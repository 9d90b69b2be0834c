import Foundation
import Imago
import ImagoCodecs
import ImagoTesting
import ImagoTestingSupport
import Testing

/// Damaged files that browsers and Pillow show, decoded as the README's
/// tolerance rules say: the `damaged-*` fixtures (made by
/// `scripts/fixtures/make-damage-fixtures.py`, with Pillow's decodes) and
/// committed fixtures damaged here the same way.
@Suite struct DamagedFileTests {
    // MARK: JPEG: warnings are not errors

    @Test(arguments: ["damaged-jpeg-junk.jpg", "damaged-jpeg-ff00.jpg", "damaged-jpeg-short-app14.jpg", "damaged-jpeg-broken-app13.jpg"])
    func extraneousBytesInTheHeaderDecodeAsPillowDecodes(file: String) throws {
        let data = try Fixtures.data("tolerance/\(file)")
        let image = try ImageDecoders.all.decode(data)
        #expect(!image.isPartial)
        assertImage(image, matches: try referenceImage("tolerance/\(file).pillow.png"), .within(levels: 1), name: file)
        #expect(try ImageDecoders.info(for: data).width == 96)
        #expect(try !ImageDecoders.all.decode(data, options: ImageDecodingOptions(maximumPixelSize: 24)).isPartial)
    }

    @Test func junkInTheHeaderDoesNotHideAScanThatEndsEarly() throws {
        // libjpeg-turbo keeps only its first warning ("extraneous bytes"); the missing data is still seen.
        let image = try ImageDecoders.all.decode(try Fixtures.data("tolerance/damaged-jpeg-junk-truncated.jpg"))
        #expect(image.isPartial)
        assertImage(image, matches: try referenceImage("tolerance/damaged-jpeg-junk-truncated.jpg.pillow.png"), .within(levels: 1))
    }

    @Test(arguments: [[0x68, 0x69], [0xFF, 0x00], [0x00, 0xFF, 0x00, 0x01, 0xFF, 0xFF]] as [[UInt8]])
    func junkBeforeAnyHeaderMarkerGivesTheSamePixelsAndOrientation(junk: [UInt8]) throws {
        // orientation6.jpg: APP0, APP1 (EXIF, orientation 6) and the usual tables; junk before every marker
        // after APP0 (a file that starts FF D8 FF is what sniffing, Pillow and browsers take for a JPEG).
        let clean = [UInt8](try Fixtures.data("jpeg/orientation6.jpg"))
        var offset = 4 + (Int(clean[4]) << 8 | Int(clean[5]))
        var damaged = Array(clean[0..<offset])
        while clean[offset + 1] != 0xDA {
            let end = offset + 2 + (Int(clean[offset + 2]) << 8 | Int(clean[offset + 3]))
            damaged += junk + clean[offset..<end]
            offset = end
        }
        damaged += junk + clean[offset...]
        let expected = try ImageDecoders.jpeg().decode(Data(clean))
        let image = try ImageDecoders.jpeg().decode(Data(damaged))
        #expect(image == expected && !image.isPartial)
        #expect(try ImageDecoders.info(for: Data(damaged)).orientation == .right)
        // Cut inside its scan, it says so.
        #expect(try ImageDecoders.jpeg().decode(Data(damaged.prefix(damaged.count - 10))).isPartial)
    }

    // MARK: GIF: LZW code sizes above 8

    @Test func wideLZWCodeSizesDecodeAsPillowDecodes() throws {
        let data = try Fixtures.data("tolerance/damaged-gif-wide-lzw.gif")
        let image = try ImageDecoders.gif().decode(data)
        #expect(image.frames.count == 2 && image.frames.map(\.duration) == [0.2, 0.2] && image.loopCount == 0)
        let (first, second) = (try referenceImage("tolerance/damaged-gif-wide-lzw.gif.pillow.png"),
                               try referenceImage("tolerance/damaged-gif-wide-lzw.gif.pillow.frame1.png"))
        assertImage(image.derived(frame: 0), matches: first, .exact, name: "frame 0")
        assertImage(image.derived(frame: 1), matches: second, .exact, name: "frame 1")
        let alone = try ImageDecoders.gif().decode(data, options: ImageDecodingOptions(frameIndex: 1))
        assertImage(alone, matches: second, .exact, name: "frame 1 alone")
    }

    @Test func aDamagedWideLZWFrameFailsOrKeepsTheWholeFrames() throws {
        let data = try Fixtures.data("tolerance/damaged-gif-wide-lzw.gif")
        let report = DecoderVerifier.verify(ImageDecoders.gif(), on: data, headerLength: 800)
        #expect(report.failures.isEmpty, "\(report.failures)")
        // Cut inside frame 1's raster: frame 0 stays.
        let cut = try ImageDecoders.gif().decode(data.prefix(data.count - 1_000))
        #expect(cut.frames.count == 1)
        assertImage(cut, matches: try referenceImage("tolerance/damaged-gif-wide-lzw.gif.pillow.png"), .exact)
    }

    // MARK: PNG: damaged ancillary chunks are skipped

    @Test(arguments: ["damaged-png-crc-text.png", "damaged-png-crc-iccp.png", "damaged-png-crc-after-idat.png",
                      "damaged-png-length-gama.png", "damaged-png-length-after-idat.png"])
    func aDamagedAncillaryChunkIsSkipped(file: String) throws {
        let image = try ImageDecoders.all.decode(try Fixtures.data("tolerance/\(file)"), options: ImageDecodingOptions(colorManagement: .keepOriginal))
        // Every file is the same picture; Pillow refuses the last one even with LOAD_TRUNCATED_IMAGES.
        assertImage(image, matches: try referenceImage("tolerance/damaged-png-crc-after-idat.png.pillow.png"), .exact, name: file)
        #expect(!image.isPartial)
        #expect(image.colorProfile == nil, "the damaged iCCP chunk is not used")
    }

    @Test(arguments: ["ct1n0g04.png", "ctzn0g04.png", "cm7n0g04.png", "cten0g04.png"])
    func aTextOrTimeChunkWithABadCRCChangesNothing(file: String) throws {
        let clean = [UInt8](try Fixtures.data("pngsuite/\(file)"))
        let expected = try ImageDecoders.png().decode(Data(clean))
        let ancillary = PNGChunks(clean).list.filter { $0.type.first!.isLowercase && $0.type != "gAMA" }
        #expect(!ancillary.isEmpty)
        for chunk in ancillary {
            var damaged = clean
            damaged[chunk.end - 1] ^= 0x5A
            #expect(try ImageDecoders.png().decode(Data(damaged)) == expected, "\(chunk.type)")
        }
    }

    @Test(arguments: [("gAMA", 5), ("gAMA", 3), ("cHRM", 31), ("sRGB", 2), ("pHYs", 8), ("tIME", 6), ("sBIT", 7), ("bKGD", 5), ("eXIf", 3)])
    func anAncillaryChunkOfTheWrongLengthIsSkipped(type: String, length: Int) throws {
        // basn2c08: 8-bit RGB without ancillary chunks; the chunk goes before IDAT, its CRC right.
        let clean = [UInt8](try Fixtures.data("pngsuite/basn2c08.png"))
        let expected = try ImageDecoders.png().decode(Data(clean))
        let at = PNGChunks(clean).list.first { $0.type == "IDAT" }!.start
        let damaged = Array(clean[..<at]) + HandmadePNG.chunk(type, (0..<length).map { UInt8($0 * 37 % 256) }) + clean[at...]
        #expect(try ImageDecoders.png().decode(Data(damaged)) == expected)
    }

    @Test func aCriticalChunkWithABadCRCStillFails() throws {
        let clean = [UInt8](try Fixtures.data("pngsuite/basn3p04.png"))
        for chunk in PNGChunks(clean).list where ["IHDR", "PLTE", "IDAT"].contains(chunk.type) {
            var damaged = clean
            damaged[chunk.end - 1] ^= 0x5A
            #expect(throws: ImageDecodingError.self, "\(chunk.type)") { try ImageDecoders.png().decode(Data(damaged)) }
        }
    }
}

/// The chunks of a PNG, walked by their length fields.
struct PNGChunks {
    /// One chunk: its type and the range from its length field to its CRC's end.
    struct Chunk {
        let type: String
        let start: Int
        let end: Int
    }

    let list: [Chunk]

    init(_ bytes: [UInt8]) {
        var chunks: [Chunk] = []
        var offset = 8
        while offset + 12 <= bytes.count {
            let length = Int(bytes[offset]) << 24 | Int(bytes[offset + 1]) << 16 | Int(bytes[offset + 2]) << 8 | Int(bytes[offset + 3])
            guard offset + 12 + length <= bytes.count else { break }
            chunks.append(Chunk(type: String(decoding: bytes[offset + 4..<offset + 8], as: UTF8.self), start: offset, end: offset + 12 + length))
            offset += 12 + length
        }
        list = chunks
    }
}
