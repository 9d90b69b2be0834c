#if Server && os(Linux)
import Foundation
import HummingbirdTesting
import Imago
import ImagoCodecs
import ImagoServer
import ImagoTesting
import Testing

/// `watermark`: parsing, placement, tiling, scale, opacity and alpha
/// blending, and the colour management of the watermark image, over HTTP
/// with pixel checks.
@Suite struct WatermarkTests {
    func parse(_ options: String) throws -> ProcessingOptions {
        try ImageServerPath(parsing: "/insecure/\(options)/plain/http%3A%2F%2Fx%2Fa.png").options
    }

    /// A `width` x `height` mark of one RGBA colour.
    static func mark(width: Int = 20, height: Int = 10, _ rgba: [UInt8] = [255, 0, 0, 255]) -> Image {
        Image(width: width, height: height, pixelFormat: .rgba8, pixels: Array(repeatElement(rgba, count: width * height).joined()))
    }

    /// A white `width` x `height` PNG source.
    static let white = try! ImageEncoders.png().encode(Image(width: 200, height: 150, pixelFormat: .rgb8,
                                                             pixels: [UInt8](repeating: 255, count: 200 * 150 * 3)))
    /// A fully transparent 200x150 PNG source.
    static let clear = try! ImageEncoders.png().encode(Image(width: 200, height: 150, pixelFormat: .rgba8,
                                                             pixels: [UInt8](repeating: 0, count: 200 * 150 * 4)))

    @Test func theOptionParsesAsImgproxys() throws {
        let options = try parse("wm:0.5:soea:10:20:0.25")
        #expect(options.watermark == ProcessingOptions.Watermark(opacity: 0.5, gravity: .compass(.southEast), offset: .init(x: 10, y: 20), scale: 0.25))
        #expect(try parse("wm:1:re").watermark?.tiles == true)
        #expect(try parse("watermark:1").watermark == ProcessingOptions.Watermark(opacity: 1))
        #expect(try parse("wm:0:soea").watermark == nil, "opacity 0 turns it off")
        #expect(try parse("wm:1:no:::0.5:x:y").watermark?.scale == 0.5, "the paid edition's two extra arguments are ignored")
        for bad in ["wm", "wm:2", "wm:-0.1", "wm:x", "wm:1:sm", "wm:1:fp", "wm:1:up", "wm:1:ce:a", "wm:1:ce:0:0:-1", "wm:1:ce:0:0:11", "wm:1:ce:0:0:nan"] {
            #expect(throws: ImageServerError.self, "\(bad)") { try parse(bad) }
        }
        let written = ImageServerPath(source: URL(string: "http://x/a.png")!, options: options).path(signedWith: nil)
        #expect(try ImageServerPath(parsing: written).options == options)
    }

    /// Renders `options` over `source` with `mark` as the server's watermark.
    func render(_ options: String, source: Data = WatermarkTests.white, mark: Image? = WatermarkTests.mark(),
                opacity: Double = 1) async throws -> Image {
        let origin = try await Fixture.origin(["/s.png": .ok(source, contentType: "image/png")])
        return try await Fixture.withServer(Fixture.configuration {
            $0.watermark = mark
            $0.watermarkOpacity = opacity
        }) { client, _ in
            let response = try await client.execute(uri: Fixture.path(options, origin.url("/s.png"), extension: "png"), method: .get)
            #expect(response.status == .ok)
            return try response.image()
        }
    }

    /// The pixels of `image` whose first three channels are `rgb`.
    func count(_ image: Image, _ rgb: [UInt8]) -> Int {
        var total = 0
        for y in 0..<image.height {
            for x in 0..<image.width where Array(image.pixel(x: x, y: y).prefix(3)) == rgb { total += 1 }
        }
        return total
    }

    @Test func aGravityWithOffsetsPlacesIt() async throws {
        let image = try await render("wm:1:soea:5:7")
        // 20x10 at 5 px from the right and 7 from the bottom of 200x150.
        #expect(image.pixel(x: 175, y: 133) == [255, 0, 0])
        #expect(image.pixel(x: 194, y: 142) == [255, 0, 0])
        #expect(image.pixel(x: 195, y: 142) == [255, 255, 255])
        #expect(image.pixel(x: 194, y: 143) == [255, 255, 255])
        #expect(count(image, [255, 0, 0]) == 200)
        let west = try await render("wm:1:nowe")
        #expect(west.pixel(x: 0, y: 0) == [255, 0, 0])
        #expect(west.pixel(x: 19, y: 9) == [255, 0, 0])
        #expect(count(west, [255, 0, 0]) == 200)
    }

