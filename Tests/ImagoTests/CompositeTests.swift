import ImageFixtures
import Imago
import ImagoTesting
import Testing

/// `composited(with:at:opacity:linearLight:)`: placement (gravity, point,
/// tiles), blending (opacity, alpha, linear light), formats, frames, and
/// overlays that miss the image (ported from the server's watermark tests).
@Suite struct CompositeTests {
    /// A white 200x150 RGB base.
    let white = ProcessingFixtures.uniform(width: 200, height: 150, [255, 255, 255], format: .rgb8)
    /// A 20x10 opaque red mark.
    let mark = ProcessingFixtures.uniform(width: 20, height: 10, [255, 0, 0, 255], format: .rgba8)

    /// The red pixels' bounding box (x, y, width, height) and count.
    func red(_ image: Image) -> (box: (Int, Int, Int, Int)?, count: Int) {
        var (minX, minY, maxX, maxY, count) = (Int.max, Int.max, -1, -1, 0)
        for y in 0..<image.height {
            for x in 0..<image.width where Array(image.pixel(x: x, y: y).prefix(3)) == [255, 0, 0] {
                (minX, minY, maxX, maxY, count) = (min(minX, x), min(minY, y), max(maxX, x), max(maxY, y), count + 1)
            }
        }
        return (count == 0 ? nil : (minX, minY, maxX - minX + 1, maxY - minY + 1), count)
    }

    /// Whether the red pixels are exactly one solid rectangle at x, y of width x height.
    func expectRed(_ image: Image, _ x: Int, _ y: Int, _ width: Int, _ height: Int,
                   sourceLocation: SourceLocation = #_sourceLocation) {
        let found = red(image)
        #expect(found.box.map { "\($0)" } == "\((x, y, width, height))", sourceLocation: sourceLocation)
        #expect(found.count == width * height, "a solid rectangle", sourceLocation: sourceLocation)
    }

    @Test func aGravityWithOffsetsPlacesIt() {
        // x = 200 - 20 - 5 = 175, y = 150 - 10 - 7 = 133.
        let image = white.composited(with: mark, at: .gravity(.southEast, offsetX: 5, offsetY: 7))
        #expect(image.pixelFormat == .rgb8)
        #expect(image.pixel(x: 175, y: 133) == [255, 0, 0])
        #expect(image.pixel(x: 174, y: 133) == [255, 255, 255])
        #expect(image.pixel(x: 175, y: 132) == [255, 255, 255])
        #expect(image.pixel(x: 194, y: 142) == [255, 0, 0])
        #expect(image.pixel(x: 195, y: 142) == [255, 255, 255])
        #expect(image.pixel(x: 194, y: 143) == [255, 255, 255])
        expectRed(image, 175, 133, 20, 10)
        expectRed(white.composited(with: mark, at: .gravity(.northWest)), 0, 0, 20, 10)
        // Centred: 90 and 70 spare on each side.
        expectRed(white.composited(with: mark), 90, 70, 20, 10)
        expectRed(white.composited(with: mark, at: .gravity(.center, offsetX: 3, offsetY: -4)), 93, 66, 20, 10)
    }

    @Test func aMarkMayHangOverTheEdge() {
        // Pushed 15 px past the left edge: 5 columns stay.
        expectRed(white.composited(with: mark, at: .point(x: -15, y: 0)), 0, 0, 5, 10)
        expectRed(white.composited(with: mark, at: .point(x: 190, y: 145)), 190, 145, 10, 5)
        expectRed(white.composited(with: mark, at: .gravity(.west, offsetX: -15, offsetY: 0)), 0, 70, 5, 10)
        expectRed(white.composited(with: mark, at: .gravity(.south, offsetX: 0, offsetY: -4)), 90, 144, 20, 6)
    }

    @Test func tilesRepeatAnOddNumberOfTimesCentred() {
        // Tiles of 20x10 plus gaps of 20x10: cells of 40x20. 200 / 40 = 5
        // across (odd); 150 / 20 = 8 down, made 9, 180 high with 15 over
        // each edge. Each mark sits in the middle of its cell: columns 10,
        // 50, ..., 170; rows -10 (cut), 10, ..., 130, 150 (cut).
        let image = white.composited(with: mark, at: .tiled(spacingX: 20, spacingY: 10))
        var wrong = 0
        for y in 0..<150 {
            for x in 0..<200 {
                let inColumn = x >= 10 && (x - 10) % 40 < 20, inRow = y >= 10 && (y - 10) % 20 < 10
                if (image.pixel(x: x, y: y) == [255, 0, 0]) != (inColumn && inRow) { wrong += 1 }
            }
        }
        #expect(wrong == 0)
        #expect(red(image).count == 5 * 7 * 200)
        #expect(image.pixel(x: 100, y: 75) == [255, 0, 0], "a tile at the centre")
        #expect(image.pixel(x: 89, y: 75) == [255, 255, 255], "the gap left of it")
    }

