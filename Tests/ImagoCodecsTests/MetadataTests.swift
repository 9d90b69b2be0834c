import Foundation
import Imago
import ImagoCodecs
import ImagoTesting
import Testing

/// EXIF and colour profiles at library level: read by the decoders with
/// the pixels, written back by `ImageEncoders.encode(_:as:)` as
/// `MetadataPolicy` says, for JPEG, PNG, WebP and AVIF.
@Suite struct MetadataTests {
    /// A little-endian EXIF block: IFD0 with Make, Model, Orientation 6,
    /// DateTime, Artist, Copyright and a pointer to an Exif IFD holding
    /// DateTimeOriginal.
    static let exif: Data = {
        var ascii: [(UInt16, String)] = [(0x010F, "Canon"), (0x0110, "Canon EOS 5D"), (0x0132, "2024:05:06 07:08:09"),
                                         (0x013B, "Ada Lovelace"), (0x8298, "(c) 2024 Ada")]
        ascii.sort { $0.0 < $1.0 }
        let ifd0Count = ascii.count + 2                       // + Orientation, + Exif IFD pointer
        let ifd0Size = 2 + 12 * ifd0Count + 4
        let exifIFDAt = 8 + ifd0Size
        let exifIFDSize = 2 + 12 + 4
        var valuesAt = exifIFDAt + exifIFDSize
        func le16(_ v: Int) -> [UInt8] { [UInt8(v & 0xFF), UInt8(v >> 8 & 0xFF)] }
        func le32(_ v: Int) -> [UInt8] { le16(v & 0xFFFF) + le16(v >> 16) }
        var entries: [(UInt16, [UInt8])] = []
        var values: [UInt8] = []
        func asciiEntry(_ tag: UInt16, _ text: String) -> (UInt16, [UInt8]) {
            let bytes = Array(text.utf8) + [0]
            defer { values += bytes + (bytes.count % 2 == 1 ? [0] : []); valuesAt += bytes.count + bytes.count % 2 }
            return (tag, le16(Int(tag)) + le16(2) + le32(bytes.count) + le32(valuesAt))
        }
        for (tag, text) in ascii where tag < 0x0112 { entries.append(asciiEntry(tag, text)) }
        entries.append((0x0112, le16(0x0112) + le16(3) + le32(1) + le16(6) + [0, 0]))
        for (tag, text) in ascii where tag > 0x0112 { entries.append(asciiEntry(tag, text)) }
        entries.append((0x8769, le16(0x8769) + le16(4) + le32(1) + le32(exifIFDAt)))
        let original = asciiEntry(0x9003, "2024:05:04 03:02:01")
        var bytes: [UInt8] = [0x49, 0x49, 0x2A, 0x00] + le32(8) + le16(ifd0Count)
        for entry in entries.sorted(by: { $0.0 < $1.0 }) { bytes += entry.1 }
        bytes += le32(0) + le16(1) + original.1 + le32(0) + values
        return Data(bytes)
    }()

    /// A 40x20 photo-like image, as a JPEG with `exif` as it is (orientation 6).
    static func jpegWithExif() throws -> Data {
        let jpeg = try ImageEncoders.jpeg(quality: 90).encode(TestImages.gradient(width: 40, height: 20))
        return ExifMetadata.inserting(exif, into: jpeg, format: .jpeg)
    }

    @Test func theBlockReadsAsACameraWouldWriteIt() {
        let metadata = ImageMetadata(exif: Self.exif)
        #expect(metadata.exif != nil)
        #expect(metadata.make == "Canon")
        #expect(metadata.model == "Canon EOS 5D")
        #expect(metadata.camera == "Canon EOS 5D", "the model already names the maker")
        #expect(metadata.orientation == .right)
        #expect(metadata.dateTime == "2024:05:06 07:08:09")
        #expect(metadata.dateTimeOriginal == "2024:05:04 03:02:01")
        #expect(metadata.artist == "Ada Lovelace")
        #expect(metadata.copyright == "(c) 2024 Ada")
        #expect(ImageMetadata(exif: Data("Exif".utf8) + [0, 0] + Self.exif) == metadata, "the Exif\\0\\0 prefix is dropped")
    }

    @Test func theDecoderReadsItWithThePixels() throws {
        let image = try ImageDecoders.all.decode(Self.jpegWithExif())
        #expect((image.width, image.height) == (20, 40), "orientation 6 was applied")
        #expect(image.metadata?.camera == "Canon EOS 5D")
        #expect(image.metadata?.dateTimeOriginal == "2024:05:04 03:02:01")
        // The metadata says what the file says; written again with "keep all", the orientation is
        // "up", since the pixels are upright now and nothing may turn them twice.
        #expect(image.metadata?.orientation == .right)
        let again = try ImageEncoders.encode(image, as: OutputDecision(format: .jpeg, metadata: .keepAll))
        let reread = try ImageDecoders.all.decode(again)
        #expect((reread.width, reread.height) == (20, 40))
        #expect(reread.metadata?.orientation == .up)
        let info = try ImageDecoders.info(for: Self.jpegWithExif())
        #expect(info.metadata?.copyright == "(c) 2024 Ada")
        // Transformations keep it.
        #expect(image.resized(toFit: 10, height: 10).metadata == image.metadata)
    }

