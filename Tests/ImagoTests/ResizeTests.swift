import Imago
import ImagoTesting
import Testing

@Suite struct ResizeTests {
    @Test func halvingAveragesEachTwoByTwoBlock() {
        let image = Image(width: 4, height: 2, pixelFormat: .gray8, pixels: [0, 100, 200, 200, 50, 150, 100, 100])
        let half = image.resized(width: 2, height: 1)
        #expect(half.pixels == [75, 150])
    }

    @Test func nonIntegerShrinkWeightsByCoveredArea() {
        // 3 -> 2: each output covers 1.5 inputs: (0*1 + 90*0.5)/1.5 = 30, (90*0.5 + 180*1)/1.5 = 150.
        let image = Image(width: 3, height: 1, pixelFormat: .gray8, pixels: [0, 90, 180])
        #expect(image.resized(width: 2, height: 1).pixels == [30, 150])
    }

    @Test func solidColourStaysExactAtAnySize() {
        let image = TestImages.solid(width: 97, height: 61, red: 10, green: 200, blue: 30, alpha: 255)
        for (width, height) in [(13, 7), (1, 1), (96, 60), (200, 150)] {
            #expect(image.resized(width: width, height: height) == TestImages.solid(width: width, height: height, red: 10, green: 200, blue: 30, alpha: 255))
        }
    }

    @Test func transparentPixelsDoNotBleedIntoColour() {
        // Opaque red next to fully transparent green: the average keeps pure red at half alpha.
        let image = Image(width: 2, height: 1, pixelFormat: .rgba8, pixels: [255, 0, 0, 255, 0, 255, 0, 0])
        #expect(image.resized(width: 1, height: 1).pixels == [255, 0, 0, 128])
    }

    @Test func enlargingInterpolates() {
        let image = Image(width: 2, height: 1, pixelFormat: .gray8, pixels: [0, 200])
        let wide = image.resized(width: 4, height: 1)
        #expect(wide.pixels == [0, 50, 150, 200])
    }

    @Test(arguments: [
        (ResizeMode.fit, 100, 50),
        (.fill, 200, 100),
        (.crop, 100, 100),
    ])
    func modesGiveTheExpectedSize(mode: ResizeMode, width: Int, height: Int) {
        let image = TestImages.gradient(width: 400, height: 200)
        let resized = image.resized(toFit: 100, height: 100, mode: mode)
        #expect(resized.width == width && resized.height == height)
    }

    @Test func cropKeepsTheCentre() {
        // Red grows left to right: the centre crop starts a quarter of the way in.
        let image = TestImages.gradient(width: 400, height: 200)
        let cropped = image.resized(toFit: 100, height: 100, mode: .crop)
        let left = Int(cropped.pixel(x: 0, y: 50)[0])
        #expect((60...68).contains(left), "\(left)")
    }

    @Test func smallImagesAreNotEnlargedUnlessAllowed() {
        let image = TestImages.gradient(width: 40, height: 20)
        #expect(image.resized(toFit: 100, height: 100) == image)
        let enlarged = image.resized(toFit: 100, height: 100, allowsUpscaling: true)
        #expect(enlarged.width == 100 && enlarged.height == 50)
    }

    @Test func maximumPixelSizeBoundsTheLongerSide() {
        let image = TestImages.gradient(width: 300, height: 600)
        let small = image.resized(maximumPixelSize: 256)
        #expect(small.width == 128 && small.height == 256)
        #expect(image.resized(maximumPixelSize: 1000) == image)
    }

    @Test func croppedClampsToTheBounds() {
        let image = TestImages.gradient(width: 10, height: 10)
        let corner = image.cropped(x: 8, y: -3, width: 5, height: 5)
        #expect(corner.width == 2 && corner.height == 2)
        #expect(Array(corner.pixel(x: 0, y: 0)) == Array(image.pixel(x: 8, y: 0)))
    }

    @Test func animationsResizeEveryFrame() {
        let frame = ImageFrame(pixels: [UInt8](repeating: 9, count: 4 * 4 * 4), duration: 0.07)
        let image = Image(width: 4, height: 4, frames: [frame, frame], loopCount: 0)
        let small = image.resized(width: 2, height: 2)
        #expect(small.frames.count == 2)
        #expect(small.frames.allSatisfy { $0.pixels == [UInt8](repeating: 9, count: 16) && $0.duration == 0.07 })
    }
}
