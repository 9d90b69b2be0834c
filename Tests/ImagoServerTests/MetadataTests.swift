#if Server && os(Linux)
import Foundation
import HummingbirdTesting
import Imago
import ImagoCodecs
import ImagoServer
import LoopbackServer
import Testing

/// `strip_metadata`, `keep_copyright` and `strip_color_profile`, as
/// imgproxy applies them, over HTTP.
@Suite struct MetadataTests {
    /// A little-endian TIFF structure with IFD0 holding Make, Orientation 6, Artist and Copyright.
    static let exif: [UInt8] = {
        let strings: [(UInt16, String)] = [(0x010F, "CanonMakerX"), (0x013B, "Jane Doe"), (0x8298, "(c) 2026 Jane Doe")]
        let count = strings.count + 1
        var ifd: [UInt8] = [UInt8(count), 0]
        var values: [UInt8] = []
        let valuesStart = 8 + 2 + 12 * count + 4
        func le16(_ v: Int) -> [UInt8] { [UInt8(v & 0xFF), UInt8(v >> 8)] }
        func le32(_ v: Int) -> [UInt8] { [UInt8(v & 0xFF), UInt8((v >> 8) & 0xFF), UInt8((v >> 16) & 0xFF), UInt8(v >> 24)] }
        var entries: [(UInt16, [UInt8])] = []
        for (tag, text) in strings {
            let bytes = Array(text.utf8) + [0]
            entries.append((tag, le16(Int(tag)) + le16(2) + le32(bytes.count) + le32(valuesStart + values.count)))
            values += bytes
        }
        entries.append((0x0112, le16(0x0112) + le16(3) + le32(1) + le16(6) + [0, 0]))
        for entry in entries.sorted(by: { $0.0 < $1.0 }) { ifd += entry.1 }
        return [0x49, 0x49, 0x2A, 0, 8, 0, 0, 0] + ifd + [0, 0, 0, 0] + values
    }()

    /// A 60x40 JPEG (stored sideways: EXIF orientation 6) with that EXIF in `APP1`.
    static let jpegWithEXIF: Data = {
        let jpeg = try! ImageEncoders.jpeg(quality: 90).encode(Fixture.photo(width: 60, height: 40))
        let payload = Array("Exif".utf8) + [0, 0] + exif
        var result = Data(jpeg.prefix(2))
        result += [0xFF, 0xE1, UInt8((payload.count + 2) >> 8), UInt8((payload.count + 2) & 0xFF)] + payload
        result += jpeg.dropFirst(2)
        return result
    }()

