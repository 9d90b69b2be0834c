#if Server && os(Linux)
import Foundation
import Imago
import ImagoServer
import Testing

/// The geometry and layout options beyond resizing, parsed as imgproxy's
/// own parser tests expect, refused where imgproxy refuses them, written
/// back by the path builder, and applied to real pixels.
@Suite struct ImgproxyOptionsTests {
    func parse(_ options: String) throws -> ProcessingOptions {
        try ImageServerPath(parsing: "/insecure/\(options)/plain/http%3A%2F%2Fx%2Fa.png").options
    }

    func rejects(_ options: String, mentioning words: String, sourceLocation: SourceLocation = #_sourceLocation) {
        let error = #expect(throws: ImageServerError.self, sourceLocation: sourceLocation) { try parse(options) }
        #expect(error?.status == 404, sourceLocation: sourceLocation)   // imgproxy's "Invalid URL"
        #expect(error?.message.contains(words) == true, "\(error?.message ?? "")", sourceLocation: sourceLocation)
    }

    // MARK: Parsing (imgproxy's parser tests)

    @Test func extendTakesAGravityWithOffsets() throws {
        let extend = try parse("extend:1:so:10:20").extend
        #expect(extend == ProcessingOptions.Placement(gravity: .compass(.south), offset: .init(x: 10, y: 20)))
        #expect(try parse("ex:1").extend == .center)
        #expect(try parse("ex:0").extend == nil)
        #expect(try parse("rs:fill:10:10:0:1:no").extend?.gravity == .compass(.north))
        #expect(try parse("exar:1:we").extendAspectRatio?.gravity == .compass(.west))
        #expect(try parse("extend_ar:t").extendAspectRatio == .center)
        rejects("extend:1:sm", mentioning: "gravity")
        rejects("extend:1:re", mentioning: "gravity")
        rejects("ex:1:", mentioning: "gravity")
    }

    @Test func gravityTakesOffsetsAndAFocusPoint() throws {
        let soea = try parse("gravity:soea")
        #expect((soea.gravity, soea.gravityOffset) == (.compass(.southEast), .zero))
        let point = try parse("gravity:fp:0.5:0.75")
        #expect((point.gravity, point.gravityOffset) == (.focusPoint, .init(x: 0.5, y: 0.75)))
        #expect(try parse("g:no::5").gravityOffset == .init(x: 0, y: 5))
        // Offsets left out keep the earlier ones.
        #expect(try parse("g:no:3:4/g:so").gravityOffset == .init(x: 3, y: 4))
        rejects("gravity:re", mentioning: "gravity")
        rejects("g:fp:0.5", mentioning: "fp")
        rejects("g:fp:1.5:0.5", mentioning: "fp")
        rejects("g:sm:1", mentioning: "sm")
        rejects("g:", mentioning: "gravity")
        rejects("g:no:x", mentioning: "offset")
    }

    @Test func cropTakesASizeAndItsOwnGravity() throws {
        let plain = try parse("crop:100:200").crop
        #expect(plain == ProcessingOptions.Crop(width: 100, height: 200))
        let placed = try parse("crop:100:200:nowe:10:20").crop
        #expect(placed == ProcessingOptions.Crop(width: 100, height: 200, gravity: .compass(.northWest), offset: .init(x: 10, y: 20)))
        #expect(try parse("c:0.5").crop == ProcessingOptions.Crop(width: 0.5, height: 0))
        #expect(try parse("c:0:0").crop == nil)
        rejects("crop:100:200:re", mentioning: "gravity")
        rejects("c:", mentioning: "crop width")
        rejects("c:-5:5", mentioning: "crop width")
    }

    @Test func backgroundIsRGBOrHexAndEmptyClearsIt() throws {
        #expect(try parse("background:128:129:130").background == .init(red: 128, green: 129, blue: 130))
        #expect(try parse("background:ffddee").background == .init(red: 0xFF, green: 0xDD, blue: 0xEE))
        #expect(try parse("bg:f0a").background == .init(red: 0xFF, green: 0x00, blue: 0xAA))
        #expect(try parse("background:fff/background:").background == nil)
        rejects("bg:256:0:0", mentioning: "background")
        rejects("bg:1:2", mentioning: "background")
        rejects("bg:ggg", mentioning: "background")
        rejects("bg:-1:0:0", mentioning: "background")
    }

    @Test func paddingFollowsCSSOrder() throws {
        #expect(try parse("pd:10").padding == .init(top: 10, right: 10, bottom: 10, left: 10))
        #expect(try parse("pd:10:20").padding == .init(top: 10, right: 20, bottom: 10, left: 20))
        #expect(try parse("padding:10:20:30").padding == .init(top: 10, right: 20, bottom: 30, left: 20))
        #expect(try parse("pd:1:2:3:4").padding == .init(top: 1, right: 2, bottom: 3, left: 4))
        #expect(try parse("pd::20").padding == .init(top: 0, right: 20, bottom: 0, left: 20))
        rejects("pd:-1", mentioning: "padding")
        rejects("pd:1:2:3:4:5", mentioning: "arguments")
    }

