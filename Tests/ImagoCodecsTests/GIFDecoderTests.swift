import Foundation
import Imago
import ImagoCodecs
import ImagoTesting
import Testing

/// The GIF decoder over giflib draws exact pixels, follows
/// the browsers' animation rules and turns hostile bytes into typed errors.
@Suite struct GIFDecoderTests {
    let decoder = CodecDecoder(format: .gif, functions: .gif)
    let palette: [RGB] = [.red, .green, .blue, .yellow]

    /// The expected RGBA8 canvas: `colors` row by row (nil is transparent black).
    func canvas(_ colors: [RGB?]) -> [UInt8] {
        colors.flatMap { $0?.rgba ?? [0, 0, 0, 0] }
    }

    /// A 4x4 animation over `palette` whose first frame is solid red.
    func animation(_ later: [GIFBuilder.Frame]) -> GIFBuilder {
        GIFBuilder(width: 4, height: 4, globalColors: palette, frames: [.solid(0, width: 4, height: 4)] + later)
    }

    /// The error decoding `data` throws; the test fails when it throws none, or another type.
    func decodingError(_ data: Data, options: ImageDecodingOptions = ImageDecodingOptions(),
                       sourceLocation: SourceLocation = #_sourceLocation) throws -> ImageDecodingError {
        try #require(throws: ImageDecodingError.self, sourceLocation: sourceLocation) { try decoder.decode(data, options: options) }
    }

    // MARK: Pixels

    @Test func stillGIFDecodesToExactRGBA8Pixels() throws {
        // Given a 4x2 still of four colour blocks
        let gif = GIFBuilder(
            width: 4, height: 2, globalColors: palette,
            frames: [GIFBuilder.Frame(width: 4, height: 2, indices: [0, 0, 1, 1, 2, 2, 3, 3], control: nil)]
        )
        // When it is decoded
        let image = try decoder.decode(gif.data)
        // Then every pixel is the palette colour, opaque, not premultiplied
        #expect(image.width == 4 && image.height == 2)
        #expect(image.pixelFormat == .rgba8)
        #expect(image.bytesPerRow == 16)
        #expect(image.pixels == canvas([.red, .red, .green, .green, .blue, .blue, .yellow, .yellow]))
        #expect(image.frames.count == 1)
        #expect(image.frames[0].duration == nil)
        #expect(image.loopCount == 1)
    }

    @Test func largeStillWithAFullPaletteDecodesExactlyAcrossLZWTableResets() throws {
        // Given 256 distinct colours in a pseudo-random 200x150 pattern, enough to refill the LZW table many times
        let colors = (0..<256).map { (index: Int) -> RGB in
            RGB(red: UInt8(index), green: UInt8(255 - index), blue: UInt8(index * 7 & 0xFF))
        }
        var generator = SeededGenerator(seed: 7)
        let indices = (0..<200 * 150).map { _ in UInt8.random(in: 0...255, using: &generator) }
        let gif = GIFBuilder(width: 200, height: 150, globalColors: colors, frames: [GIFBuilder.Frame(width: 200, height: 150, indices: indices)])
        // When it is decoded
        let image = try decoder.decode(gif.data)
        // Then each pixel is its index's colour
        #expect(image.pixels == canvas(indices.map { colors[Int($0)] }))
    }

    @Test func transparentIndexLeavesTheCanvasUnchanged() throws {
        // Given a red frame, then a frame whose index 3 is transparent: blue except a transparent column
        var overlay = GIFBuilder.Frame(width: 4, height: 4, indices: Array(repeating: [3, 2, 2, 2], count: 4).flatMap { $0 })
        overlay.control?.transparentIndex = 3
        // And a first frame with transparent pixels over the empty canvas
        var first = GIFBuilder.Frame(width: 2, height: 1, indices: [1, 0])
        first.control?.transparentIndex = 0
        let gif = animation([overlay])
        let lone = GIFBuilder(width: 2, height: 1, globalColors: palette, frames: [first])
        // When they are decoded
        let image = try decoder.decode(gif.data)
        let still = try decoder.decode(lone.data)
        // Then transparent pixels show what was there: red, or transparent black
        #expect(image.frames[1].pixels == canvas(Array(repeating: [.red, .blue, .blue, .blue], count: 4).flatMap { $0 }))
        #expect(still.pixels == canvas([.green, nil]))
    }

