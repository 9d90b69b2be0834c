import Foundation
import Imago
@testable import ImagoCodecs
import ImagoTesting
import Testing

/// libspng's limits on a PNG's ancillary chunks (16 MiB inflated from one
/// chunk, 64 MiB kept in all) and `ImageDecodingOptions.liftsPNGChunkLimits`
/// (imgproxy's `IMGPROXY_PNG_UNLIMITED`): a file over the standard limits
/// is refused as `tooComplex`, before or after its image data, and decodes
/// with them lifted; lifted, the chunks' memory is still bounded by the
/// pixel limit, so a small compressed chunk cannot inflate without end.
@Suite struct PNGChunkLimitTests {
    static let mebibyte = 1 << 20
    /// The pixels every test file holds: 6x4 RGB.
    static let image = TestImages.gradient(width: 6, height: 4)
    static let plain = [UInt8](try! ImageEncoders.png().encode(image))
    /// What ``plain`` decodes to, with no chunk added.
    static let expected = try! ImageDecoders.png().decode(Data(plain)).pixels
    static let lifted = ImageDecodingOptions(liftsPNGChunkLimits: true)
    /// 20 MiB of metadata text in a `zTXt` chunk of a few kilobytes.
    static let twentyMiBOfText = compressedText(inflatingTo: 20 * mebibyte)

    /// ``plain`` with `before` between `IHDR` and the image data and `after` between the image data and `IEND`.
    static func png(before: [[UInt8]] = [], after: [[UInt8]] = []) -> Data {
        let headerEnd = 8 + 25   // the signature, then IHDR's length, type, 13 bytes and CRC
        let endStart = plain.count - 12
        #expect(String(decoding: plain[(headerEnd - 21)..<(headerEnd - 17)], as: UTF8.self) == "IHDR")
        #expect(String(decoding: plain[(endStart + 4)..<(endStart + 8)], as: UTF8.self) == "IEND")
        var bytes = Array(plain[..<headerEnd])
        bytes.reserveCapacity(plain.count + before.reduce(0) { $0 + $1.count } + after.reduce(0) { $0 + $1.count })
        for chunk in before { bytes += chunk }
        bytes += plain[headerEnd..<endStart]
        for chunk in after { bytes += chunk }
        bytes += plain[endStart...]
        return Data(bytes)
    }

    /// A `tEXt` chunk holding `count` bytes of text.
    static func storedText(_ count: Int) -> [UInt8] {
        HandmadePNG.chunk("tEXt", Array("Comment".utf8) + [0] + [UInt8](repeating: UInt8(ascii: "x"), count: count))
    }

    /// A `zTXt` chunk whose text inflates to `count` bytes of XMP-like
    /// markup (`bomb`: zero bytes, which deflate compresses a thousandfold).
    static func compressedText(inflatingTo count: Int, bomb: Bool = false) -> [UInt8] {
        var text: [UInt8]
        if bomb {
            text = [UInt8](repeating: 0, count: count)
        } else {
            let line = Array(#"<rdf:li xml:lang="x-default">An ordinary description, repeated.</rdf:li>"#.utf8)
            text = []
            text.reserveCapacity(count + line.count)
            while text.count < count { text += line }
            text.removeLast(text.count - count)
        }
        return HandmadePNG.chunk("zTXt", Array("XML:com.adobe.xmp".utf8) + [0, 0] + HandmadePNG.zlib(text))
    }

    @Test func aCompressedChunkOverTheStandardLimitIsRefusedAndDecodesWithTheLimitsLifted() throws {
        let decoder = ImageDecoders.png()
        // 20 MiB of metadata text, in a file of a few kilobytes.
        for (place, file) in [("before the image data", Self.png(before: [Self.twentyMiBOfText])),
                              ("after the image data", Self.png(after: [Self.twentyMiBOfText]))] {
            #expect(file.count < Self.mebibyte, "\(file.count)")
            let refused = try #require(throws: ImageDecodingError.self, "\(place)") { try decoder.decode(file) }
            #expect(refused.code == .tooComplex, "\(place): \(refused)")
            #expect(refused.message.contains("liftsPNGChunkLimits"), "\(place): \(refused.message)")
            #expect((refused.underlying as? CodecError)?.library == "libspng", "\(place)")
            let decoded = try decoder.decode(file, options: Self.lifted)
            #expect(decoded.pixels == Self.expected, "\(place)")
        }
        // A header read refuses what a decode would (the chunks before the image data are read to open it).
        let before = Self.png(before: [Self.twentyMiBOfText])
        let header = try #require(throws: ImageDecodingError.self) { try ImageDecoders.info(for: before) }
        #expect(header.code == .tooComplex)
        #expect(try ImageDecoders.info(for: before, options: Self.lifted).width == 6)
        // 7 MiB stays within the standard limit. (libspng doubles its buffer as it inflates and stops before
        // it would pass the limit: a text chunk, which needs one byte more for its terminator, stops past 8 MiB.)
        #expect(try decoder.decode(Self.png(before: [Self.compressedText(inflatingTo: 7 * Self.mebibyte)])).pixels == Self.expected)
        let nine = try #require(throws: ImageDecodingError.self) {
            try decoder.decode(Self.png(before: [Self.compressedText(inflatingTo: 9 * Self.mebibyte)]))
        }
        #expect(nine.code == .tooComplex)
    }

