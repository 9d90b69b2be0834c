import ImageFixtures
import Imago
import ImagoTesting
import Testing

/// `cropped(to:anchor:)`: sizes (pixels, fractions, aspect ratios) and
/// anchors (gravity with offsets, focus points, the entropy smart crop).
@Suite struct CropTests {
    /// 100x50; the pixel at x, y is `[x, y, …]`, so a crop's top-left pixel says where it started.
    let image = ProcessingFixtures.numbered(width: 100, height: 50)

    /// Where `cropped` started, read from its top-left pixel, after checking it is that rectangle.
    func origin(of crop: Image, sourceLocation: SourceLocation = #_sourceLocation) -> (Int, Int) {
        let (x, y) = (Int(crop.pixel(x: 0, y: 0)[0]), Int(crop.pixel(x: 0, y: 0)[1]))
        #expect(crop == image.cropped(x: x, y: y, width: crop.width, height: crop.height), sourceLocation: sourceLocation)
        return (x, y)
    }

    @Test func theEntropySmartCropKeepsTheDetailedPart() {
        let source = ProcessingFixtures.flatThenDetailed()
        let smart = source.cropped(to: .pixels(width: 20, height: 20), anchor: .smart(.entropy))
        #expect((smart.width, smart.height) == (20, 20))
        #expect(smart == source.cropped(x: 40, y: 0, width: 20, height: 20), "the crop starts where the detail does")
        let centre = source.cropped(to: .pixels(width: 20, height: 20))
        #expect(centre.pixels == Array(repeatElement([128, 128, 128, 255] as [UInt8], count: 400).joined()))
        // Mirrored, the detail is on the left.
        let mirrored = source.flipped(horizontally: true)
        #expect(mirrored.cropped(to: .pixels(width: 20, height: 20), anchor: .smart(.entropy)) == mirrored.cropped(x: 0, y: 0, width: 20, height: 20))
    }

    @Test func theSmartCropTiesGoToTheCentre() {
        // Gray 60x20 with one value per column: every 20-wide window has 20
        // equally common values, so every window scores the same.
        let ramp = Image(width: 60, height: 20, pixelFormat: .gray8, pixels: (0..<1200).map { UInt8($0 % 60) })
        let smart = ramp.cropped(to: .pixels(width: 20, height: 20), anchor: .smart(.entropy))
        #expect(smart.pixel(x: 0, y: 0) == [20])
        #expect(smart == ramp.cropped(to: .pixels(width: 20, height: 20)))
    }

    /// A 4x2 crop of the 100x50 image at each gravity, plain and moved by (1, 2).
    static let gravities: [(Gravity, (Int, Int), (Int, Int))] = [
        (.center, (48, 24), (49, 26)), (.north, (48, 0), (49, 2)), (.south, (48, 48), (49, 46)),
        (.east, (96, 24), (95, 26)), (.west, (0, 24), (1, 26)), (.northEast, (96, 0), (95, 2)),
        (.northWest, (0, 0), (1, 2)), (.southEast, (96, 48), (95, 46)), (.southWest, (0, 48), (1, 46)),
    ]

    @Test(arguments: gravities)
    func eachGravityWithAndWithoutOffsets(gravity: Gravity, plain: (Int, Int), moved: (Int, Int)) {
        let crop = image.cropped(to: .pixels(width: 4, height: 2), anchor: .gravity(gravity))
        #expect((crop.width, crop.height) == (4, 2))
        #expect(origin(of: crop) == plain)
        #expect(origin(of: image.cropped(to: .pixels(width: 4, height: 2), anchor: .gravity(gravity, offsetX: 1, offsetY: 2))) == moved)
    }

