import ImageFixtures
import Foundation
import Imago
import ImagoTesting
import Testing

/// `placed`, `extended`, `padded` and `flattened`: where the image lands,
/// what is cut, the canvas's pixel format and colour profile, every frame,
/// and the exact blend of a flatten.
@Suite struct CanvasTests {
    /// Every pixel of `result`: `image`'s where the image lands with its
    /// top-left corner at `x`, `y`, `background` elsewhere. Pixel by pixel
    /// against that rule, byte for byte (a transparent background's colour
    /// counts too), rather than through ImageComparison.
    func expectPlaced(_ result: Image, _ image: Image, x: Int, y: Int, background: [UInt8],
                      sourceLocation: SourceLocation = #_sourceLocation) {
        var wrong: [String] = []
        for cy in 0..<result.height {
            for cx in 0..<result.width {
                let (ix, iy) = (cx - x, cy - y)
                let inside = (0..<image.width).contains(ix) && (0..<image.height).contains(iy)
                let expected = inside ? image.pixel(x: ix, y: iy) : background
                let actual = result.pixel(x: cx, y: cy)
                if actual != expected { wrong.append("(\(cx), \(cy)) is \(actual), not \(expected)") }
            }
        }
        #expect(wrong.isEmpty, "\(wrong.count) wrong pixels, first \(wrong.prefix(3))", sourceLocation: sourceLocation)
    }

    let image = ProcessingFixtures.numbered(width: 4, height: 3)
    let white: [UInt8] = [255, 255, 255]

    @Test func placedCutsWhatFallsOffTheTopAndLeft() {
        let result = image.placed(onWidth: 3, height: 2, x: -2, y: -1, background: .white)
        #expect((result.width, result.height, result.pixelFormat) == (3, 2, .rgb8))
        #expect(result.pixel(x: 0, y: 0) == image.pixel(x: 2, y: 1))
        #expect(result.pixel(x: 1, y: 1) == image.pixel(x: 3, y: 2))
        #expect(result.pixel(x: 2, y: 0) == white)
        expectPlaced(result, image, x: -2, y: -1, background: white)
    }

    @Test func placedCutsWhatFallsOffTheBottomAndRight() {
        let result = image.placed(onWidth: 5, height: 4, x: 3, y: 2, background: .white)
        #expect(result.pixel(x: 3, y: 2) == image.pixel(x: 0, y: 0))
        #expect(result.pixel(x: 4, y: 3) == image.pixel(x: 1, y: 1))
        #expect(result.pixel(x: 2, y: 2) == white)
        expectPlaced(result, image, x: 3, y: 2, background: white)
    }

    @Test(arguments: [(10, 0), (-4, 0), (0, 3), (0, -3), (-100, 100)])
    func anImageEntirelyOffTheCanvasLeavesOnlyTheBackground(x: Int, y: Int) {
        let result = image.placed(onWidth: 4, height: 3, x: x, y: y, background: ImageColor(red: 1, green: 2, blue: 3))
        #expect(result.pixels == Array(repeatElement([1, 2, 3], count: 12).joined()))
    }

    /// A 3x2 image on an 8x5 canvas (5 and 3 spare): the top-left corner at each gravity.
    static let origins: [(Gravity, Int, Int)] = [
        (.center, 2, 1), (.north, 2, 0), (.south, 2, 3), (.east, 5, 1), (.west, 0, 1),
        (.northEast, 5, 0), (.northWest, 0, 0), (.southEast, 5, 3), (.southWest, 0, 3),
    ]

    @Test(arguments: origins)
    func extendedPutsTheImageWhereTheGravitySays(gravity: Gravity, x: Int, y: Int) {
        let small = ProcessingFixtures.numbered(width: 3, height: 2)
        let origin = gravity.origin(ofWidth: 3, height: 2, inWidth: 8, height: 5)
        #expect((origin.x, origin.y) == (x, y))
        let result = small.extended(toWidth: 8, height: 5, gravity: gravity, background: .white)
        #expect((result.width, result.height, result.pixelFormat) == (8, 5, .rgb8))
        expectPlaced(result, small, x: x, y: y, background: white)
    }

    @Test func aCanvasSmallerThanTheImageCutsItAroundTheGravity() {
        let large = ProcessingFixtures.numbered(width: 5, height: 4)
        // 3 and 1 spare pixels short: centred with the odd one before, at (-2, -1).
        let centre = large.extended(toWidth: 2, height: 3, background: .white)
        #expect(centre.pixel(x: 0, y: 0) == large.pixel(x: 2, y: 1))
        expectPlaced(centre, large, x: -2, y: -1, background: white)
        let corner = large.extended(toWidth: 2, height: 3, gravity: .southEast, background: .white)
        expectPlaced(corner, large, x: -3, y: -1, background: white)
        #expect(corner.pixel(x: 1, y: 2) == large.pixel(x: 4, y: 3))
    }