    @Test func aMarkMayHangOverTheEdge() async throws {
        // Pushed 15 px past the left edge: 5 columns stay.
        let image = try await render("wm:1:we:-15:0")
        #expect(count(image, [255, 0, 0]) == 5 * 10)
        #expect(image.pixel(x: 4, y: 75) == [255, 0, 0])
    }

    @Test func scaleFitsItIntoAFractionOfTheResult() async throws {
        // Half of 200x150 is a 100x75 box: the 2:1 mark becomes 100x50, centred.
        let image = try await render("wm:1:ce:0:0:0.5")
        #expect(count(image, [255, 0, 0]) == 100 * 50)
        #expect(image.pixel(x: 50, y: 50) == [255, 0, 0])
        #expect(image.pixel(x: 149, y: 99) == [255, 0, 0])
        #expect(image.pixel(x: 49, y: 50) == [255, 255, 255])
    }

    @Test func tilesRepeatFromTheCentreWithGaps() async throws {
        // Tiles of 20x10 plus a 20x10 gap: 40x20 cells. 200/40 = 5 across (odd),
        // 150/20 = 8 down, made 9: the grid is centred, so the middle tile is
        // at the centre.
        let image = try await render("wm:1:re:20:10")
        #expect(image.pixel(x: 100, y: 75) == [255, 0, 0], "a tile at the centre")
        #expect(image.pixel(x: 90, y: 70) == [255, 0, 0])
        #expect(image.pixel(x: 89, y: 75) == [255, 255, 255], "the gap left of it")
        #expect(image.pixel(x: 130, y: 70) == [255, 0, 0], "the next tile, 40 px on")
        // 5 columns of tiles; the grid is 180 high with 15 cut each side,
        // so the marks' rows are -10..<0 (cut), 10..<20, ..., 130..<140, 150..<160 (cut): 7 rows.
        #expect(count(image, [255, 0, 0]) == 5 * 20 * 7 * 10)
    }

    @Test func opacityAndAlphaBlendOver() async throws {
        // Half opacity over white: halfway to red.
        let half = try await render("wm:0.5:nowe")
        #expect(half.pixel(x: 0, y: 0) == [255, 127, 127] || half.pixel(x: 0, y: 0) == [255, 128, 128])
        // The server's opacity multiplies the path's.
        let quarter = try await render("wm:0.5:nowe", opacity: 0.5)
        let g = quarter.pixel(x: 0, y: 0)[1]
        #expect((190...192).contains(g), "\(g)")
        // A half-transparent mark over a transparent source: red at half alpha, not darkened.
        let over = try await render("wm:1:nowe", source: Self.clear, mark: Self.mark([255, 0, 0, 128]))
        #expect(over.pixelFormat.hasAlpha)
        #expect(over.pixel(x: 0, y: 0) == [255, 0, 0, 128])
        #expect(over.pixel(x: 30, y: 30) == [0, 0, 0, 0])
    }

    @Test func withoutAConfiguredWatermarkNothingIsDrawn() async throws {
        let image = try await render("wm:1:nowe", mark: nil)
        #expect(count(image, [255, 255, 255]) == 200 * 150)
    }

    @Test func theMarkIsColourManaged() async throws {
        // An Adobe RGB PNG as the watermark: its pixels are drawn as sRGB,
        // the same as the decoder's reference conversion.
        let resources = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../ImagoCodecsTests/Resources/color")
        let mark = try ImageDecoders.all.decode(Data(contentsOf: resources.appendingPathComponent("adobe-rgb.png")))
        let expected = try ImageDecoders.all.decode(Data(contentsOf: resources.appendingPathComponent("adobe-rgb-expected.png")))
        let raw = try ImageDecoders.png().decode(Data(contentsOf: resources.appendingPathComponent("adobe-rgb.png")),
                                                 options: { var o = ImageDecodingOptions(); o.colorManagement = .keepOriginal; return o }())
        let image = try await render("wm:1:nowe", mark: mark)
        // The stored values, read as sRGB, against the converted reference.
        var stored = raw
        stored.colorProfile = nil
        let unmanaged = ImageComparison(stored, expected)
        #expect(unmanaged.differingPixelCount > expected.width * expected.height / 2, "the profile changes most pixels: \(unmanaged)")
        let drawn = ImageComparison(image.cropped(x: 0, y: 0, width: expected.width, height: expected.height), expected)
        #expect(drawn.matches(.within(levels: 2)), "\(drawn)")
    }
}
#endif