    @Test(arguments: Gravity.allCases)
    func offsetsAreClampedInside(gravity: Gravity) {
        let pushedOut = image.cropped(to: .pixels(width: 4, height: 2), anchor: .gravity(gravity, offsetX: 1000, offsetY: -1000))
        let pulledBack = image.cropped(to: .pixels(width: 4, height: 2), anchor: .gravity(gravity, offsetX: -1000, offsetY: 1000))
        #expect((pushedOut.width, pushedOut.height, pulledBack.width, pulledBack.height) == (4, 2, 4, 2))
        let (x1, y1) = origin(of: pushedOut), (x2, y2) = origin(of: pulledBack)
        for value in [x1, x2] { #expect(value == 0 || value == 96) }
        for value in [y1, y2] { #expect(value == 0 || value == 48) }
        #expect(x1 != x2 && y1 != y2, "opposite offsets clamp to opposite edges")
    }

    @Test func aFocusPointCentresThePartOnIt() {
        let size = CropSize.pixels(width: 10, height: 6)
        // 0.9 of 100 is 90, less half of 10: 85; 0.9 of 50 is 45, less 3: 42.
        #expect(origin(of: image.cropped(to: size, anchor: .focusPoint(x: 0.9, y: 0.9))) == (85, 42))
        #expect(origin(of: image.cropped(to: size, anchor: .focusPoint(x: 0.1, y: 0.1))) == (5, 2))
        // Kept inside the image.
        #expect(origin(of: image.cropped(to: size, anchor: .focusPoint(x: 1, y: 0))) == (90, 0))
        #expect(origin(of: image.cropped(to: size, anchor: .focusPoint(x: 7, y: -3))) == (90, 0))
        // Not a number: the centre, as the centre gravity places it.
        let centre = image.cropped(to: size, anchor: .focusPoint(x: .nan, y: .nan))
        #expect(origin(of: centre) == (45, 22))
        #expect(centre == image.cropped(to: size, anchor: .gravity(.center)))
        // The point is rounded half to even: 12.5 -> 12.
        #expect(origin(of: image.cropped(to: size, anchor: .focusPoint(x: 0.125, y: 0.5))) == (7, 22))
    }

    @Test func aFractionKeepsThatPartOfASide() {
        let half = image.cropped(to: .fraction(width: 0.5, height: 0))
        #expect((half.width, half.height) == (50, 50))
        #expect(origin(of: half) == (25, 0))
        let third = image.cropped(to: .fraction(width: 0.333, height: 0.5), anchor: .gravity(.northWest))
        #expect((third.width, third.height) == (33, 25))
        let sliver = image.cropped(to: .fraction(width: 0.001, height: 1))
        #expect((sliver.width, sliver.height) == (1, 50), "at least a pixel")
        #expect(image.cropped(to: .fraction(width: 1, height: 1)) == image)
        #expect(image.cropped(to: .fraction(width: 0, height: 0)) == image)
    }

    @Test func pixelsLargerThanTheImageAreTheWholeSide() {
        let wide = image.cropped(to: .pixels(width: 500, height: 10))
        #expect((wide.width, wide.height) == (100, 10))
        #expect(origin(of: wide) == (0, 20))
        let tall = image.cropped(to: .pixels(width: 10, height: 0))
        #expect((tall.width, tall.height) == (10, 50))
        #expect(image.cropped(to: .pixels(width: 1000, height: 1000)) == image)
        #expect(image.cropped(to: .pixels(width: 0, height: 0)) == image)
    }

    @Test func anAspectRatioKeepsTheLargestPartOfThatShape() {
        let square = Image(width: 300, height: 300, pixelFormat: .gray8, pixels: (0..<90_000).map { UInt8($0 / 300 % 256) })
        let banner = square.cropped(to: .aspectRatio(width: 16, height: 9))
        // 300 * 9 / 16 = 168.75, rounded to the nearest: 169, centred: 131 spare, 65 above.
        #expect((banner.width, banner.height) == (300, 169))
        #expect(banner.pixel(x: 0, y: 0) == [65])
        // The same arithmetic as a resize that cuts to the box's shape without enlarging.
        let geometry = ResizeGeometry(sourceWidth: 300, sourceHeight: 300, boxWidth: 1600, boxHeight: 900, mode: .cropToAspectRatio)
        #expect((geometry.width, geometry.height, geometry.cropX, geometry.cropY) == (300, 169, 0, 65))
        // Halves round away from zero: 301 / 2 = 150.5 -> 151.
        let odd = Image(width: 301, height: 301, pixelFormat: .gray8, pixels: [UInt8](repeating: 9, count: 301 * 301))
        let halfOdd = odd.cropped(to: .aspectRatio(width: 2, height: 1))
        #expect((halfOdd.width, halfOdd.height) == (301, 151))
        let tall = square.cropped(to: .aspectRatio(width: 1, height: 2), anchor: .gravity(.east))
        #expect((tall.width, tall.height) == (150, 300))
    }

    @Test func anAspectRatioTheImageAlreadyHasKeepsItWhole() {
        let wide = Image(width: 1600, height: 900, pixelFormat: .gray8, pixels: [UInt8](repeating: 3, count: 1600 * 900))
        #expect(wide.cropped(to: .aspectRatio(width: 16, height: 9)) == wide)
        #expect(wide.cropped(to: .aspectRatio(width: 32, height: 18), anchor: .smart(.entropy)) == wide)
    }

    @Test func everyFrameIsCutAtTheSamePlace() {
        let animation = ProcessingFixtures.animation(width: 6, height: 4, colours: [[1, 2, 3], [4, 5, 6], [7, 8, 9]])
        let crop = animation.cropped(to: .pixels(width: 2, height: 2), anchor: .gravity(.southEast))
        #expect((crop.width, crop.height, crop.frames.count, crop.loopCount) == (2, 2, 3, 2))
        #expect(crop.frames.map(\.pixels) == [[1, 2, 3], [4, 5, 6], [7, 8, 9]].map { Array(repeatElement($0 as [UInt8], count: 4).joined()) })
        #expect(crop.frames.map(\.duration) == animation.frames.map(\.duration))
    }
}