    @Test func aClearBackgroundAddsAlpha() {
        let result = image.extended(toWidth: 6, height: 5)
        #expect(result.pixelFormat == .rgba8)
        expectPlaced(result, image.converted(to: .rgba8), x: 1, y: 1, background: [0, 0, 0, 0])
        #expect(result.pixel(x: 1, y: 1) == image.pixel(x: 0, y: 0) + [255])
        let translucent = image.extended(toWidth: 6, height: 5, background: ImageColor(red: 9, green: 8, blue: 7, alpha: 200))
        #expect(translucent.pixelFormat == .rgba8)
        #expect(translucent.pixel(x: 0, y: 0) == [9, 8, 7, 200])
    }

    @Test func anOpaqueColourOnRGBStaysRGB() {
        let result = image.extended(toWidth: 6, height: 5, background: ImageColor(red: 10, green: 20, blue: 30))
        #expect(result.pixelFormat == .rgb8)
        expectPlaced(result, image, x: 1, y: 1, background: [10, 20, 30])
    }

    @Test func anImageWithAlphaKeepsIt() {
        let rgba = TestImages.gradient(width: 4, height: 3)
        let result = rgba.extended(toWidth: 6, height: 3, background: .black)
        #expect(result.pixelFormat == .rgba8)
        expectPlaced(result, rgba, x: 1, y: 0, background: [0, 0, 0, 255])
    }

    @Test func aGrayImageStaysGrayOnAGrayAndBecomesColourOnAColour() {
        let gray = Image(width: 2, height: 2, pixelFormat: .gray8, pixels: [10, 20, 30, 40])
        let onGray = gray.extended(toWidth: 4, height: 2, background: ImageColor(red: 99, green: 99, blue: 99))
        #expect(onGray.pixelFormat == .gray8)
        #expect(onGray.pixels == [99, 10, 20, 99, 99, 30, 40, 99])
        let onClear = gray.extended(toWidth: 4, height: 2)
        #expect(onClear.pixelFormat == .grayAlpha8)
        #expect(onClear.pixel(x: 0, y: 0) == [0, 0] && onClear.pixel(x: 1, y: 0) == [10, 255])
        let onRed = gray.extended(toWidth: 4, height: 2, background: ImageColor(red: 255, green: 0, blue: 0))
        #expect(onRed.pixelFormat == .rgb8)
        #expect(onRed.pixel(x: 0, y: 0) == [255, 0, 0])
        #expect(onRed.pixel(x: 2, y: 1) == [40, 40, 40])
    }

    @Test func theProfileIsDroppedOnlyWhenGrayBecomesColour() {
        let profile = ColorProfile(data: Data(repeating: 7, count: 200))
        var gray = Image(width: 2, height: 2, pixelFormat: .gray8, pixels: [10, 20, 30, 40])
        gray.colorProfile = profile
        var colour = image
        colour.colorProfile = profile
        #expect(gray.extended(toWidth: 4, height: 4, background: ImageColor(red: 255, green: 0, blue: 0)).colorProfile == nil)
        #expect(gray.extended(toWidth: 4, height: 4, background: .white).colorProfile == profile)
        #expect(gray.padded(top: 1, right: 1, bottom: 1, left: 1).colorProfile == profile, "gray with alpha is still gray")
        #expect(colour.extended(toWidth: 6, height: 6, background: .black).colorProfile == profile)
        #expect(colour.padded(top: 1, right: 0, bottom: 0, left: 0).colorProfile == profile)
        var grayAlpha = Image(width: 1, height: 1, pixelFormat: .grayAlpha8, pixels: [50, 128])
        grayAlpha.colorProfile = profile
        #expect(grayAlpha.flattened(onto: .white).colorProfile == profile)
        #expect(grayAlpha.flattened(onto: ImageColor(red: 0, green: 0, blue: 255)).colorProfile == nil)
    }

