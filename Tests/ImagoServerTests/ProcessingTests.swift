#if Server && os(Linux)
import ImageFixtures
import Foundation
import Imago
import ImagoServer
import ImagoTesting
import Testing

/// What the options do to pixels, and which format the server encodes to.
@Suite struct ProcessingTests {
    func options(_ type: ProcessingOptions.ResizingType, _ width: Int, _ height: Int, gravity: ProcessingOptions.Gravity = .center) -> ProcessingOptions {
        var options = ProcessingOptions()
        options.resizingType = type
        options.width = width
        options.height = height
        options.gravity = gravity
        return options
    }

    @Test func fitAndFillGiveThePlannedSizes() {
        let source = TestImages.gradient(width: 40, height: 30)
        let fit = options(.fit, 16, 16).apply(to: source)
        #expect((fit.width, fit.height) == (16, 12))
        let fill = options(.fill, 16, 16).apply(to: source)
        #expect((fill.width, fill.height) == (16, 16))
        let force = options(.force, 10, 25).apply(to: source)
        #expect((force.width, force.height) == (10, 25))
    }

    @Test func gravityChoosesWhichPartIsKept() {
        let source = TestImages.gradient(width: 60, height: 20)   // red grows left to right
        let west = options(.fill, 20, 20, gravity: .compass(.west)).apply(to: source)
        let east = options(.fill, 20, 20, gravity: .compass(.east)).apply(to: source)
        #expect(west.pixels[0] == source.pixels[0])
        #expect(east.pixels[0] == source.pixels[40 * 4])
        #expect(east.pixels[0] > west.pixels[0])
    }

    @Test func smartGravityKeepsTheDetailedPart() {
        let source = ProcessingFixtures.flatThenDetailed()
        let smart = options(.fill, 20, 20, gravity: .smart).apply(to: source)
        #expect((smart.width, smart.height) == (20, 20))
        #expect(Array(smart.pixels[0..<4]) == Array(source.pixels[40 * 4..<40 * 4 + 4]), "the crop starts where the detail does")
        let centre = options(.fill, 20, 20).apply(to: source)
        #expect(Array(centre.pixels[0..<4]) == [128, 128, 128, 255])
    }

    @Test func blurSoftensDetailAndKeepsTheSize() {
        let source = ProcessingFixtures.flatThenDetailed()
        var blurred = ProcessingOptions()
        blurred.blur = 2
        let result = blurred.apply(to: source)
        #expect((result.width, result.height) == (60, 20))
        #expect(result.pixels != source.pixels)
        // A flat area stays flat.
        #expect(Array(result.pixels[0..<4]) == [128, 128, 128, 255])
    }

    @Test func anAnimationGivesItsFirstFrame() {
        let first = TestImages.solid(width: 8, height: 8, red: 255, green: 0, blue: 0)
        let second = TestImages.solid(width: 8, height: 8, red: 0, green: 0, blue: 255)
        let animation = Image(width: 8, height: 8, pixelFormat: .rgba8, frames: [ImageFrame(pixels: first.pixels), ImageFrame(pixels: second.pixels)])
        let result = options(.fit, 4, 4).apply(to: animation)
        #expect(!result.isAnimated)
        #expect(Array(result.pixels[0..<4]) == [255, 0, 0, 255])
    }

    @Test(arguments: ProcessingOptions.OutputFormat.allCases)
    func eachFormatEncodesToItsOwnBytes(_ format: ProcessingOptions.OutputFormat) throws {
        var options = ProcessingOptions()
        options.quality = 70
        let bytes = try options.encoder(for: format).encode(TestImages.gradient(width: 16, height: 16))
        #expect(ImageFormat(sniffing: bytes)?.mimeType == format.mimeType)
    }
}
#endif
