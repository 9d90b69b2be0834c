import Imago
import ImagoTesting
import Testing

@Suite struct PixelFormatConversionTests {
    let rgba = Image(width: 2, height: 1, pixelFormat: .rgba8, pixels: [255, 0, 0, 128, 0, 0, 255, 255])

    @Test func rgbaToRGBDropsAlpha() {
        #expect(rgba.converted(to: .rgb8).pixels == [255, 0, 0, 0, 0, 255])
    }

    @Test func colourToGrayUsesLuma() {
        // 601 luma, rounded: red 77, blue 29.
        #expect(rgba.converted(to: .gray8).pixels == [77, 29])
        #expect(rgba.converted(to: .grayAlpha8).pixels == [77, 128, 29, 255])
    }

    @Test func grayToColourRepeatsTheValueAndAddsOpaqueAlpha() {
        let gray = Image(width: 2, height: 1, pixelFormat: .gray8, pixels: [10, 200])
        #expect(gray.converted(to: .rgba8).pixels == [10, 10, 10, 255, 200, 200, 200, 255])
    }

    @Test func paddingIsRemovedEvenWithoutAFormatChange() {
        let padded = Image(width: 1, height: 2, pixelFormat: .gray8, bytesPerRow: 4, pixels: [1, 0, 0, 0, 2, 0, 0, 0])
        let packed = padded.converted(to: .gray8)
        #expect(packed.bytesPerRow == 1)
        #expect(packed.pixels == [1, 2])
    }

    @Test func sameFormatPackedIsUnchanged() {
        #expect(rgba.converted(to: .rgba8) == rgba)
    }

    @Test func everyFrameIsConvertedAndDurationsKept() {
        let frames = [ImageFrame(pixels: [1, 2, 3], duration: 0.04), ImageFrame(pixels: [4, 5, 6], duration: 0.06)]
        let image = Image(width: 1, height: 1, pixelFormat: .rgb8, frames: frames, loopCount: 3)
        let converted = image.converted(to: .rgba8)
        #expect(converted.frames.map(\.pixels) == [[1, 2, 3, 255], [4, 5, 6, 255]])
        #expect(converted.frames.map(\.duration) == [0.04, 0.06])
        #expect(converted.loopCount == 3)
    }
}
