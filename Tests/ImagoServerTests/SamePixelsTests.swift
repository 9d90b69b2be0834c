#if Server && os(Linux)
import Foundation
import HummingbirdTesting
import Imago
import ImagoCodecs
import ImagoServer
import LoopbackServer
import Testing

/// The server resizes with the library's geometry: the same source and box
/// give the same pixels as `Image.resized`, and as the decoder's thumbnail
/// (which `imago fetch` uses).
@Suite struct SamePixelsTests {
    /// (server options, the library's mode, box)
    static let boxes: [(String, ResizeMode, Int, Int)] = [
        ("rs:fit:64:64", .fit, 64, 64),
        ("rs:fit:37:23", .fit, 37, 23),
        ("rs:fill:50:50", .crop, 50, 50),
        ("rs:fill:37:23", .crop, 37, 23),
        ("rs:fill-down:300:100", .cropToAspectRatio, 300, 100),
        ("rs:force:30:90", .force, 30, 90),
    ]

    /// A PNG source: the decoder's streamed thumbnail equals a full decode
    /// resized, so every path must give `Image.resized(toFit:height:mode:)`
    /// to the bit.
    @Test(arguments: boxes)
    func aPNGSourceGivesTheLibrarysPixels(options: String, mode: ResizeMode, width: Int, height: Int) async throws {
        let source = try ImageDecoders.all.decode(Fixture.png)
        let expected = source.resized(toFit: width, height: height, mode: mode)
        // The decoder's thumbnail path.
        let thumbnail = try ImageDecoders.all.decode(Fixture.png, options: ImageDecodingOptions(thumbnail: Thumbnail(width: width, height: height, mode: mode)))
        #expect(thumbnail == expected)
        // The server's processing, in memory and over HTTP.
        #expect(try ImageServerPath(parsing: "/insecure/\(options)/plain/http%3A%2F%2Fx%2Fa.png").options.apply(to: source) == expected)
        let origin = try await Fixture.origin()
        let served = try await Fixture.withServer(Fixture.configuration(), over: .router) { client, _ in
            try await client.execute(uri: Fixture.path(options, origin.url("/a.png"), extension: "png"), method: .get).image()
        }
        #expect(served == expected, "\(options)")
    }

    /// A JPEG source: DCT scaling makes a thumbnail differ from a full
    /// decode resized, but the server and the decoder's thumbnail (which
    /// `imago fetch --resize` asks for) still agree to the bit.
    @Test(arguments: boxes.filter { $0.1 != .cropToAspectRatio })
    func aJPEGSourceGivesTheThumbnailsPixels(options: String, mode: ResizeMode, width: Int, height: Int) async throws {
        let expected = try ImageDecoders.all.decode(Fixture.jpeg, options: ImageDecodingOptions(thumbnail: Thumbnail(width: width, height: height, mode: mode)))
        let origin = try await Fixture.origin()
        let served = try await Fixture.withServer(Fixture.configuration(), over: .router) { client, _ in
            try await client.execute(uri: Fixture.path(options, origin.url("/a.jpg"), extension: "png"), method: .get).image()
        }
        #expect(served == expected, "\(options)")
    }

    /// The format written when the path names none is the library's
    /// policy: the source's when Imago writes it, PNG for GIF, JPEG for
    /// HEIC, PNG for a HEIC with alpha.
    @Test(arguments: [
        ("/a.jpg", ImageFormat.jpeg), ("/a.png", .png), ("/a.gif", .png), ("/a.webp", .webp), ("/a.avif", .avif),
        ("/a.heic", .jpeg), ("/alpha.heic", .png),
    ])
    func theOutputFormatIsTheLibrarysChoice(source: String, expected: ImageFormat) async throws {
        let alpha = try Data(contentsOf: URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../ImagoCodecsTests/Resources/heic/rgba8.heic"))
        let origin = try await Fixture.origin(["/alpha.heic": .ok(alpha, contentType: "image/heic")])
        let served = try await Fixture.withServer(Fixture.configuration(), over: .router) { client, _ in
            try await client.execute(uri: Fixture.path("rs:fit:16:16", origin.url(source)), method: .get).data
        }
        #expect(ImageFormat(sniffing: served) == expected)
    }
}
#endif
