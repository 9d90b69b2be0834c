import ImageFixtures
import Imago
import ImagoTesting
import Testing

/// `trimmed`: imgproxy's trim fixture and thresholds (ported from the
/// server's tests, without its URLs), transparency, a given colour, equal
/// cuts, and animations.
@Suite struct TrimTests {
    struct Case: Sendable, CustomTestStringConvertible {
        /// The server's option it ports.
        let option: String
        var reference: TrimReference = .topLeftPixel
        let threshold: Double
        var equalHorizontal = false
        var equalVertical = false
        let size: (Int, Int)
        var testDescription: String { option }
    }

    static let cases: [Case] = [
        Case(option: "t:5", threshold: 5, size: (320, 220)),
        Case(option: "t:100", threshold: 100, size: (290, 190)),
        Case(option: "t:150", threshold: 150, size: (260, 160)),
        Case(option: "t:200", threshold: 200, size: (230, 130)),
        Case(option: "t:220", threshold: 220, size: (200, 100)),
        Case(option: "t:0:ff0000", reference: .color(ImageColor(red: 255, green: 0, blue: 0)), threshold: 0, size: (350, 250)),
        Case(option: "t:5::1", threshold: 5, equalHorizontal: true, size: (330, 220)),
        Case(option: "t:5:::1", threshold: 5, equalVertical: true, size: (320, 230)),
        Case(option: "t:5::1:1", threshold: 5, equalHorizontal: true, equalVertical: true, size: (330, 230)),
        Case(option: "trim:5:fff", reference: .color(.white), threshold: 5, size: (320, 220)),
        Case(option: "t:250", threshold: 250, size: (350, 250)),
    ]