    @Test func disposalKeepLeavesTheFrameForTheNextOne() throws {
        var topLeft = GIFBuilder.Frame.solid(2, width: 2, height: 2)
        topLeft.control?.disposal = 1
        let image = try decoder.decode(animation([topLeft, .solid(1, width: 2, height: 2, left: 2, top: 2)]).data)
        let r = RGB.red, b = RGB.blue, g = RGB.green
        #expect(image.frames[2].pixels == canvas([b, b, r, r, b, b, r, r, r, r, g, g, r, r, g, g]))
    }

    @Test func unspecifiedDisposalAlsoKeepsTheFrame() throws {
        let image = try decoder.decode(animation([.solid(2, width: 2, height: 2), .solid(1, width: 2, height: 2, left: 2, top: 2)]).data)
        let r = RGB.red, b = RGB.blue, g = RGB.green
        #expect(image.frames[2].pixels == canvas([b, b, r, r, b, b, r, r, r, r, g, g, r, r, g, g]))
    }

    @Test func disposalToBackgroundClearsTheFrameToTransparentBeforeTheNextOne() throws {
        // Given red, then blue top-left with disposal 2, then green bottom-right
        var topLeft = GIFBuilder.Frame.solid(2, width: 2, height: 2)
        topLeft.control?.disposal = 2
        let image = try decoder.decode(animation([topLeft, .solid(1, width: 2, height: 2, left: 2, top: 2)]).data)
        let r = RGB.red, b = RGB.blue, g = RGB.green
        // Then the blue frame shows, and is gone (transparent) under the green one
        #expect(image.frames[1].pixels == canvas([b, b, r, r, b, b, r, r, r, r, r, r, r, r, r, r]))
        #expect(image.frames[2].pixels == canvas([nil, nil, r, r, nil, nil, r, r, r, r, g, g, r, r, g, g]))
    }

    @Test(arguments: [3, 4]) func disposalToPreviousRestoresWhatWasUnderTheFrame(method: Int) throws {
        // Given red, blue top-left (kept), green 3x3 top-left with disposal 3 (4 is an old synonym), yellow bottom-right pixel
        var blue = GIFBuilder.Frame.solid(2, width: 2, height: 2)
        blue.control?.disposal = 1
        var green = GIFBuilder.Frame.solid(1, width: 3, height: 3)
        green.control?.disposal = method
        let image = try decoder.decode(animation([blue, green, .solid(3, width: 1, height: 1, left: 3, top: 3)]).data)
        let r = RGB.red, b = RGB.blue, g = RGB.green, y = RGB.yellow
        // Then the green frame shows, and under the yellow one the blue and red come back
        #expect(image.frames[2].pixels == canvas([g, g, g, r, g, g, g, r, g, g, g, r, r, r, r, r]))
        #expect(image.frames[3].pixels == canvas([b, b, r, r, b, b, r, r, r, r, r, r, r, r, r, y]))
    }

    @Test func disposalToPreviousOnTheFirstFrameRestoresTheEmptyCanvas() throws {
        var first = GIFBuilder.Frame.solid(0, width: 2, height: 1)
        first.control?.disposal = 3
        let gif = GIFBuilder(width: 2, height: 1, globalColors: palette, frames: [first, .solid(1, width: 1, height: 1, left: 1)])
        let image = try decoder.decode(gif.data)
        #expect(image.frames[1].pixels == canvas([nil, .green]))
    }

    @Test func interlacedRowsAreDecodedInDisplayOrder() throws {
        // Given an interlaced 3x11 frame whose rows each have their own colour (11 rows: every pass is partial)
        let colors = (0..<11).map { RGB(red: UInt8($0 * 20), green: 100, blue: UInt8(200 - $0 * 10)) }
        let indices = (0..<11).flatMap { Array(repeating: UInt8($0), count: 3) }
        let gif = GIFBuilder(width: 3, height: 11, globalColors: colors, frames: [GIFBuilder.Frame(width: 3, height: 11, indices: indices, interlaced: true)])
        // When it is decoded
        let image = try decoder.decode(gif.data)
        // Then row y has colour y
        #expect(image.pixels == canvas(indices.map { colors[Int($0)] }))
    }

    @Test func interlacedSubRectangleLandsAtItsPosition() throws {
        var frame = GIFBuilder.Frame(left: 1, top: 1, width: 2, height: 3, indices: [1, 1, 2, 2, 3, 3], interlaced: true)
        frame.control = nil
        let image = try decoder.decode(animation([frame]).data)
        let r = RGB.red, g = RGB.green, b = RGB.blue, y = RGB.yellow
        #expect(image.frames[1].pixels == canvas([r, r, r, r, r, g, g, r, r, b, b, r, r, y, y, r]))
    }