    static let p3 = try! Data(contentsOf: URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../ImagoCodecsTests/Resources/color/display-p3.jpg"))

    func contains(_ data: Data, _ text: String) -> Bool { data.range(of: Data(text.utf8)) != nil }

    @Test func theOptionsParseWithImgproxysDefaults() throws {
        let defaults = ProcessingOptions()
        #expect(defaults.stripsMetadata && defaults.keepsCopyright && defaults.stripsColorProfile)
        let options = try ImageServerPath(parsing: "/insecure/sm:0/kcr:f/scp:false/plain/http%3A%2F%2Fx%2Fa.jpg").options
        #expect(!options.stripsMetadata && !options.keepsCopyright && !options.stripsColorProfile)
        let written = ImageServerPath(source: URL(string: "http://x/a.jpg")!, options: options).path(signedWith: nil)
        #expect(written.contains("/sm:0/kcr:0/scp:0/"))
        #expect(try ImageServerPath(parsing: written).options == options)
        #expect(throws: ImageServerError.self) { try ImageServerPath(parsing: "/insecure/sm:2/plain/http%3A%2F%2Fx%2Fa.jpg") }
    }

    @Test(arguments: ["jpg", "png", "webp"])
    func strippingKeepsArtistAndCopyright(_ ext: String) async throws {
        let origin = try await Fixture.origin(["/exif.jpg": .ok(Self.jpegWithEXIF, contentType: "image/jpeg")])
        try await Fixture.withServer(Fixture.configuration()) { client, _ in
            let kept = try await client.execute(uri: Fixture.path("w:20", origin.url("/exif.jpg"), extension: ext), method: .get)
            #expect(kept.status == .ok)
            #expect(contains(kept.data, "Jane Doe"))
            #expect(contains(kept.data, "(c) 2026 Jane Doe"))
            #expect(!contains(kept.data, "CanonMakerX"), "the rest is stripped")
            let image = try kept.image()
            #expect((image.width, image.height) == (20, 30), "upright: the orientation is not kept")
            let none = try await client.execute(uri: Fixture.path("w:20/kcr:0", origin.url("/exif.jpg"), extension: ext), method: .get)
            #expect(!contains(none.data, "Jane Doe"))
            #expect(!contains(none.data, "Exif") || ext != "jpg")
        }
    }

    @Test(arguments: ["jpg", "png", "webp"])
    func notStrippingKeepsTheEXIFTurnedUp(_ ext: String) async throws {
        let origin = try await Fixture.origin(["/exif.jpg": .ok(Self.jpegWithEXIF, contentType: "image/jpeg")])
        try await Fixture.withServer(Fixture.configuration()) { client, _ in
            let response = try await client.execute(uri: Fixture.path("w:20/sm:0", origin.url("/exif.jpg"), extension: ext), method: .get)
            #expect(contains(response.data, "CanonMakerX"))
            #expect(contains(response.data, "Jane Doe"))
            // The pixels are upright, and the kept EXIF says "up": a reader does not turn them again.
            let image = try response.image()
            #expect((image.width, image.height) == (20, 30))
        }
    }

    /// An animation keeps its source's EXIF as a still does: read once, by
    /// the decoder, from the first frame (an animated WebP with an `EXIF` chunk).
    @Test func anAnimationKeepsItsSourcesEXIF() async throws {
        let frames = (0..<3).map { index in
            ImageFrame(pixels: Fixture.photo(width: 40, height: 30).converted(to: .rgba8).pixels.map { $0 &+ UInt8(index * 40) },
                       duration: 0.1)
        }
        var animation = Image(width: 40, height: 30, pixelFormat: .rgba8, frames: frames, loopCount: 0)
        animation.metadata = ImageMetadata(exif: Data(Self.exif))
        let webp = try ImageEncoders.encode(animation, as: OutputDecision(format: .webp, isAnimated: true, metadata: .keepAll))
        let origin = try await Fixture.origin(["/anim.webp": .ok(webp, contentType: "image/webp")])
        try await Fixture.withServer(Fixture.configuration { $0.maximumAnimationFrames = 10 }) { client, _ in
            let all = try await client.execute(uri: Fixture.path("w:20/sm:0", origin.url("/anim.webp")), method: .get)
            #expect(all.status == .ok)
            #expect(try all.image().frames.count == 3)
            #expect(contains(all.data, "CanonMakerX") && contains(all.data, "Jane Doe"))
            let copyright = try await client.execute(uri: Fixture.path("w:20", origin.url("/anim.webp")), method: .get)
            #expect(contains(copyright.data, "Jane Doe") && !contains(copyright.data, "CanonMakerX"))
        }
    }

    @Test func withoutAutoRotationTheStoredPixelsAreUsed() async throws {
        let origin = try await Fixture.origin(["/exif.jpg": .ok(Self.jpegWithEXIF, contentType: "image/jpeg")])
        try await Fixture.withServer(Fixture.configuration()) { client, _ in
            // Stored 60x40 (orientation 6): w:20 of the stored pixels is 20x13.
            let stored = try await client.execute(uri: Fixture.path("w:20/ar:0", origin.url("/exif.jpg"), extension: "png"), method: .get)
            let info = try ImageDecoders.info(for: stored.data)
            #expect((info.width, info.height) == (20, 13))
            #expect(info.orientation == .up, "stripped: no orientation")
            // Kept metadata keeps the orientation too: a viewer turns the stored pixels as the source said.
            let kept = try await client.execute(uri: Fixture.path("w:20/ar:0/sm:0", origin.url("/exif.jpg"), extension: "jpg"), method: .get)
            let keptInfo = try ImageDecoders.info(for: kept.data)
            #expect((keptInfo.width, keptInfo.height) == (20, 13))
            #expect(keptInfo.orientation == .right)
            // The stored pixels: the top left of the stored source is the top left here.
            let source = Fixture.photo(width: 60, height: 40)
            let image = try ImageDecoders.all.decode(stored.data)
            #expect(zip(image.pixel(x: 19, y: 0).prefix(3), source.pixel(x: 59, y: 0).prefix(3)).allSatisfy { abs(Int($0) - Int($1)) <= 24 })
        }
    }

    @Test func aSourceWithoutEXIFGetsNone() async throws {
        let origin = try await Fixture.origin()
        try await Fixture.withServer(Fixture.configuration()) { client, _ in
            let response = try await client.execute(uri: Fixture.path("w:20/sm:0", origin.url("/a.jpg"), extension: "jpg"), method: .get)
            #expect(!contains(response.data, "Exif"))
        }
    }

    @Test func keepingTheProfileKeepsTheSourcesColours() async throws {
        let origin = try await Fixture.origin(["/p3.jpg": .ok(Self.p3, contentType: "image/jpeg")])
        let keepOriginal = { var options = ImageDecodingOptions(); options.colorManagement = .keepOriginal; return options }()
        let sourceRaw = try ImageDecoders.all.decode(Self.p3, options: keepOriginal)
        let sourceSRGB = try ImageDecoders.all.decode(Self.p3)
        try await Fixture.withServer(Fixture.configuration()) { client, _ in
            let converted = try await client.execute(uri: Fixture.path("", origin.url("/p3.jpg"), extension: "png"), method: .get)
            let kept = try await client.execute(uri: Fixture.path("scp:0", origin.url("/p3.jpg"), extension: "png"), method: .get)
            let convertedRaw = try ImageDecoders.all.decode(converted.data, options: keepOriginal)
            let keptRaw = try ImageDecoders.all.decode(kept.data, options: keepOriginal)
            #expect(convertedRaw.colorProfile == nil, "sRGB, no profile")
            #expect(keptRaw.colorProfile == sourceRaw.colorProfile, "the source's profile")
            #expect(keptRaw.pixels == sourceRaw.converted(to: keptRaw.pixelFormat).pixels, "the stored pixels unchanged")
            #expect(convertedRaw.pixels == sourceSRGB.converted(to: convertedRaw.pixelFormat).pixels)
            #expect(keptRaw.pixels != convertedRaw.pixels)
            // GIF holds no profile: converted.
            let gif = try await client.execute(uri: Fixture.path("scp:0", origin.url("/p3.jpg"), extension: "gif"), method: .get)
            #expect(gif.status == .ok)
        }
    }
}
#endif