    @Test(arguments: cases)
    func theThresholdFindsEachBorder(_ trim: Case) throws {
        let image = ProcessingFixtures.rings.trimmed(trim.reference, threshold: trim.threshold,
                                       equalHorizontal: trim.equalHorizontal, equalVertical: trim.equalVertical)
        #expect("\(image.width)x\(image.height)" == "\(trim.size.0)x\(trim.size.1)")
        #expect(image.pixelFormat == .rgb8)
        #expect(try ImageProcessors.Trim(trim.reference, threshold: trim.threshold, equalHorizontal: trim.equalHorizontal,
                                         equalVertical: trim.equalVertical).process(ProcessingFixtures.rings) == image)
    }

    @Test func theCutStartsAtTheFirstRingItKeeps() {
        let image = ProcessingFixtures.rings.trimmed(threshold: 5)
        // The first ring spans 10..<330 and 10..<230.
        #expect(image == ProcessingFixtures.rings.cropped(x: 10, y: 10, width: 320, height: 220))
        #expect(image.pixel(x: 0, y: 0) == [205, 205, 205])
        #expect(ProcessingFixtures.rings.trimmed(threshold: 250) == ProcessingFixtures.rings)
    }

    /// 20x10, transparent (with stray colours) except an 8x6 opaque blue block at (6, 2).
    static let blueBlock: Image = {
        var pixels: [UInt8] = []
        for index in 0..<200 { pixels += [UInt8(index), UInt8(index * 3 % 256), 77, 0] }
        for y in 2..<8 { for x in 6..<14 { pixels.replaceSubrange((y * 20 + x) * 4..<(y * 20 + x) * 4 + 4, with: [0, 0, 255, 255]) } }
        return Image(width: 20, height: 10, pixelFormat: .rgba8, pixels: pixels)
    }()

    @Test func transparencyTrimsATransparentBorderWhateverItsColour() {
        let trimmed = Self.blueBlock.trimmed(.transparency)
        #expect((trimmed.width, trimmed.height, trimmed.pixelFormat) == (8, 6, .rgba8))
        #expect(trimmed == Self.blueBlock.cropped(x: 6, y: 2, width: 8, height: 6))
        #expect(trimmed.pixel(x: 0, y: 0) == [0, 0, 255, 255])
        // Transparent pixels count as magenta against a colour.
        #expect(Self.blueBlock.trimmed(.color(ImageColor(red: 255, green: 0, blue: 255))) == trimmed)
        #expect(Self.blueBlock.trimmed(.color(.white)) == Self.blueBlock, "nothing is white")
    }

    @Test func transparencyOnAnImageWithoutAlphaReturnsItWhole() {
        #expect(ProcessingFixtures.rings.trimmed(.transparency) == ProcessingFixtures.rings)
        let gray = Image(width: 12, height: 12, pixelFormat: .gray8, pixels: (0..<144).map { $0 / 12 > 3 && $0 / 12 < 8 ? 0 : 255 })
        #expect(gray.trimmed(.transparency) == gray)
    }

    @Test func transparencyOnGrayWithAlpha() {
        // 12x12, transparent except rows 4..<9 (opaque black).
        let image = Image(width: 12, height: 12, pixelFormat: .grayAlpha8,
                          pixels: (0..<144).flatMap { (4..<9).contains($0 / 12) ? [0, 255] : [200, 0] as [UInt8] })
        let trimmed = image.trimmed(.transparency)
        #expect((trimmed.width, trimmed.height, trimmed.pixelFormat) == (12, 5, .grayAlpha8))
    }

    /// 30x20 `border`, with a 16x12 block of `block` at (4, 3): cut 4 from the
    /// left, 10 from the right, 3 from the top and 5 from the bottom.
    static func offCentre(border: [UInt8] = [255, 255, 255], block: [UInt8] = [0, 0, 0]) -> Image {
        var pixels: [UInt8] = []
        for y in 0..<20 { for x in 0..<30 { pixels += (4..<20).contains(x) && (3..<15).contains(y) ? block : border } }
        return Image(width: 30, height: 20, pixelFormat: .rgb8, pixels: pixels)
    }

    @Test func aGivenColourIsTheBorder() {
        let blue = Self.offCentre(border: [0, 0, 200], block: [250, 250, 0])
        let trimmed = blue.trimmed(.color(ImageColor(red: 0, green: 0, blue: 200, alpha: 0)), threshold: 10)
        #expect(trimmed == blue.cropped(x: 4, y: 3, width: 16, height: 12))
        // A colour within the threshold of the border's counts as it; one beyond it does not.
        #expect(blue.trimmed(.color(ImageColor(red: 8, green: 0, blue: 192)), threshold: 10) == trimmed)
        #expect(blue.trimmed(.color(ImageColor(red: 0, green: 0, blue: 170)), threshold: 10) == blue)
        // The top-left pixel is the border too.
        #expect(blue.trimmed() == trimmed)
    }

    @Test func anImageThatIsAllBorderIsReturnedWhole() {
        let solid = TestImages.solid(width: 9, height: 7)
        #expect(solid.trimmed() == solid)
        #expect(solid.trimmed(.color(ImageColor(red: 200, green: 80, blue: 40))) == solid)
        let transparent = TestImages.solid(width: 9, height: 7, alpha: 0)
        #expect(transparent.trimmed(.transparency) == transparent)
    }

    @Test func equalCutsTakeTheSmallerSide() {
        let image = Self.offCentre()
        let plain = image.trimmed(.color(.white))
        #expect((plain.width, plain.height) == (16, 12))
        let across = image.trimmed(.color(.white), equalHorizontal: true)
        // min(4, 10) from each side across; 3 and 5 down.
        #expect(across == image.cropped(x: 4, y: 3, width: 22, height: 12))
        #expect(across.pixel(x: 21, y: 0) == [255, 255, 255])
        let down = image.trimmed(.color(.white), equalVertical: true)
        #expect(down == image.cropped(x: 4, y: 3, width: 16, height: 14))
        #expect(down.pixel(x: 0, y: 13) == [255, 255, 255])
        let both = image.trimmed(.color(.white), equalHorizontal: true, equalVertical: true)
        #expect(both == image.cropped(x: 4, y: 3, width: 22, height: 14))
    }

    @Test func everyFrameIsCutByTheFirstFramesBorder() {
        let first = Self.offCentre()
        // The later frames have other content: a trim of their own would differ.
        let second = Self.offCentre(border: [255, 255, 255], block: [255, 255, 255])
        let third = ProcessingFixtures.numbered(width: 30, height: 20)
        let animation = Image(width: 30, height: 20, pixelFormat: .rgb8,
                              frames: [first, second, third].enumerated().map { ImageFrame(pixels: $1.pixels, duration: Double($0 + 1)) },
                              loopCount: 5)
        let trimmed = animation.trimmed(.color(.white))
        #expect((trimmed.width, trimmed.height, trimmed.frames.count) == (16, 12, 3))
        #expect(trimmed.frames.map(\.duration) == [1, 2, 3])
        #expect(trimmed.loopCount == 5)
        for (k, frame) in [first, second, third].enumerated() {
            #expect(trimmed.frames[k].pixels == frame.cropped(x: 4, y: 3, width: 16, height: 12).pixels, "frame \(k)")
        }
    }
}