    @Test func sizesZoomAndDPR() throws {
        let options = try parse("mw:100/mh:50/z:2:3/dpr:2")
        #expect((options.minWidth, options.minHeight, options.zoomX, options.zoomY, options.dpr) == (100, 50, 2, 3, 2))
        #expect(try parse("zoom:1.5").zoomY == 1.5)
        #expect(try parse("min-width:7").minWidth == 7)
        rejects("dpr:0", mentioning: "dpr")
        rejects("dpr:nan", mentioning: "dpr")
        rejects("z:2:", mentioning: "zoom")
        rejects("z:-1", mentioning: "zoom")
        rejects("mw:-1", mentioning: "min-width")
    }

    @Test func rotationFlipAndAutoRotate() throws {
        #expect(try parse("rotate:90").rotation == 90)
        #expect(try parse("rot:450").rotation == 90)
        #expect(try parse("rot:-90").rotation == 270)
        let flip = try parse("fl:1:t")
        #expect((flip.flipsHorizontally, flip.flipsVertically) == (true, true))
        #expect(try parse("fl::1").flipsHorizontally == false)
        #expect(try parse("fl::1").flipsVertically == true)
        #expect(try parse("ar:1") == ProcessingOptions())
        rejects("rot:45", mentioning: "multiple of 90")
        #expect(try parse("ar:0").autoRotates == false)
        rejects("ar:2", mentioning: "auto_rotate")
    }