    @Test func localColorMapsOverrideTheGlobalOneForTheirFrameOnly() throws {
        // Given frame 1 with a local map where index 0 is white, and frame 2 back on the global map
        var local = GIFBuilder.Frame.solid(0, width: 2, height: 4)
        local.localColors = [.white, .black]
        let image = try decoder.decode(animation([local, .solid(2, width: 2, height: 4, left: 2)]).data)
        let w = RGB.white, r = RGB.red, b = RGB.blue
        #expect(image.frames[1].pixels == canvas(Array(repeating: [w, w, r, r], count: 4).flatMap { $0 }))
        #expect(image.frames[2].pixels == canvas(Array(repeating: [w, w, b, b], count: 4).flatMap { $0 }))
    }

    @Test func localColorMapWorksWithoutAGlobalOne() throws {
        var frame = GIFBuilder.Frame(width: 2, height: 1, indices: [1, 0])
        frame.localColors = [.yellow, .blue]
        let image = try decoder.decode(GIFBuilder(width: 2, height: 1, frames: [frame]).data)
        #expect(image.pixels == canvas([.blue, .yellow]))
    }

    @Test func colorIndexPastTheColorMapIsOpaqueBlackWithoutReadingOutOfBounds() throws {
        // Given a 2-colour map and indices 2 and 3 (the code size allows up to 3)
        let gif = GIFBuilder(width: 4, height: 1, globalColors: [.red, .green], frames: [GIFBuilder.Frame(width: 4, height: 1, indices: [0, 1, 2, 3])])
        let image = try decoder.decode(gif.data)
        #expect(image.pixels == canvas([.red, .green, .black, .black]))
    }

    // MARK: Animation

    @Test func delaysBecomeDurationsWithZeroAndOneCentisecondShownFor100Milliseconds() throws {
        // Given delays of 0, 1, 2, 10 and 50 cs, and a frame with no Graphics Control Extension
        var frames = [0, 1, 2, 10, 50].map { delay -> GIFBuilder.Frame in
            var frame = GIFBuilder.Frame.solid(0, width: 1, height: 1)
            frame.control?.delay = delay
            return frame
        }
        frames.append(GIFBuilder.Frame(width: 1, height: 1, indices: [0], control: nil))
        let image = try decoder.decode(GIFBuilder(width: 1, height: 1, globalColors: palette, frames: frames).data)
        // Then they follow the browsers' rule
        #expect(image.frames.map(\.duration) == [100, 100, 20, 100, 500, 100].map { TimeInterval($0) / 1_000 })
    }

    @Test(arguments: [(0, 0), (3, 3), (nil, 1)] as [(Int?, Int)])
    func netscapeLoopCountBecomesTheImageLoopCount(stored: Int?, expected: Int) throws {
        var gif = animation([.solid(1, width: 4, height: 4)])
        gif.loopCount = stored
        #expect(try decoder.decode(gif.data).loopCount == expected)
    }

    @Test func frameIndexReturnsThatFrameCompositedWithItsDuration() throws {
        // Given an animation with disposals
        var blue = GIFBuilder.Frame.solid(2, width: 2, height: 2)
        blue.control?.disposal = 2
        var green = GIFBuilder.Frame.solid(1, width: 2, height: 2, left: 2, top: 2)
        green.control?.delay = 30
        var gif = animation([blue, green, .solid(3, width: 1, height: 1)])
        gif.loopCount = 0
        let all = try decoder.decode(gif.data)
        // When each frame is asked for on its own
        for index in 0..<4 {
            let one = try decoder.decode(gif.data, options: ImageDecodingOptions(frameIndex: index))
            // Then it is the composited frame, with its duration
            #expect(one.frames == [all.frames[index]])
        }
        let third = try decoder.decode(gif.data, options: ImageDecodingOptions(frameIndex: 2))
        #expect(third.frames[0].duration == 0.3)
        #expect(third.loopCount == 0)
        #expect(all.frames.count == 4)
    }

    @Test func frameIndexPastTheLastFrameIsOutOfRange() throws {
        let error = try decodingError(animation([.solid(1, width: 4, height: 4)]).data, options: ImageDecodingOptions(frameIndex: 2))
        #expect(error.code == .frameOutOfRange)
    }

