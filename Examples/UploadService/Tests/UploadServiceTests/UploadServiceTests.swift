import Foundation
import Imago
import ImagoCodecs
import ImagoTesting
import ImagoTestingSupport
import Testing
import UploadService
import VaporTesting

/// The upload handler, in memory through VaporTesting (no socket): a
/// thumbnail whose pixels are the photo's, and hostile uploads answered
/// with a 4xx that says why.
@Suite struct UploadServiceTests {
    let photo = TestImages.photo(width: 640, height: 480, seed: 3)   // made in code, the same on every run
    /// The photo at the thumbnail's size, resized another way (Lanczos, where the handler averages areas).
    var reference: Image { photo.resized(width: 256, height: 192, filter: .lanczos3) }

    @Test func answersAPNGThumbnailOfTheUpload() async throws {
        let upload = try ImageEncoders.png().encode(photo)
        try await withApp(configure: configure) { app in
            try await app.testing().test(.POST, "thumbnails", headers: ["Accept": "image/png"], body: ByteBuffer(data: upload)) { response in
                #expect(response.status == .ok)
                #expect(response.headers.contentType == .png)
                let thumbnail = try ImageDecoders.all.decode(Data(response.body.readableBytesView))
                assertImage(thumbnail, matches: reference, .visuallyIdentical)
            }
        }
    }

    @Test func answersAJPEGThumbnailByDefault() async throws {
        let upload = try ImageEncoders.jpeg(quality: 95).encode(photo)
        try await withApp(configure: configure) { app in
            try await app.testing().test(.POST, "thumbnails", body: ByteBuffer(data: upload)) { response in
                #expect(response.status == .ok)
                #expect(response.headers.contentType == .jpeg)
                let thumbnail = try ImageDecoders.all.decode(Data(response.body.readableBytesView))
                assertImage(thumbnail, matches: reference, .visuallyIdentical)   // JPEG at quality 82
            }
        }
    }

    @Test func refusesBytesThatAreNotAnImage() async throws {
        try await withApp(configure: configure) { app in
            try await app.testing().test(.POST, "thumbnails", body: ByteBuffer(string: "<html>not an image</html>")) { response in
                #expect(response.status == .unsupportedMediaType)
                #expect(response.body.string.contains("not an image"))
            }
            try await app.testing().test(.POST, "thumbnails") { response in
                #expect(response.status == .badRequest)
            }
        }
    }

    /// A 45-byte PNG that says it is 100,000 x 100,000 pixels (40 GB of
    /// RGBA): refused from its header, before any pixel memory is taken.
    @Test func refusesADecompressionBomb() async throws {
        try await withApp(configure: configure) { app in
            try await app.testing().test(.POST, "thumbnails", body: ByteBuffer(data: Self.pngHeader(width: 100_000, height: 100_000))) { response in
                #expect(response.status == .unprocessableEntity)
                #expect(response.body.string.contains("too large"), "\(response.body.string)")
            }
        }
    }

    /// A PNG signature, an `IHDR` chunk of `width` x `height` RGBA pixels, and `IEND`.
    static func pngHeader(width: UInt32, height: UInt32) -> Data {
        func chunk(_ type: String, _ payload: [UInt8]) -> [UInt8] {
            let body = Array(type.utf8) + payload
            return bigEndian(UInt32(payload.count)) + body + bigEndian(crc32(body))
        }
        func bigEndian(_ value: UInt32) -> [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: value >> (24 - 8 * $0)) } }
        func crc32(_ bytes: [UInt8]) -> UInt32 {
            var crc: UInt32 = 0xFFFF_FFFF
            for byte in bytes {
                crc ^= UInt32(byte)
                for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
            }
            return ~crc
        }
        let header = bigEndian(width) + bigEndian(height) + [8, 6, 0, 0, 0]   // 8 bits, RGBA, no interlace
        return Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + chunk("IHDR", header) + chunk("IEND", []))
    }
}