    @Test func storedChunksCountAgainstTheTotalNotThePerChunkLimit() throws {
        let decoder = ImageDecoders.png()
        // libspng applies the per-chunk limit to what it inflates: a stored 20 MiB chunk decodes with the standard limits.
        #expect(try decoder.decode(Self.png(before: [Self.storedText(20 * Self.mebibyte)])).pixels == Self.expected)
        // 70 MiB of stored text is over the 64 MiB kept in all, whether before or after the image data.
        let chunks = Array(repeating: Self.storedText(14 * Self.mebibyte), count: 5)
        for file in [Self.png(before: chunks), Self.png(after: chunks)] {
            let refused = try #require(throws: ImageDecodingError.self) { try decoder.decode(file) }
            #expect(refused.code == .tooComplex)
            #expect(try decoder.decode(file, options: Self.lifted).pixels == Self.expected)
        }
    }

    @Test func liftedLimitsStillBoundWhatChunksInflateTo() throws {
        let decoder = ImageDecoders.png()
        // 100 MiB of zeros: a file of about 100 KB.
        let bomb = Self.png(before: [Self.compressedText(inflatingTo: 100 * Self.mebibyte, bomb: true)])
        #expect(bomb.count < Self.mebibyte, "\(bomb.count)")
        // Lifted with a 1-megapixel limit, the chunks may take the standard 64 MiB in all (more than 4 bytes a pixel): refused.
        var small = Self.lifted
        small.maximumPixelCount = 1_000_000
        let refused = try #require(throws: ImageDecodingError.self) { try decoder.decode(bomb, options: small) }
        #expect(refused.code == .tooComplex, "\(refused)")
        #expect(refused.message.contains("lifted limit of \(64 * Self.mebibyte) bytes"), "\(refused.message)")
        let header = try #require(throws: ImageDecodingError.self) { try ImageDecoders.info(for: bomb, options: small) }
        #expect(header.code == .tooComplex)
        // The bound is 4 bytes per pixel of the limit: 50 megapixels allow it (200 MB), 20 do not (80 MB).
        #expect(try decoder.decode(bomb, options: Self.lifted).pixels == Self.expected)
        var twenty = Self.lifted
        twenty.maximumPixelCount = 20_000_000
        let twentyMegapixels = try #require(throws: ImageDecodingError.self) { try decoder.decode(bomb, options: twenty) }
        #expect(twentyMegapixels.code == .tooComplex)
        // And lifted, libspng's limit of 1,000 kept chunks holds (a thousand tiny text chunks cost a list each).
        let many = Self.png(before: Array(repeating: Self.storedText(1), count: 1_001))
        let thousand = try #require(throws: ImageDecodingError.self) { try decoder.decode(many, options: Self.lifted) }
        #expect(thousand.code == .tooComplex)
        #expect(try decoder.decode(Self.png(before: Array(repeating: Self.storedText(1), count: 900)), options: Self.lifted).width == 6)
    }

    @Test func theFastPathDecodesWhatLibspngDecodesWithTheLimitsLifted() throws {
        let fast = CodecDecoder(format: .png, functions: .png(fastPath: true))
        let reference = CodecDecoder(format: .png, functions: .png(fastPath: false))
        let files = [Self.png(before: [Self.storedText(20 * Self.mebibyte)]),
                     Self.png(after: [Self.twentyMiBOfText])]
        for (index, file) in files.enumerated() {
            for options in [Self.lifted, ImageDecodingOptions(maximumPixelSize: 3, liftsPNGChunkLimits: true)] {
                let expected = try reference.decode(file, options: options)
                #expect(try fast.decode(file, options: options).pixels == expected.pixels, "file \(index)")
            }
        }
    }
}
