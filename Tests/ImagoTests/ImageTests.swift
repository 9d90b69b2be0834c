import Imago
import ImagoTesting
import Testing

@Suite struct ImageTests {
    @Test func stillImageHasOneFrameAndCostsItsPixelBytes() {
        let image = TestImages.solid(width: 3, height: 2)
        #expect(image.frames.count == 1)
        #expect(!image.isAnimated)
        #expect(image.bytesPerRow == 12)
        #expect(image.cost == 24)
        #expect(image.frames[0].duration == nil)
    }

    @Test func animationCostCountsEveryFrame() {
        let frame = ImageFrame(pixels: [UInt8](repeating: 0, count: 4 * 4), duration: 0.1)
        let image = Image(width: 2, height: 2, frames: [frame, frame, frame], loopCount: 0)
        #expect(image.isAnimated)
        #expect(image.cost == 48)
        #expect(image.frames.map(\.duration) == [0.1, 0.1, 0.1])
        #expect(image.loopCount == 0)
    }

    @Test func pixelReadsTheRightBytesWithAPaddedStride() {
        // 2x2 gray image with 4 bytes per row (2 bytes of padding).
        let image = Image(width: 2, height: 2, pixelFormat: .gray8, bytesPerRow: 4, pixels: [1, 2, 0, 0, 3, 4, 0, 0])
        #expect(Array(image.pixel(x: 1, y: 0)) == [2])
        #expect(Array(image.pixel(x: 0, y: 1)) == [3])
        #expect(Array(image.pixel(x: 1, y: 1)) == [4])
    }

    @Test func gradientFixtureHasDistinctCorners() {
        let image = TestImages.gradient(width: 4, height: 3)
        #expect(Array(image.pixel(x: 0, y: 0)) == [0, 0, 128, 255])
        #expect(Array(image.pixel(x: 3, y: 2)) == [255, 255, 128, 255])
    }

    @Test(arguments: PixelFormat.allCases)
    func bytesPerPixelMatchesTheChannels(format: PixelFormat) {
        let expected: [PixelFormat: Int] = [.rgba8: 4, .rgb8: 3, .grayAlpha8: 2, .gray8: 1]
        #expect(format.bytesPerPixel == expected[format])
        #expect(format.hasAlpha == (format == .rgba8 || format == .grayAlpha8))
    }
}