    @Test func zeroSizedFrameDrawsNothingButCounts() throws {
        var empty = GIFBuilder.Frame(width: 0, height: 0, indices: [])
        empty.control?.delay = 40
        let image = try decoder.decode(animation([empty, .solid(1, width: 1, height: 1)]).data)
        #expect(image.frames.count == 3)
        #expect(image.frames[1].pixels == canvas(Array(repeating: .red, count: 16)))
        #expect(image.frames[1].duration == 0.4)
    }

    /// Thumbnails downscale each frame as it is drawn; the result must be a
    /// full decode followed by the resize and crop CodecDecoder applies.
    @Test func thumbnailsDownscaleEachFrameAsAFullDecodeThenResizeWould() throws {
        var generator = SeededGenerator(seed: 0x61F)
        let colors = (0..<16).map { _ in RGB(red: .random(in: 0...255, using: &generator), green: .random(in: 0...255, using: &generator),
                                            blue: .random(in: 0...255, using: &generator)) }
        func noise(_ width: Int, _ height: Int) -> [UInt8] { (0..<width * height).map { _ in .random(in: 0...15, using: &generator) } }
        var frames = [GIFBuilder.Frame(width: 61, height: 43, indices: noise(61, 43))]
        for (index, disposal) in [1, 2, 3, 0].enumerated() {   // sub-rectangles, transparency, every disposal
            var frame = GIFBuilder.Frame(left: 5 * index, top: 3 * index, width: 30, height: 20, indices: noise(30, 20))
            frame.control = GIFBuilder.Frame.Control(delay: 5 + index, disposal: disposal, transparentIndex: index % 2 == 0 ? 3 : nil)
            frames.append(frame)
        }
        let data = GIFBuilder(width: 61, height: 43, globalColors: colors, loopCount: 2, frames: frames).data
        try PNGThumbnailTests.checkAnimationThumbnails(decoder, data, loopCount: 2)
        // The table itself hands back small frames: the full-size ones were never kept.
        let table = CodecFunctions<GIFState>.gif
        let small = try table.makeImage(try table.open(data, ImageDecodingOptions()), nil, ImageDecodingOptions(thumbnail: Thumbnail(maximumPixelSize: 16)))
        let scaled = Thumbnail(maximumPixelSize: 16).scaledSize(width: 61, height: 43)
        #expect(small.width == scaled.width && small.height == scaled.height && small.frames.count == 5)
    }

    // MARK: Damaged and hostile files

    @Test func framesThatExtendPastTheCanvasAreClippedToIt() throws {
        // Given a 4x4 canvas, a frame reaching column 5, one wider and taller
        // than the canvas, and one wholly outside it
        let gif = GIFBuilder(width: 4, height: 4, globalColors: palette, frames: [
            .solid(1, width: 2, height: 2, left: 3, top: 0),
            .solid(2, width: 6, height: 5, left: 0, top: 2),
            .solid(3, width: 2, height: 2, left: 9, top: 9),
        ])
        let image = try decoder.decode(gif.data)
        #expect(image.width == 4 && image.height == 4 && image.frames.count == 3)
        // Then the first frame shows its part inside the canvas only
        func rgba(_ color: RGB) -> [UInt8] { [color.red, color.green, color.blue, 255] }
        let green = rgba(palette[1])
        #expect((0..<4).map { pixel(of: image, frame: 0, x: 3, y: $0) } == [green, green, [0, 0, 0, 0], [0, 0, 0, 0]])
        #expect(pixel(of: image, frame: 0, x: 2, y: 0) == [0, 0, 0, 0])
        // And the oversized frame fills the rows it covers, edge to edge
        #expect((0..<4).map { pixel(of: image, frame: 1, x: $0, y: 3) } == Array(repeating: rgba(palette[2]), count: 4))
        #expect(pixel(of: image, frame: 1, x: 3, y: 0) == green)
        // And the frame outside changes nothing
        #expect(image.frames[2].pixels == image.frames[1].pixels)
    }

    @Test func hugeCanvasIsRejectedFromTheHeaderWithoutDecoding() throws {
        // Given a GIF declaring the largest canvas the format allows (65535x65535: GIF sizes are 16-bit)
        let gif = GIFBuilder(width: 65_535, height: 65_535, globalColors: palette, frames: [.solid(0, width: 1, height: 1)])
        var functions = CodecFunctions.gif
        functions.makeImage = { _, _, _ in throw CodecError(library: "test", code: 1, message: "the image step ran") }
        // When it is decoded, with the pixel step made to fail
        let error = try #require(throws: ImageDecodingError.self) { try CodecDecoder(format: .gif, functions: functions).decode(gif.data) }
        // Then the pixel limit rejects it from the header: the pixel step never runs
        #expect(error.code == .tooManyPixels)
        // And the real table rejects it the same way
        #expect(try decodingError(gif.data).code == .tooManyPixels)
    }