    @Test func booleansTakeGosSpellings() throws {
        for spelling in ["1", "t", "T", "true", "TRUE", "True"] { #expect(try parse("el:\(spelling)").enlarge) }
        for spelling in ["0", "f", "F", "false", "FALSE", "False"] { #expect(try !parse("el:\(spelling)").enlarge) }
    }

    /// What the builder writes parses back to the same options.
    @Test func theBuilderWritesEveryOption() throws {
        var options = ProcessingOptions()
        options.resizingType = .fill
        (options.width, options.height) = (300, 200)
        options.gravity = .focusPoint
        options.gravityOffset = .init(x: 0.25, y: 0.75)
        (options.minWidth, options.minHeight) = (10, 20)
        (options.zoomX, options.zoomY) = (1.5, 2)
        options.dpr = 2
        options.extend = .init(gravity: .compass(.southEast), offset: .init(x: 3, y: 4))
        options.crop = .init(width: 0.5, height: 300, gravity: .compass(.north), offset: .init(x: 0, y: 10))
        options.padding = .init(top: 1, right: 2, bottom: 3, left: 4)
        options.rotation = 270
        options.flipsVertically = true
        options.background = .init(red: 1, green: 2, blue: 3)
        options.maximumResultDimension = 500
        let path = ImageServerPath(source: URL(string: "https://x.example/a.jpg")!, options: options).path(signedWith: nil)
        #expect(try ImageServerPath(parsing: path).options == options)
        var aspect = ProcessingOptions()
        aspect.extendAspectRatio = .center
        let written = ImageServerPath(source: URL(string: "https://x.example/a.jpg")!, options: aspect).path(signedWith: nil)
        #expect(try ImageServerPath(parsing: written).options == aspect)
    }

    // MARK: Pixels

    /// A 20x10 image: the left half red, the right half blue.
    static let halves = Image(width: 20, height: 10, pixelFormat: .rgb8, pixels: (0..<200).flatMap { index in
        index % 20 < 10 ? [255, 0, 0] : [0, 0, 255] as [UInt8]
    })

    @Test func extendFillsWithTheBackgroundAtTheGravity() throws {
        let image = try parse("rs:fit:40:20/ex:1:we/bg:0:255:0").apply(to: Self.halves)
        #expect((image.width, image.height, image.pixelFormat) == (40, 20, .rgb8))
        // 20x10 placed at the west edge, centred down: rows 5...14, columns 0...19.
        #expect(image.pixel(x: 0, y: 5) == [255, 0, 0])
        #expect(image.pixel(x: 19, y: 14) == [0, 0, 255])
        #expect(image.pixel(x: 0, y: 4) == [0, 255, 0])
        #expect(image.pixel(x: 20, y: 10) == [0, 255, 0])
    }

    @Test func extendWithoutBackgroundIsTransparentAndFlattensToWhiteForJPEG() throws {
        let options = try parse("rs:fit:30:10/ex:1")
        let image = options.apply(to: Self.halves)
        #expect((image.width, image.height, image.pixelFormat) == (30, 10, .rgba8))
        #expect(image.pixel(x: 0, y: 0) == [0, 0, 0, 0])
        #expect(image.pixel(x: 5, y: 0) == [255, 0, 0, 255])
        #expect(options.flattened(image, for: .png) == image)
        let flat = options.flattened(image, for: .jpeg)
        #expect(flat.pixelFormat == .rgb8)
        #expect(flat.pixel(x: 0, y: 0) == [255, 255, 255])
        #expect(flat.pixel(x: 5, y: 0) == [255, 0, 0])
    }

    @Test func paddingSurroundsTheImageTimesTheDPR() throws {
        let image = try parse("pd:1:2:3:4/bg:fff/dpr:2/el:1").apply(to: Self.halves)
        // dpr 2 with enlarge: 40x20, then 2, 4, 6 and 8 pixels of padding.
        #expect((image.width, image.height) == (40 + 4 + 8, 20 + 2 + 6))
        #expect(image.pixel(x: 7, y: 2) == [255, 255, 255])
        #expect(image.pixel(x: 8, y: 2) == [255, 0, 0])
        #expect(image.pixel(x: 47, y: 21) == [0, 0, 255])
        #expect(image.pixel(x: 48, y: 21) == [255, 255, 255])
    }

    @Test func rotationAndFlipTurnTheResult() throws {
        let turned = try parse("rot:90").apply(to: Self.halves)
        #expect((turned.width, turned.height) == (10, 20))
        // A quarter turn clockwise: the left (red) half goes to the top.
        #expect(turned.pixel(x: 0, y: 0) == [255, 0, 0])
        #expect(turned.pixel(x: 0, y: 19) == [0, 0, 255])
        let mirrored = try parse("fl:1").apply(to: Self.halves)
        #expect(mirrored.pixel(x: 0, y: 0) == [0, 0, 255])
        let both = try parse("rot:180/fl:1").apply(to: Self.halves)
        #expect(both == Self.halves.applying(.downMirrored))
    }

    @Test func cropCutsBeforeResizing() throws {
        // The east half is all blue; scaled up 2x it stays all blue.
        let east = try parse("c:10:10:ea/rs:fit:20:20/el:1").apply(to: Self.halves)
        #expect((east.width, east.height) == (20, 20))
        #expect(Set(stride(from: 0, to: east.pixels.count, by: 3).map { east.pixels[$0] }) == [0])
        // A relative crop of half the width at the west edge: all red.
        let west = try parse("c:0.5:0:we").apply(to: Self.halves)
        #expect((west.width, west.height) == (10, 10))
        #expect(Set(stride(from: 2, to: west.pixels.count, by: 3).map { west.pixels[$0] }) == [0])
        // Without its own gravity, the crop follows the path's.
        #expect(try parse("c:10:10/g:ea").apply(to: Self.halves) == parse("c:10:10:ea").apply(to: Self.halves))
    }

    @Test func aFocusPointKeepsItsSideOfTheImage() throws {
        let right = try parse("rs:fill:10:10/g:fp:0.9:0.5").apply(to: Self.halves)
        #expect(right.pixel(x: 9, y: 5) == [0, 0, 255])
        #expect(right.pixel(x: 0, y: 5) == [0, 0, 255])
        let left = try parse("rs:fill:10:10/g:fp:0.1:0.5").apply(to: Self.halves)
        #expect(left.pixel(x: 9, y: 5) == [255, 0, 0])
    }

    @Test func aBackgroundFlattensTransparency() throws {
        let transparent = Image(width: 2, height: 1, pixelFormat: .rgba8, pixels: [255, 0, 0, 0, 255, 0, 0, 255])
        let options = try parse("bg:0:0:255")
        let flat = options.flattened(options.apply(to: transparent), for: .png)
        #expect(flat.pixelFormat == .rgb8)
        #expect(flat.pixels == [0, 0, 255, 255, 0, 0])
    }
}

/// The layout options through the server over HTTP: sizes, colours and the
/// security option's gate.
@Suite struct LayoutOverHTTPTests {
    @Test func extendedJPEGOutputIsWhiteAroundTheImage() async throws {
        let origin = try await Fixture.origin()
        let image = try await Fixture.withServer(Fixture.configuration()) { client, _ in
            let response = try await client.execute(uri: Fixture.path("rs:fit:300:300/ex:1:no", origin.url("/a.png"), extension: "jpg"), method: .get)
            #expect(response.status == .ok)
            #expect(response.header("Content-Type") == "image/jpeg")
            return try response.image()
        }
        // The 200x150 source, not enlarged, at the top of a 300x300 canvas.
        #expect((image.width, image.height) == (300, 300))
        #expect(image.pixel(x: 5, y: 290).allSatisfy { $0 > 245 }, "white below the image, not black")
        #expect(image.pixel(x: 150, y: 75).contains { $0 < 200 }, "the image itself")
    }

    @Test func paddingRotationAndBackgroundOverHTTP() async throws {
        let origin = try await Fixture.origin()
        let image = try await Fixture.withServer(Fixture.configuration()) { client, _ in
            try await client.execute(uri: Fixture.path("rs:fit:100:100/rot:90/pd:10:20/bg:ff0000", origin.url("/a.png"), extension: "png"), method: .get).image()
        }
        // 200x150 turned is 150x200, fitted to 75x100, padded 20 across and 10 down.
        #expect((image.width, image.height) == (75 + 40, 100 + 20))
        #expect(image.pixel(x: 0, y: 0).prefix(3) == [255, 0, 0])
        #expect(image.pixel(x: 114, y: 119).prefix(3) == [255, 0, 0])
    }

    @Test func maxResultDimensionNeedsSecurityOptions() async throws {
        let origin = try await Fixture.origin()
        let path = Fixture.path("rs:fit:150:150/mrd:50", origin.url("/a.png"), extension: "png")
        try await Fixture.withServer(Fixture.configuration()) { client, _ in
            let response = try await client.execute(uri: path, method: .get)
            #expect(response.status == .forbidden)
            #expect(response.errorCode == "forbidden_option")
        }
        let image = try await Fixture.withServer(Fixture.configuration { $0.allowsSecurityOptions = true }) { client, _ in
            try await client.execute(uri: path, method: .get).image()
        }
        #expect((image.width, image.height) == (50, 38))
    }
}

/// Paths chosen to break the arithmetic or the memory: each gives an image
/// of bounded size, never a trap or a giant intermediate.
@Suite struct HostileGeometryTests {
    func apply(_ options: String, to image: Image) throws -> Image {
        try ImageServerPath(parsing: "/insecure/\(options)/plain/http%3A%2F%2Fx%2Fa.png").options.apply(to: image)
    }

    static func gray(_ width: Int, _ height: Int) -> Image {
        Image(width: width, height: height, pixelFormat: .gray8, pixels: (0..<width * height).map { UInt8($0 % 256) })
    }

    @Test(arguments: ["z:1:0.00000000000000000001/mh:1", "z:0.00000000000000000001/mw:1", "dpr:0.0000000000000001/el:1",
                      "z:8192/dpr:8192/el:1", "g:fp:1:1/rs:fill:8192:1:1", "mrd:1/pd:8192", "rs:force:8192:8192:1/pd:8192"])
    func absurdNumbersGiveABoundedImage(_ options: String) throws {
        let image = try apply(options, to: Self.gray(30, 20))
        #expect(image.width <= 8192 + 8192 * 2 && image.height <= 8192 + 8192 * 2)
        #expect(image.width >= 1 && image.height >= 1)
    }

    /// `rs:fill:8192:100:1` on a 100x10000 source would resample to
    /// 8192x819200 (25 GiB) before cutting 8192x100: only the kept window is.
    @Test func aGiantIntermediateIsNeverMade() throws {
        let source = Self.gray(100, 10_000)
        let plan = ResizePlan(sourceWidth: 100, sourceHeight: 10_000, options: try ImageServerPath(parsing: "/insecure/rs:fill:8192:100:1/plain/http%3A%2F%2Fx%2Fa.png").options)
        #expect(Double(plan.scaledWidth) * Double(plan.scaledHeight) > 1e9)
        let image = try apply("rs:fill:8192:100:1", to: source)
        #expect((image.width, image.height) == (8192, 100))
        let tall = try apply("w:100/mh:8192", to: Self.gray(1000, 10))
        #expect((tall.width, tall.height) == (100, 8192))
    }

    @Test func aCropKeepsWhatALaterCropLeavesOut() throws {
        let options = try ImageServerPath(parsing: "/insecure/c:100:200:no/c:50/plain/http%3A%2F%2Fx%2Fa.png").options
        #expect(options.crop == ProcessingOptions.Crop(width: 50, height: 200, gravity: .compass(.north)))
    }
}

/// Extend's gravity is checked even when extending is off.
@Suite struct ExtendParsingTests {
    func parse(_ options: String) throws -> ProcessingOptions {
        try ImageServerPath(parsing: "/insecure/\(options)/plain/http%3A%2F%2Fx%2Fa.png").options
    }

    @Test func aDisabledExtendStillChecksItsGravity() throws {
        #expect(throws: ImageServerError.self) { try parse("ex:0:sm") }
        #expect(try parse("ex:0:so").extend == nil)
    }
}
#endif