    @Test func tilesWithoutGapsAreCentredToo() {
        // A 30x20 mark with a blue top-left pixel: 7 across from x = -5, 9 down from y = -15.
        var pixels = Array(repeatElement([255, 0, 0, 255] as [UInt8], count: 600).joined())
        pixels.replaceSubrange(0..<4, with: [0, 0, 255, 255])
        let stamp = Image(width: 30, height: 20, pixelFormat: .rgba8, pixels: pixels)
        let image = white.composited(with: stamp, at: .tiled())
        var blue: [String] = []
        for y in 0..<150 { for x in 0..<200 where image.pixel(x: x, y: y) == [0, 0, 255] { blue.append("\(x),\(y)") } }
        let expected = [5, 25, 45, 65, 85, 105, 125, 145].flatMap { y in [25, 55, 85, 115, 145, 175].map { "\($0),\(y)" } }
        #expect(blue == expected)
        #expect(red(image).count == 200 * 150 - expected.count, "no gaps")
    }

    @Test func hugeSpacingLeavesOneCentredTile() {
        let image = white.composited(with: mark, at: .tiled(spacingX: Int.max / 2, spacingY: Int.max / 2))
        expectRed(image, 90, 70, 20, 10)
    }

    @Test func opacityBlendsHalfway() {
        let half = white.composited(with: mark, at: .gravity(.northWest), opacity: 0.5)
        let pixel = half.pixel(x: 0, y: 0)
        #expect(pixel == [255, 127, 127] || pixel == [255, 128, 128], "\(pixel)")
        #expect(half.pixel(x: 20, y: 0) == [255, 255, 255])
    }

    @Test func aTranslucentMarkOverTransparencyKeepsItsColour() {
        let clear = ProcessingFixtures.uniform(width: 200, height: 150, [0, 0, 0, 0], format: .rgba8)
        let translucent = ProcessingFixtures.uniform(width: 20, height: 10, [255, 0, 0, 128], format: .rgba8)
        let over = clear.composited(with: translucent, at: .gravity(.northWest))
        #expect(over.pixelFormat == .rgba8)
        #expect(over.pixel(x: 0, y: 0) == [255, 0, 0, 128])
        #expect(over.pixel(x: 19, y: 9) == [255, 0, 0, 128])
        #expect(over.pixel(x: 30, y: 30) == [0, 0, 0, 0])
        // Over an opaque base the alpha stays opaque.
        let opaqueBase = ProcessingFixtures.uniform(width: 4, height: 4, [0, 0, 255, 255], format: .rgba8)
        let onOpaque = opaqueBase.composited(with: translucent, at: .point(x: 0, y: 0))
        #expect(onOpaque.pixel(x: 0, y: 0)[3] == 255)
        #expect((127...128).contains(onOpaque.pixel(x: 0, y: 0)[0]))
    }

