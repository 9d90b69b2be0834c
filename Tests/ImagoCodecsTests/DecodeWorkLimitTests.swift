import Foundation
import Imago
import ImagoCodecs
import ImagoTesting
import Testing

/// Decode work bounded like pixels: a progressive JPEG's scans and a
/// HEIF-family grid's tiles are counted from the file's structure before
/// any codec decodes it, so a small file cannot cost seconds of CPU or
/// gigabytes of codec state.
@Suite struct DecodeWorkLimitTests {
    /// A 64x48 progressive JPEG (libjpeg-turbo's progression: 10 scans for
    /// colour) with its last scan repeated `extra` times before `EOI`.
    static func progressiveJPEG(extraScans extra: Int) throws -> Data {
        let jpeg = try JPEGEncoder(quality: 85, progressive: true).encode(TestImages.gradient(width: 64, height: 48))
        let bytes = [UInt8](jpeg)
        var lastScan = 0
        for index in 0..<bytes.count - 1 where bytes[index] == 0xFF && bytes[index + 1] == 0xDA { lastScan = index }
        let end = bytes.count - 2
        #expect(bytes[end] == 0xFF && bytes[end + 1] == 0xD9)
        let scan = bytes[lastScan..<end]
        return Data(bytes[..<end] + Array(repeating: Array(scan), count: extra).joined() + [0xFF, 0xD9])
    }

    @Test func aProgressiveJPEGWithTooManyScansIsRefusedBeforeDecoding() throws {
        let decoder = ImageDecoders.jpeg()
        // Encoders write about 10 scans: well within the default.
        let ordinary = try decoder.decode(try Self.progressiveJPEG(extraScans: 0))
        #expect(ordinary.width == 64)
        for extra in [91, 500, 5_000] {
            let error = #expect(throws: ImageDecodingError.self) { try decoder.decode(try Self.progressiveJPEG(extraScans: extra)) }
            #expect(error?.code == .tooComplex, "\(extra) extra scans")
            #expect(error?.message.contains("scans exceed the limit of 100") == true, "\(error?.message ?? "")")
        }
        // The limit is the caller's to set.
        var strict = ImageDecodingOptions()
        strict.maximumScanCount = 5
        let error = #expect(throws: ImageDecodingError.self) { try decoder.decode(try Self.progressiveJPEG(extraScans: 0), options: strict) }
        #expect(error?.code == .tooComplex)
        // A header read refuses it too (an embedded image's check, a render's cost estimate):
        // what the header shows of the work a decode would refuse.
        let many = try Self.progressiveJPEG(extraScans: 500)
        #expect(throws: ImageDecodingError.self) { try ImageDecoders.info(for: many) }
        #expect((try? ImageDecoders.info(for: Self.progressiveJPEG(extraScans: 0)))?.width == 64)
        // Baseline files are not walked (one scan per component at most), and stay decodable at any limit.
        let baseline = try JPEGEncoder(quality: 85).encode(TestImages.gradient(width: 64, height: 48))
        #expect(try decoder.decode(baseline, options: strict).width == 64)
    }

    /// A HEIF-family file whose `meta` box's `iref` makes a grid of
    /// `tiles` tiles (version 0, 16-bit item IDs; version 1, 32-bit).
    static func grid(brand: String, tiles: Int, wideIDs: Bool = false, split: Int = 1) -> Data {
        func box(_ type: String, _ payload: [UInt8]) -> [UInt8] {
            let size = 8 + payload.count
            return [UInt8(size >> 24 & 0xFF), UInt8(size >> 16 & 0xFF), UInt8(size >> 8 & 0xFF), UInt8(size & 0xFF)] + Array(type.utf8) + payload
        }
        func id(_ value: Int) -> [UInt8] {
            wideIDs ? [UInt8(value >> 24 & 0xFF), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)]
                : [UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)]
        }
        let ftyp = box("ftyp", Array(brand.utf8) + [0, 0, 0, 0] + Array(brand.utf8) + Array("mif1".utf8))
        // The tiles split over `split` grid items (a colour grid and an alpha grid, say).
        var references: [UInt8] = []
        for part in 0..<split {
            let count = tiles / split + (part < tiles % split ? 1 : 0)
            references += box("dimg", id(1 + part) + [UInt8(count >> 8), UInt8(count & 0xFF)] + (0..<count).flatMap { id(100 + $0) })
        }
        let iref = box("iref", [wideIDs ? 1 : 0, 0, 0, 0] + references)
        let pitm = box("pitm", [0, 0, 0, 0] + [0, 1])
        let meta = box("meta", [0, 0, 0, 0] + pitm + iref)
        return Data(ftyp + meta)
    }

    @Test(arguments: [("avif", ImageFormat.avif), ("heic", ImageFormat.heic)])
    func aGridOfTooManyTilesIsRefusedBeforeTheCodecParsesIt(brand: String, format: ImageFormat) {
        let decoder = ImageDecoders.decoder(for: format)
        for (tiles, wide, split) in [(257, false, 1), (10_000, false, 1), (300, true, 1), (400, false, 2)] {
            let error = #expect(throws: ImageDecodingError.self) { try decoder.decode(Self.grid(brand: brand, tiles: tiles, wideIDs: wide, split: split)) }
            #expect(error?.code == .tooComplex, "\(tiles) tiles")
            #expect(error?.message.contains("\(tiles) grid tiles") == true, "\(error?.message ?? "")")
        }
        // Within the limit, the file reaches the codec (which finds no image in these boxes).
        let error = #expect(throws: ImageDecodingError.self) { try decoder.decode(Self.grid(brand: brand, tiles: 48)) }
        #expect(error?.code == .couldNotOpen)
        // A real file is no grid: it decodes.
        #expect(throws: Never.self) { try decoder.decode(format == .avif ? try ImageEncoders.avif(quality: 60, speed: 9).encode(TestImages.gradient(width: 32, height: 32)) : try Fixtures.data("heic/rgb8.heic")) }
    }
}