    @Test func manyFramesAreRejectedBeforeDecoding() throws {
        let many = GIFBuilder(width: 1, height: 1, globalColors: palette, frames: Array(repeating: .solid(0, width: 1, height: 1), count: 1_001))
        #expect(try decodingError(many.data).code == .tooManyFrames)
        let six = GIFBuilder(width: 1, height: 1, globalColors: palette, frames: Array(repeating: .solid(0, width: 1, height: 1), count: 6))
        #expect(try decodingError(six.data, options: ImageDecodingOptions(maximumFrameCount: 5)).code == .tooManyFrames)
    }

    @Test func framesTimesCanvasOverThePixelLimitIsRejectedButAnEarlyFrameDecodes() throws {
        let gif = GIFBuilder(width: 100, height: 100, globalColors: palette, frames: Array(repeating: .solid(0, width: 100, height: 100), count: 3))
        #expect(try decodingError(gif.data, options: ImageDecodingOptions(maximumPixelCount: 25_000)).code == .tooManyPixels)
        // Frame 2 is composited from frames 0...2: the same work as the whole file.
        #expect(try decodingError(gif.data, options: ImageDecodingOptions(maximumPixelCount: 25_000, frameIndex: 2)).code == .tooManyPixels)
        let one = try decoder.decode(gif.data, options: ImageDecodingOptions(maximumPixelCount: 25_000, frameIndex: 1))
        #expect(one.frames.count == 1)
    }