    @Test func everyFrameOfAnAnimationIsPlacedAndItsTimingKept() {
        let colours: [[UInt8]] = [[255, 0, 0], [0, 255, 0], [0, 0, 255]]
        let animation = ProcessingFixtures.animation(width: 4, height: 3, colours: colours)
        let results = [
            animation.padded(top: 1, right: 1, bottom: 1, left: 1, background: .white),
            animation.extended(toWidth: 6, height: 5, background: .white),
            animation.placed(onWidth: 6, height: 5, x: 1, y: 1, background: .white),
        ]
        for result in results {
            #expect((result.width, result.height, result.frames.count) == (6, 5, 3))
            #expect(result.frames.map(\.duration) == animation.frames.map(\.duration))
            #expect(result.loopCount == 2)
            for (k, colour) in colours.enumerated() {
                #expect(ProcessingFixtures.pixel(result, frame: k, x: 1, y: 1) == colour)
                #expect(ProcessingFixtures.pixel(result, frame: k, x: 4, y: 3) == colour)
                #expect(ProcessingFixtures.pixel(result, frame: k, x: 0, y: 0) == white)
                #expect(ProcessingFixtures.pixel(result, frame: k, x: 5, y: 4) == white)
            }
        }
    }

    @Test func paddedAddsEachSideAndFillsIt() {
        let fill = ImageColor(red: 1, green: 2, blue: 3)
        let result = image.padded(top: 1, right: 2, bottom: 3, left: 4, background: fill)
        #expect((result.width, result.height, result.pixelFormat) == (10, 7, .rgb8))
        expectPlaced(result, image, x: 4, y: 1, background: [1, 2, 3])
        let none = image.padded(top: 0, right: 0, bottom: 0, left: 0, background: .white)
        #expect(none.pixels == image.pixels && (none.width, none.height) == (4, 3))
        let clear = image.padded(top: 2, right: 2, bottom: 2, left: 2)
        #expect((clear.width, clear.height, clear.pixelFormat) == (8, 7, .rgba8))
        #expect(clear.pixel(x: 1, y: 6) == [0, 0, 0, 0])
    }

    @Test func flattenedBlendsWithRoundingAndDropsAlpha() {
        // (v * a + background * (255 - a) + 127) / 255 on (50, 150, 250).
        let pixels: [[UInt8]] = [
            [177, 22, 122, 1],    // remainders of 127: rounded down
            [178, 23, 123, 1],    // remainders of 128: rounded up
            [200, 100, 0, 128],
            [10, 20, 30, 0],      // transparent: the background
            [1, 2, 3, 255],       // opaque: the pixel
            [77, 33, 201, 200],
        ]
        let expected: [[UInt8]] = [[50, 149, 249], [51, 150, 250], [125, 125, 125], [50, 150, 250], [1, 2, 3], [71, 58, 212]]
        let image = Image(width: 3, height: 2, pixelFormat: .rgba8, pixels: Array(pixels.joined()))
        let result = image.flattened(onto: ImageColor(red: 50, green: 150, blue: 250, alpha: 7))
        #expect(result.pixelFormat == .rgb8)
        #expect((result.width, result.height) == (3, 2))
        #expect(result.pixels == Array(expected.joined()))
    }

    @Test func flattenedReturnsAnImageWithoutAlphaAsItIs() {
        #expect(image.flattened(onto: .black) == image)
        let gray = Image(width: 2, height: 1, pixelFormat: .gray8, pixels: [3, 4])
        #expect(gray.flattened(onto: ImageColor(red: 255, green: 0, blue: 0)) == gray)
    }

    @Test func flattenedGrayWithAlphaStaysGrayOnAGray() {
        let gray = Image(width: 3, height: 1, pixelFormat: .grayAlpha8, pixels: [200, 128, 10, 0, 90, 255])
        let onGray = gray.flattened(onto: ImageColor(red: 100, green: 100, blue: 100))
        #expect(onGray.pixelFormat == .gray8)
        // (200 * 128 + 100 * 127 + 127) / 255 = 150.
        #expect(onGray.pixels == [150, 100, 90])
        let onRed = gray.flattened(onto: ImageColor(red: 255, green: 0, blue: 0))
        #expect(onRed.pixelFormat == .rgb8)
        // (200 * 128 + 255 * 127 + 127) / 255 = 227; (200 * 128 + 127) / 255 = 100.
        #expect(onRed.pixels == [227, 100, 100, 255, 0, 0, 90, 90, 90])
    }

    @Test func flattenedProcessesEveryFrame() {
        let frames = [[UInt8]([255, 0, 0, 0]), [0, 0, 255, 255]].map { ImageFrame(pixels: $0, duration: 0.5) }
        let animation = Image(width: 1, height: 1, pixelFormat: .rgba8, frames: frames, loopCount: 3)
        let result = animation.flattened(onto: .white)
        #expect(result.frames.map(\.pixels) == [[255, 255, 255], [0, 0, 255]])
        #expect(result.frames.map(\.duration) == [0.5, 0.5] && result.loopCount == 3)
    }
}