    @Test func linearLightBlendsIntensities() {
        let black = ProcessingFixtures.uniform(width: 4, height: 4, [0, 0, 0], format: .rgb8)
        let whiteMark = ProcessingFixtures.uniform(width: 4, height: 4, [255, 255, 255, 255], format: .rgba8)
        // Half the light of white is sRGB 188; half the stored value is 128.
        let linear = black.composited(with: whiteMark, opacity: 0.5, linearLight: true).pixel(x: 1, y: 1)
        let stored = black.composited(with: whiteMark, opacity: 0.5).pixel(x: 1, y: 1)
        for value in linear { #expect((187...189).contains(value), "\(linear)") }
        for value in stored { #expect((127...128).contains(value), "\(stored)") }
        // Opaque, both give the mark.
        #expect(black.composited(with: whiteMark, linearLight: true).pixel(x: 0, y: 0) == [255, 255, 255])
    }

    @Test func opacityZeroReturnsTheBaseUnchanged() {
        #expect(white.composited(with: mark, opacity: 0) == white)
        let photo = ProcessingFixtures.photo(width: 30, height: 20, varyingAlpha: true)
        #expect(photo.composited(with: mark, at: .tiled(), opacity: 0) == photo)
        let gray = Image(width: 2, height: 1, pixelFormat: .gray8, pixels: [10, 20])
        let fromGray = gray.composited(with: mark, opacity: 0)
        #expect(fromGray.pixelFormat == .rgb8)
        #expect(fromGray.pixels == [10, 10, 10, 20, 20, 20])
    }

    @Test func aGrayBaseBecomesColour() {
        let gray = ProcessingFixtures.uniform(width: 40, height: 30, [100], format: .gray8)
        let marked = gray.composited(with: mark, at: .gravity(.northWest))
        #expect(marked.pixelFormat == .rgb8)
        #expect(marked.pixel(x: 0, y: 0) == [255, 0, 0])
        #expect(marked.pixel(x: 39, y: 29) == [100, 100, 100])
        let grayAlpha = ProcessingFixtures.uniform(width: 40, height: 30, [100, 50], format: .grayAlpha8)
        let withAlpha = grayAlpha.composited(with: mark, at: .gravity(.northWest))
        #expect(withAlpha.pixelFormat == .rgba8)
        #expect(withAlpha.pixel(x: 0, y: 0) == [255, 0, 0, 255])
        #expect(withAlpha.pixel(x: 39, y: 29) == [100, 100, 100, 50])
    }

    @Test func everyFrameOfAnAnimatedBaseIsDrawnOn() {
        let colours: [[UInt8]] = [[0, 0, 255], [0, 255, 0], [10, 20, 30]]
        let animation = ProcessingFixtures.animation(width: 40, height: 30, colours: colours)
        let marked = animation.composited(with: mark, at: .gravity(.northEast))
        #expect((marked.frames.count, marked.loopCount) == (3, 2))
        #expect(marked.frames.map(\.duration) == animation.frames.map(\.duration))
        for (k, colour) in colours.enumerated() {
            #expect(ProcessingFixtures.pixel(marked, frame: k, x: 39, y: 0) == [255, 0, 0], "frame \(k)")
            #expect(ProcessingFixtures.pixel(marked, frame: k, x: 20, y: 9) == [255, 0, 0], "frame \(k)")
            #expect(ProcessingFixtures.pixel(marked, frame: k, x: 19, y: 0) == colour, "frame \(k)")
            #expect(ProcessingFixtures.pixel(marked, frame: k, x: 39, y: 10) == colour, "frame \(k)")
        }
    }

    @Test(arguments: [
        OverlayPosition.point(x: 200, y: 0), .point(x: -20, y: 0), .point(x: 0, y: 150), .point(x: 0, y: -10),
        .point(x: 300, y: 300), .gravity(.east, offsetX: -20, offsetY: 0), .gravity(.north, offsetX: 0, offsetY: -10),
    ])
    func anOverlayEntirelyOutsideChangesNothing(position: OverlayPosition) {
        #expect(white.composited(with: mark, at: position) == white)
    }

    @Test(arguments: [
        OverlayPosition.point(x: Int.max / 2, y: Int.max / 2), .point(x: -(Int.max / 2), y: -(Int.max / 2)),
        .point(x: Int.max / 2, y: 0), .point(x: 0, y: -(Int.max / 2)),
        .gravity(.southEast, offsetX: Int.max / 2, offsetY: Int.max / 2),
        .gravity(.northWest, offsetX: Int.max / 2, offsetY: Int.max / 2),
        .gravity(.center, offsetX: Int.max / 2, offsetY: -(Int.max / 2)),
        .gravity(.east, offsetX: -(Int.max / 2), offsetY: Int.max / 2),
        // The extremes: held at 2^40 pixels, so no sum traps.
        .point(x: .min, y: .max), .point(x: .max, y: .min),
        .gravity(.center, offsetX: .max, offsetY: .min), .gravity(.east, offsetX: .min, offsetY: .max),
    ])
    func hugeOffsetsMissTheImageWithoutTrapping(position: OverlayPosition) {
        #expect(white.composited(with: mark, at: position) == white)
    }

    /// The canvas and the crop take any offset too.
    @Test func extremePlacesDoNotTrap() {
        #expect(white.placed(onWidth: 10, height: 10, x: .min, y: .max, background: .black).pixel(x: 5, y: 5) == [0, 0, 0])
        let cut = white.cropped(to: .pixels(width: 20, height: 10), anchor: .gravity(.east, offsetX: .min, offsetY: .max))
        #expect((cut.width, cut.height) == (20, 10))
    }
}
