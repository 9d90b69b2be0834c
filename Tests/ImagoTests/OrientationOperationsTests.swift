import Imago
import ImagoTesting
import Testing

/// `rotated(degrees:)` and `flipped(horizontally:vertically:)`: where each
/// pixel goes, sizes, and the identities between turns and mirrors.
@Suite struct OrientationOperationsTests {
    /// 4x3, every pixel different.
    let image = TestImages.gradient(width: 4, height: 3)

    @Test func fourQuarterTurnsAreTheIdentity() {
        let once = image.rotated(degrees: 90)
        #expect(once != image)
        #expect(once.rotated(degrees: 90).rotated(degrees: 90).rotated(degrees: 90) == image)
        #expect(image.rotated(degrees: 360) == image)
        #expect(image.rotated(degrees: -720) == image)
        #expect(image.rotated(degrees: 0) == image)
    }

    @Test func aQuarterTurnClockwiseMovesTheTopLeftToTheTopRight() {
        let turned = image.rotated(degrees: 90)
        #expect((turned.width, turned.height) == (3, 4))
        #expect(turned.pixel(x: 2, y: 0) == image.pixel(x: 0, y: 0))
        #expect(turned.pixel(x: 0, y: 0) == image.pixel(x: 0, y: 2), "the bottom-left comes to the top-left")
        #expect(turned.pixel(x: 2, y: 3) == image.pixel(x: 3, y: 0), "the top-right goes to the bottom-right")
        // Every pixel: the turned (x, y) is the original (y, height - 1 - x).
        for y in 0..<4 {
            for x in 0..<3 { #expect(turned.pixel(x: x, y: y) == image.pixel(x: y, y: 2 - x)) }
        }
    }

    @Test func aQuarterTurnAnticlockwiseIsThreeClockwise() {
        let back = image.rotated(degrees: -90)
        #expect(back == image.rotated(degrees: 270))
        #expect(back == image.rotated(degrees: 630))
        #expect(back.pixel(x: 0, y: 0) == image.pixel(x: 3, y: 0), "the top-right comes to the top-left")
        #expect(back.rotated(degrees: 90) == image)
    }

    @Test func mirroringBothWaysIsAHalfTurn() {
        let half = image.rotated(degrees: 180)
        #expect(image.flipped(horizontally: true, vertically: true) == half)
        #expect(image.flipped(horizontally: true).flipped(vertically: true) == half)
        #expect(half.pixel(x: 0, y: 0) == image.pixel(x: 3, y: 2))
        #expect(image.rotated(degrees: -180) == half)
    }

    @Test func mirroringTwiceIsTheIdentity() {
        let mirrored = image.flipped(horizontally: true)
        #expect(mirrored != image)
        #expect(mirrored.pixel(x: 0, y: 0) == image.pixel(x: 3, y: 0))
        #expect(mirrored.pixel(x: 3, y: 2) == image.pixel(x: 0, y: 2))
        #expect(mirrored.flipped(horizontally: true) == image)
        let upsideDown = image.flipped(vertically: true)
        #expect(upsideDown.pixel(x: 1, y: 0) == image.pixel(x: 1, y: 2))
        #expect(upsideDown.flipped(vertically: true) == image)
        #expect(image.flipped() == image)
    }

    @Test(arguments: [(90, true), (-90, true), (270, true), (180, false), (-180, false), (450, true), (0, false)])
    func quarterTurnsSwapTheSides(degrees: Int, swaps: Bool) {
        let turned = image.rotated(degrees: degrees)
        #expect((turned.width, turned.height) == (swaps ? (3, 4) : (4, 3)))
        #expect(turned.bytesPerRow == turned.width * 4)
        let mirrored = image.flipped(horizontally: degrees > 0, vertically: swaps)
        #expect((mirrored.width, mirrored.height) == (4, 3), "a mirror never swaps")
    }

    @Test func everyFrameIsTurnedAndTheFormatKept() {
        var pixels: [[UInt8]] = [[], []]
        for index in 0..<6 { pixels[0] += [UInt8(index), 0]; pixels[1] += [UInt8(10 * index), 255] }
        let animation = Image(width: 3, height: 2, pixelFormat: .grayAlpha8,
                              frames: pixels.map { ImageFrame(pixels: $0, duration: 0.25) }, loopCount: 4)
        let turned = animation.rotated(degrees: 90)
        #expect(turned.pixelFormat == .grayAlpha8)
        #expect((turned.width, turned.height, turned.frames.count, turned.loopCount) == (2, 3, 2, 4))
        #expect(turned.frames.map(\.duration) == [0.25, 0.25])
        // Rows (0 1 2 / 3 4 5) turned clockwise: (3 0 / 4 1 / 5 2).
        #expect(turned.frames[0].pixels == [3, 0, 0, 0, 4, 0, 1, 0, 5, 0, 2, 0])
        #expect(turned.frames[1].pixels == [30, 255, 0, 255, 40, 255, 10, 255, 50, 255, 20, 255])
        let flipped = animation.flipped(horizontally: true)
        #expect(flipped.frames[1].pixels == [20, 255, 10, 255, 0, 255, 50, 255, 40, 255, 30, 255])
    }
}