    @Test(arguments: [
        ("empty", Data()),
        ("garbage", Data("this is not a GIF at all, just text".utf8)),
        ("signature only", Data("GIF89a".utf8)),
        ("PNG", Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0, 13])),
    ])
    func bytesThatAreNotAGIFCannotBeOpened(name: String, data: Data) throws {
        #expect(try decodingError(data).code == .couldNotOpen, "\(name)")
    }

    @Test func gifWithoutImageFramesCannotBeOpened() throws {
        var gif = GIFBuilder(width: 4, height: 4, globalColors: palette, frames: [])
        gif.loopCount = 0
        let error = try decodingError(gif.data)
        #expect(error.code == .couldNotOpen)
        #expect((error.underlying as? CodecError)?.library == "giflib")
    }

    @Test func frameWithNoColorMapAtAllDrawsItsIndicesAsGrayLevels() throws {
        // Given a GIF with neither a global nor a local colour map
        let gif = GIFBuilder(width: 3, height: 1, frames: [GIFBuilder.Frame(width: 3, height: 1, indices: [0, 7, 200])])
        // Then each index is drawn as that level of gray, as Pillow shows it
        let image = try decoder.decode(gif.data)
        #expect(image.pixels == [0, 0, 0, 255, 7, 7, 7, 255, 200, 200, 200, 255])
    }

    @Test func fileThatStopsAfterWholeFramesKeepsThem() throws {
        // Given an animation without its trailer, and one cut inside the pixels of its third frame
        // (after its 8-byte control extension, 10-byte descriptor, code size and first block length)
        var noTrailer = animation([.solid(1, width: 4, height: 4), .solid(2, width: 4, height: 4)])
        noTrailer.trailer = false
        let bytes = noTrailer.data
        let lengthOfTwoFrames = animation([.solid(1, width: 4, height: 4)]).data.count - 1
        // When they are decoded
        let whole = try decoder.decode(bytes)
        let cut = try decoder.decode(bytes.prefix(lengthOfTwoFrames + 21))
        // Then the whole frames are kept, as browsers show them
        #expect(whole.frames.count == 3)
        #expect(cut.frames.count == 2)
        #expect(cut.frames[1].pixels == canvas(Array(repeating: .green, count: 16)))
    }

    @Test func fileCutInsideTheFirstFrameCannotBeOpened() throws {
        let bytes = GIFBuilder(width: 40, height: 40, globalColors: palette, frames: [.solid(1, width: 40, height: 40)]).data
        #expect(try decodingError(bytes.prefix(bytes.count - 5)).code == .couldNotOpen)
    }

    @Test func corruptCompressedPixelsCannotProduceAnImage() throws {
        // Given a 4x1 frame whose LZW stream ends after one pixel: with code size 2, the 3-bit codes
        // clear (4), index 0, end (5) pack least significant bit first into 0x44 0x01
        var bytes = [UInt8](GIFBuilder(width: 4, height: 1, globalColors: palette, frames: [], trailer: false).data)
        bytes += [0x2C, 0, 0, 0, 0, 4, 0, 1, 0, 0]
        bytes += [2, 2, 0x44, 0x01, 0, 0x3B]
        let error = try decodingError(Data(bytes))
        #expect(error.code == .couldNotProduceImage)
        #expect((error.underlying as? CodecError)?.library == "giflib")
    }

    @Test func verifierFindsNoFailuresOnTheBuiltFiles() {
        var blue = GIFBuilder.Frame.solid(2, width: 2, height: 2)
        blue.control?.disposal = 3
        var local = GIFBuilder.Frame(left: 1, top: 0, width: 3, height: 4, indices: Array(repeating: [0, 1, 1], count: 4).flatMap { $0 }, interlaced: true)
        local.localColors = [.white, .black]
        local.control?.transparentIndex = 0
        var looping = animation([blue, local, .solid(3, width: 1, height: 1, left: 3, top: 3)])
        looping.loopCount = 0
        let files: [(String, Data)] = [
            ("animation", looping.data),
            ("still", GIFBuilder(width: 30, height: 20, globalColors: palette, frames: [GIFBuilder.Frame(width: 30, height: 20, indices: (0..<600).map { UInt8($0 % 4) })]).data),
        ]
        for (name, data) in files {
            let report = DecoderVerifier.verify(decoder, on: data)
            #expect(report.failures.isEmpty, "\(name): \(report.failures)")
        }
    }

    @Test func randomCorruptionGivesAnImageOrATypedErrorNeverACrash() {
        // Given a valid animation, with 1 to 4 random bytes changed, 1,500 times (seeded: the same runs every time)
        var blue = GIFBuilder.Frame.solid(2, width: 2, height: 2)
        blue.control?.disposal = 2
        var gif = animation([blue, .solid(1, width: 3, height: 3, left: 1, top: 1)])
        gif.loopCount = 2
        let original = [UInt8](gif.data)
        var generator = SeededGenerator(seed: 42)
        for _ in 0..<1_500 {
            var bytes = original
            for _ in 0..<Int.random(in: 1...4, using: &generator) {
                bytes[Int.random(in: 0..<bytes.count, using: &generator)] = UInt8.random(in: 0...255, using: &generator)
            }
            // When it is decoded, nothing but an ImageDecodingError comes out
            do {
                _ = try decoder.decode(Data(bytes))
            } catch {
                #expect(error is ImageDecodingError)
            }
        }
    }

    // MARK: Files from another encoder

    @Test func pillowStillWithQuadrantsDecodesExactly() throws {
        // scripts/fixtures/make-gif-fixtures.py: 32x32, interlaced by Pillow, quadrants red, green / blue, yellow
        let image = try decoder.decode(try Fixtures.data("gif/pillow-quadrants.gif"))
        let r = RGB.red, g = RGB.green, b = RGB.blue, y = RGB.yellow
        let expected = (0..<32).flatMap { y0 in (0..<32).map { x in y0 < 16 ? (x < 16 ? r : g) : (x < 16 ? b : y) } }
        #expect(image.width == 32 && image.height == 32)
        #expect(image.pixels == canvas(expected))
    }

    @Test func pillowAnimationDecodesEveryFrameWithItsTiming() throws {
        // scripts/fixtures/make-gif-fixtures.py: 16x16, solid red, then a blue 8x8 top-left square, then a
        // green bottom row over that; 100, 200, 300 ms; loop forever
        let data = try Fixtures.data("gif/pillow-animation.gif")
        let image = try decoder.decode(data)
        let r = RGB.red, b = RGB.blue, g = RGB.green
        let first = Array(repeating: r, count: 256)
        let second = (0..<256).map { $0 % 16 < 8 && $0 / 16 < 8 ? b : r }
        let third = (0..<256).map { $0 / 16 == 15 ? g : second[$0] }
        #expect(image.frames.map(\.pixels) == [canvas(first), canvas(second), canvas(third)])
        #expect(image.frames.map(\.duration) == [100, 200, 300].map { TimeInterval($0) / 1_000 })
        #expect(image.loopCount == 0)
        #expect(DecoderVerifier.verify(decoder, on: data).failures.isEmpty)
    }
}

/// A deterministic random number generator (SplitMix64) for repeatable tests.
struct SeededGenerator: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