    @Test(arguments: [ImageFormat.jpeg, .png, .webp, .avif])
    func eachPolicyIsWrittenAndReadBack(format: ImageFormat) throws {
        let source = TestImages.gradient(width: 24, height: 16).withMetadata(ImageMetadata(exif: Self.exif))
        for policy in MetadataPolicy.allCases {
            let data = try ImageEncoders.encode(source, as: OutputDecision(format: format, metadata: policy))
            let read = try ImageDecoders.all.decode(data).metadata
            switch policy {
            case .strip:
                #expect(read?.exif == nil, "\(format): nothing written")
            case .keepCopyright:
                #expect(read?.artist == "Ada Lovelace" && read?.copyright == "(c) 2024 Ada", "\(format)")
                #expect(read?.make == nil && read?.dateTimeOriginal == nil, "\(format): only the copyright")
            case .keepAll:
                #expect(read?.camera == "Canon EOS 5D" && read?.dateTimeOriginal == "2024:05:04 03:02:01", "\(format)")
                #expect(read?.orientation == .up, "\(format): the pixels are upright")
            }
        }
    }

    /// A HEIC file's `Exif` item (pillow-heif wrote this one, with orientation 6) is read too.
    @Test func aHEICFilesExifItemIsRead() throws {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Resources/heic/orientation6.heic")
        let metadata = try ImageDecoders.all.decode(Data(contentsOf: url)).metadata
        #expect(metadata?.exif != nil)
        #expect(metadata?.orientation == .right)
    }

    @Test func theDefaultStrips() throws {
        let source = TestImages.gradient(width: 8, height: 8).withMetadata(ImageMetadata(exif: Self.exif))
        let decision = OutputPolicy().decision(forSource: .jpeg, hasAlpha: false)
        #expect(decision.metadata == .strip)
        #expect(try ImageDecoders.all.decode(ImageEncoders.encode(source, as: decision)).metadata == nil)
        #expect(try ImageDecoders.all.decode(ImageEncoders.jpeg().encode(source)).metadata == nil, "an encoder alone writes none")
    }

    /// Hostile blocks: truncated, pointing outside, an Exif IFD pointing
    /// at itself, garbage: every field reads as nil, nothing traps.
    @Test func malformedBlocksReadAsNothing() {
        var pointingOutside = [UInt8](Self.exif)
        pointingOutside[4] = 0xFF
        var loop = [UInt8](Self.exif)
        // The Exif IFD pointer's value made 8: IFD0 again.
        if let index = (0..<loop.count - 12).first(where: { loop[$0] == 0x69 && loop[$0 + 1] == 0x87 }) {
            loop.replaceSubrange(index + 8..<index + 12, with: [8, 0, 0, 0])
        }
        for bytes in [Array(Self.exif.prefix(20)), pointingOutside, [UInt8](repeating: 0x41, count: 64), loop] {
            let metadata = ImageMetadata(exif: Data(bytes))
            _ = (metadata.make, metadata.model, metadata.orientation, metadata.dateTimeOriginal, metadata.copyright)
            _ = MetadataPolicy.allCases.map { metadata.exif(keeping: $0) }
        }
        #expect(ImageMetadata(exif: Data(Array(Self.exif.prefix(20)))).make == nil)
        #expect(ImageMetadata(exif: Data(repeating: 0x41, count: 64)).exif == nil)
    }

    /// A PNG whose eXIf chunk is over the limit decodes, without it.
    @Test func aBlockOverTheLimitIsNotKept() throws {
        var big = [UInt8](Self.exif)
        big += [UInt8](repeating: 0, count: ImageMetadata.maximumExifBytes)
        let source = TestImages.gradient(width: 8, height: 8).withMetadata(ImageMetadata(exif: Data(big)))
        let png = try ImageEncoders.encode(source, as: OutputDecision(format: .png, metadata: .keepAll))
        let decoded = try ImageDecoders.all.decode(png)
        #expect(decoded.metadata?.exif == nil)
        #expect(decoded.width == 8)
    }
}

extension Image {
    /// The image with `metadata`.
    func withMetadata(_ metadata: ImageMetadata) -> Image {
        var image = self
        image.metadata = metadata
        return image
    }
}
