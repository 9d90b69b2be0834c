import ImageFixtures
import Foundation
@_spi(Testing) import Imago
import ImagoTesting
import Testing

/// The processors of the canvas, sharpen, orientation, trim, crop and
/// composite operations: each does what its `Image` method does, their
/// identifiers tell every parameter apart, and a pipeline runs them.
@Suite(.timeLimit(.minutes(1))) struct ProcessorTests {
    /// A photo with some transparency, framed in opaque white (so a trim has a border).
    static let source = ProcessingFixtures.framed(ProcessingFixtures.photo(width: 40, height: 30, varyingAlpha: true), border: 6)
    static let mark = Image(width: 6, height: 4, pixelFormat: .rgba8, pixels: (0..<96).map { UInt8(($0 * 37) % 256) | 1 })

    struct Case: Sendable, CustomTestStringConvertible {
        let processor: any ImageProcessing
        let method: @Sendable (Image) -> Image
        var testDescription: String { processor.identifier }
    }

    static let cases: [Case] = [
        Case(processor: ImageProcessors.Extend(width: 70, height: 50, gravity: .southWest, background: .black)) {
            $0.extended(toWidth: 70, height: 50, gravity: .southWest, background: .black)
        },
        Case(processor: ImageProcessors.Pad(top: 1, right: 2, bottom: 3, left: 4, background: .white)) {
            $0.padded(top: 1, right: 2, bottom: 3, left: 4, background: .white)
        },
        Case(processor: ImageProcessors.Pad(5)) { $0.padded(top: 5, right: 5, bottom: 5, left: 5, background: .clear) },
        Case(processor: ImageProcessors.Flatten(background: ImageColor(red: 10, green: 20, blue: 30))) {
            $0.flattened(onto: ImageColor(red: 10, green: 20, blue: 30))
        },
        Case(processor: ImageProcessors.Flatten()) { $0.flattened(onto: .white) },
        Case(processor: ImageProcessors.Sharpen(sigma: 1.5, amount: 2, threshold: 3)) { $0.sharpened(sigma: 1.5, amount: 2, threshold: 3) },
        Case(processor: ImageProcessors.Sharpen(sigma: 0.7)) { $0.sharpened(sigma: 0.7) },
        Case(processor: ImageProcessors.Pixelate(blockSize: 4)) { $0.pixelated(blockSize: 4) },
        Case(processor: ImageProcessors.Rotate(degrees: 90)) { $0.rotated(degrees: 90) },
        Case(processor: ImageProcessors.Rotate(degrees: -90)) { $0.rotated(degrees: 270) },
        Case(processor: ImageProcessors.Flip(horizontally: true)) { $0.flipped(horizontally: true) },
        Case(processor: ImageProcessors.Flip(vertically: true)) { $0.flipped(vertically: true) },
        Case(processor: ImageProcessors.Flip(horizontally: true, vertically: true)) { $0.flipped(horizontally: true, vertically: true) },
        Case(processor: ImageProcessors.Trim()) { $0.trimmed() },
        Case(processor: ImageProcessors.Trim(.color(.white), threshold: 5, equalHorizontal: true)) {
            $0.trimmed(.color(.white), threshold: 5, equalHorizontal: true)
        },
        Case(processor: ImageProcessors.Crop(to: .aspectRatio(width: 16, height: 9), anchor: .smart(.entropy))) {
            $0.cropped(to: .aspectRatio(width: 16, height: 9), anchor: .smart(.entropy))
        },
        Case(processor: ImageProcessors.Crop(to: .pixels(width: 20, height: 10), anchor: .gravity(.southEast, offsetX: 2, offsetY: 3))) {
            $0.cropped(to: .pixels(width: 20, height: 10), anchor: .gravity(.southEast, offsetX: 2, offsetY: 3))
        },
        Case(processor: ImageProcessors.Crop(to: .fraction(width: 0.5, height: 0.25), anchor: .focusPoint(x: 0.2, y: 0.8))) {
            $0.cropped(to: .fraction(width: 0.5, height: 0.25), anchor: .focusPoint(x: 0.2, y: 0.8))
        },
        Case(processor: ImageProcessors.Composite(overlay: mark, at: .tiled(spacingX: 3, spacingY: 2), opacity: 0.6)) {
            $0.composited(with: mark, at: .tiled(spacingX: 3, spacingY: 2), opacity: 0.6)
        },
        Case(processor: ImageProcessors.Composite(overlay: mark, id: "mark", at: .gravity(.southEast, offsetX: 2, offsetY: 2), linearLight: true)) {
            $0.composited(with: mark, at: .gravity(.southEast, offsetX: 2, offsetY: 2), linearLight: true)
        },
        Case(processor: ImageProcessors.Composite(overlay: mark, at: .point(x: -2, y: 40))) { $0.composited(with: mark, at: .point(x: -2, y: 40)) },
        Case(processor: ImageProcessors.Blur(sigma: 2)) { $0.blurred(sigma: 2) },
    ]

    @Test(arguments: cases)
    func processingIsTheImageMethod(_ test: Case) throws {
        let expected = test.method(Self.source)
        #expect(expected != Self.source, "the operation changes the source")
        #expect(try test.processor.process(Self.source) == expected)
    }

    @Test(arguments: cases)
    func aPaddedRowStrideGivesThePackedResult(_ test: Case) throws {
        let source = Self.source, rowBytes = source.width * 4
        var rows: [UInt8] = []
        for row in 0..<source.height { rows += source.pixels[row * rowBytes..<(row + 1) * rowBytes] + [7, 7, 7, 7, 7, 7, 7, 7] }
        let padded = Image(width: source.width, height: source.height, pixelFormat: .rgba8, bytesPerRow: rowBytes + 8, pixels: rows)
        let (expected, result) = (test.method(source), try test.processor.process(padded))
        #expect((result.width, result.height, result.pixelFormat) == (expected.width, expected.height, expected.pixelFormat))
        #expect(result.converted(to: result.pixelFormat).pixels == expected.converted(to: expected.pixelFormat).pixels)
    }

    /// Processors that differ in one parameter or another.
    static let distinct: [any ImageProcessing] = [
        ImageProcessors.Extend(width: 10, height: 10), ImageProcessors.Extend(width: 11, height: 10),
        ImageProcessors.Extend(width: 10, height: 11), ImageProcessors.Extend(width: 10, height: 10, gravity: .north),
        ImageProcessors.Extend(width: 10, height: 10, background: .white), ImageProcessors.Extend(width: 10, height: 10, background: .black),
        ImageProcessors.Pad(top: 1, right: 2, bottom: 3, left: 4), ImageProcessors.Pad(top: 2, right: 1, bottom: 3, left: 4),
        ImageProcessors.Pad(top: 1, right: 2, bottom: 4, left: 3), ImageProcessors.Pad(1), ImageProcessors.Pad(1, background: .white),
        ImageProcessors.Flatten(), ImageProcessors.Flatten(background: .black),
        ImageProcessors.Flatten(background: ImageColor(red: 255, green: 255, blue: 254)),
        ImageProcessors.Sharpen(sigma: 1), ImageProcessors.Sharpen(sigma: 1.5), ImageProcessors.Sharpen(sigma: 1, amount: 2),
        ImageProcessors.Sharpen(sigma: 1, threshold: 3), ImageProcessors.Sharpen(sigma: 1, amount: 0.5, threshold: 3),
        ImageProcessors.Pixelate(blockSize: 2), ImageProcessors.Pixelate(blockSize: 3),
        ImageProcessors.Rotate(degrees: 90), ImageProcessors.Rotate(degrees: 180), ImageProcessors.Rotate(degrees: 270), ImageProcessors.Rotate(degrees: 0),
        ImageProcessors.Flip(horizontally: true), ImageProcessors.Flip(vertically: true),
        ImageProcessors.Flip(horizontally: true, vertically: true), ImageProcessors.Flip(),
        ImageProcessors.Trim(), ImageProcessors.Trim(threshold: 11), ImageProcessors.Trim(.transparency),
        ImageProcessors.Trim(.color(.white)), ImageProcessors.Trim(.color(.black)),
        ImageProcessors.Trim(equalHorizontal: true), ImageProcessors.Trim(equalVertical: true),
        ImageProcessors.Crop(to: .pixels(width: 10, height: 20)), ImageProcessors.Crop(to: .pixels(width: 20, height: 10)),
        ImageProcessors.Crop(to: .fraction(width: 0.5, height: 0.5)), ImageProcessors.Crop(to: .fraction(width: 0.5, height: 0.25)),
        ImageProcessors.Crop(to: .aspectRatio(width: 16, height: 9)), ImageProcessors.Crop(to: .aspectRatio(width: 9, height: 16)),
        ImageProcessors.Crop(to: .pixels(width: 10, height: 20), anchor: .gravity(.north)),
        ImageProcessors.Crop(to: .pixels(width: 10, height: 20), anchor: .gravity(.center, offsetX: 1, offsetY: 0)),
        ImageProcessors.Crop(to: .pixels(width: 10, height: 20), anchor: .gravity(.center, offsetX: 0, offsetY: 1)),
        ImageProcessors.Crop(to: .pixels(width: 10, height: 20), anchor: .gravity(.center, offsetX: 12, offsetY: 3)),
        ImageProcessors.Crop(to: .pixels(width: 10, height: 20), anchor: .gravity(.center, offsetX: 1, offsetY: 23)),
        ImageProcessors.Crop(to: .pixels(width: 10, height: 20), anchor: .focusPoint(x: 0.5, y: 0.5)),
        ImageProcessors.Crop(to: .pixels(width: 10, height: 20), anchor: .focusPoint(x: 0.25, y: 0.5)),
        ImageProcessors.Crop(to: .pixels(width: 10, height: 20), anchor: .smart(.entropy)),
        ImageProcessors.Crop(to: .pixels(width: 10, height: 20), anchor: .smart(.attention)),
        ImageProcessors.Composite(overlay: mark), ImageProcessors.Composite(overlay: mark, at: .gravity(.north)),
        ImageProcessors.Composite(overlay: mark, at: .gravity(.center, offsetX: 1, offsetY: 2)),
        ImageProcessors.Composite(overlay: mark, at: .point(x: 1, y: 2)), ImageProcessors.Composite(overlay: mark, at: .tiled(spacingX: 1, spacingY: 2)),
        ImageProcessors.Composite(overlay: mark, at: .tiled()), ImageProcessors.Composite(overlay: mark, opacity: 0.5),
        ImageProcessors.Composite(overlay: mark, linearLight: true), ImageProcessors.Composite(overlay: TestImages.solid(width: 6, height: 4)),
        ImageProcessors.Blur(sigma: 1.4), ImageProcessors.Blur(sigma: 2.5), ImageProcessors.Blur(sigma: 0),
        ImageProcessors.Resize(width: 10, height: 10), ImageProcessors.RoundedCorners(radius: 1),
    ]

    @Test func identifiersDifferWhenAnyParameterDoes() {
        let identifiers = Self.distinct.map(\.identifier)
        let repeated = Dictionary(grouping: identifiers, by: { $0 }).filter { $0.value.count > 1 }.keys.sorted()
        #expect(repeated.isEmpty, "shared identifiers: \(repeated)")
        #expect(identifiers.allSatisfy { !$0.isEmpty })
    }

    @Test func equivalentParametersShareAnIdentifier() {
        #expect(ImageProcessors.Pad(2).identifier == ImageProcessors.Pad(top: 2, right: 2, bottom: 2, left: 2).identifier)
        #expect(ImageProcessors.Rotate(degrees: -90).identifier == ImageProcessors.Rotate(degrees: 270).identifier)
        #expect(ImageProcessors.Rotate(degrees: 450).identifier == ImageProcessors.Rotate(degrees: 90).identifier)
        #expect(ImageProcessors.Blur(sigma: 2.5).identifier == ImageProcessors.Blur(radius: 2).identifier)
    }

    @Test func aCompositeIsNamedByItsOverlaysPixelsOrItsID() {
        let copy = Image(width: 6, height: 4, pixelFormat: .rgba8, pixels: Self.mark.pixels)
        #expect(ImageProcessors.Composite(overlay: Self.mark).identifier == ImageProcessors.Composite(overlay: copy).identifier)
        #expect(ImageProcessors.Composite(overlay: Self.mark) == ImageProcessors.Composite(overlay: copy))
        // The same pixels with padding at the end of each row.
        var paddedRows: [UInt8] = []
        for row in 0..<4 { paddedRows += Self.mark.pixels[row * 24..<(row + 1) * 24] + [9, 9, 9, 9] }
        let padded = Image(width: 6, height: 4, pixelFormat: .rgba8, bytesPerRow: 28, pixels: paddedRows)
        #expect(ImageProcessors.Composite(overlay: padded).identifier == ImageProcessors.Composite(overlay: Self.mark).identifier)
        var changed = Self.mark.pixels
        changed[50] ^= 1
        let other = Image(width: 6, height: 4, pixelFormat: .rgba8, pixels: changed)
        #expect(ImageProcessors.Composite(overlay: other).identifier != ImageProcessors.Composite(overlay: Self.mark).identifier)
        // The same bytes as another shape or format.
        let reshaped = Image(width: 4, height: 6, pixelFormat: .rgba8, pixels: Self.mark.pixels)
        let regrayed = Image(width: 12, height: 4, pixelFormat: .grayAlpha8, pixels: Self.mark.pixels)
        #expect(ImageProcessors.Composite(overlay: reshaped).identifier != ImageProcessors.Composite(overlay: Self.mark).identifier)
        #expect(ImageProcessors.Composite(overlay: regrayed).identifier != ImageProcessors.Composite(overlay: Self.mark).identifier)
        // An explicit id is used as given, whatever the pixels.
        let named = ImageProcessors.Composite(overlay: Self.mark, id: "logo-v2", at: .gravity(.southEast, offsetX: 4, offsetY: 5), opacity: 0.5)
        #expect(named.overlayID == "logo-v2")
        #expect(named.identifier.hasPrefix("composite(logo-v2,"), "\(named.identifier)")
        #expect(named.identifier == ImageProcessors.Composite(overlay: other, id: "logo-v2", at: .gravity(.southEast, offsetX: 4, offsetY: 5),
                                                              opacity: 0.5).identifier)
        #expect(named.identifier != ImageProcessors.Composite(overlay: Self.mark, id: "logo-v3", at: .gravity(.southEast, offsetX: 4, offsetY: 5),
                                                              opacity: 0.5).identifier)
    }

    /// `overlay` is a `var`: a processor given another overlay draws other
    /// pixels, so (named by a digest) it must not keep the old name, or two
    /// different results would share a cache key.
    @Test func aCompositeGivenAnotherOverlayIsNamedByIt() throws {
        var other = Self.mark.pixels
        other[0] ^= 0xFF
        let replacement = Image(width: 6, height: 4, pixelFormat: .rgba8, pixels: other)
        var processor = ImageProcessors.Composite(overlay: Self.mark)
        let before = processor.identifier
        processor.overlay = replacement
        #expect(try processor.process(Self.source) == Self.source.composited(with: replacement))
        #expect(processor.identifier != before, "the identifier still names the old overlay")
        #expect(processor.identifier == ImageProcessors.Composite(overlay: replacement).identifier)
    }

    @Test func aPipelineSharesTheDecodeAndTheCommonProcessor() async throws {
        let loader = MockDataLoader()
        let decoder = MockImageDecoder(returning: Self.source)
        let url = URL(string: "https://img.example/framed.png")!
        loader.stub(url, MockResponse.image(TestImages.pngSignature).held())
        let pipeline = ImagePipeline(configuration: .init(dataLoader: loader, imageCache: ImageCache(configuration: .init(costLimit: 1 << 22)),
                                                          decoder: decoder))
        let trim = ImageProcessors.Trim(.color(.white))
        let (sharpen, pixelate) = (ImageProcessors.Sharpen(sigma: 1, amount: 2), ImageProcessors.Pixelate(blockSize: 5))
        let sharpened = pipeline.imageTask(for: ImageRequest(url: url, processors: [trim, sharpen]))
        let pixelated = pipeline.imageTask(for: ImageRequest(url: url, processors: [trim, pixelate]))
        let download = await loader.waitForTask(for: url)
        // The trim, the sharpen and the pixelate: three runs, the trim shared.
        try await eventually { pipeline.statistics.processing == 3 }
        download.complete()
        let (first, second) = try await (sharpened.response.image, pixelated.response.image)
        #expect(decoder.calls.count == 1)
        #expect(pipeline.statistics.decodes == 1 && pipeline.statistics.processing == 3)
        let trimmed = Self.source.trimmed(.color(.white))
        #expect((trimmed.width, trimmed.height) == (40, 30))
        #expect(first == trimmed.sharpened(sigma: 1, amount: 2))
        #expect(second == trimmed.pixelated(blockSize: 5))
        #expect(first != second)
    }
}
