import ChildProcesses
import Foundation
import Imago
import ImagoCodecs
import ImagoTesting
import Testing

/// SSIMULACRA 2 against the reference implementation, Cloudinary's `ssimulacra2` tool (version 2.1, the code
/// libjxl ships as tools/ssimulacra2), built from source and run on the pairs in `Resources/ssimulacra2`
/// (made by `make_pairs.py` there from Pillow's test images).
///
/// The reference scores are the tool's output on an x86-64 processor with AVX-512, where it uses fused
/// multiply-adds (as with AVX2, and on ARM). The port reproduces its arithmetic, so it gives the same doubles
/// there (to all 17 digits, on every pair). The tolerance, 0.001, leaves room only for a last-bit difference in
/// another platform's `pow` or `cbrtf`: the reference itself varies more than that between processors, by up
/// to 0.056 on these pairs when it runs its SSE4 code, which has no fused multiply-adds (70.0224 for the gray
/// pair).
@Suite struct SSIMULACRA2Tests {
    struct Pair: Sendable, CustomTestStringConvertible {
        let reference: String
        let distorted: String
        /// `ssimulacra2 reference.png distorted.png`.
        let score: Double

        var testDescription: String { "\(distorted) against \(reference)" }
    }

    static let tolerance = 0.001

    static let pairs = [
        // JPEG by Pillow (4:2:0) at quality 90, 50 and 20, of a 192x144 photograph.
        Pair(reference: "flower", distorted: "flower-q90", score: 83.58982686),
        Pair(reference: "flower", distorted: "flower-q50", score: 65.91936082),
        Pair(reference: "flower", distorted: "flower-q20", score: 47.39873239),
        // A 128x128 portrait blurred (Gaussian, radius 1.2), with noise (sigma 6), and warmer (red +14, blue -10).
        Pair(reference: "hopper", distorted: "hopper-blur", score: 24.81751226),
        Pair(reference: "hopper", distorted: "hopper-noise", score: 75.43449504),
        Pair(reference: "hopper", distorted: "hopper-warmer", score: 82.51858833),
        // A 160x120 window of a photograph, and the same window 3 pixels to the right.
        Pair(reference: "window", distorted: "window-shift3", score: -59.12291097),
        // A green rectangle pasted over the face.
        Pair(reference: "hopper", distorted: "hopper-rect", score: -39.60403159),
        // Gray: the portrait in gray, as JPEG at quality 40.
        Pair(reference: "hopper-gray", distorted: "hopper-gray-q40", score: 70.07828245),
        // Small sizes: 64x64 (five scales) with noise, and 13x9 (two scales, the second 7x5) as JPEG at quality 30.
        Pair(reference: "small", distorted: "small-noise", score: 40.73547102),
        Pair(reference: "tiny", distorted: "tiny-q30", score: 91.79697707),
        // RGBA with soft edges and a shadow: colour as JPEG at quality 60, alpha blurred (box, radius 1). The tool
        // blends both over a dark and a bright gray and reports the worse score.
        Pair(reference: "logo-rgba", distorted: "logo-rgba-q60", score: 54.49467448),
        // Gray with alpha (fading in from the top): the JPEG a little more opaque.
        Pair(reference: "hopper-gray-alpha", distorted: "hopper-gray-q40-alpha", score: 38.10917580),
        // Alpha in the distorted image only: the tool blends it over middle gray.
        Pair(reference: "small", distorted: "small-noise-fading", score: -15.84011611),
    ]

    static func image(_ name: String) throws -> Image {
        try ImageDecoders.all.decode(try Fixtures.data("ssimulacra2/\(name).png"))
    }

    static func score(_ reference: String, _ distorted: String) throws -> Double {
        ImageComparison(try image(distorted), try image(reference)).ssimulacra2
    }

    @Test(arguments: pairs)
    func scoreIsTheReferenceToolsScore(pair: Pair) async throws {
        // On a thread of its own: the two threads async tests share stay free.
        let score = try await offTheTestThreads { try Self.score(pair.reference, pair.distorted) }
        #expect(abs(score - pair.score) <= Self.tolerance, "\(score), the reference tool: \(pair.score)")
    }

    @Test(arguments: ["flower", "hopper-gray", "logo-rgba", "tiny"])
    func identicalImagesScore100(name: String) throws {
        let image = try Self.image(name)
        #expect(ImageComparison(image, image).ssimulacra2 == 100)
    }

    @Test func scoreFallsWithJPEGQuality() throws {
        let scores = try [90, 50, 20].map { try Self.score("flower", "flower-q\($0)") }
        #expect(scores[0] > scores[1] && scores[1] > scores[2], "\(scores)")
    }

    @Test func opaqueAlphaChangesNothing() throws {
        // An alpha channel in the reference means two blends, over 0.1 and 0.9 gray; opaque, both are the colour.
        let reference = try Self.image("hopper"), distorted = try Self.image("hopper-noise")
        #expect(reference.pixelFormat == .rgb8)
        let opaque = ImageComparison(distorted, reference).ssimulacra2
        let withAlpha = ImageComparison(distorted.converted(to: .rgba8), reference.converted(to: .rgba8)).ssimulacra2
        #expect(withAlpha == opaque)
    }

    @Test func rowPaddingIsSkipped() throws {
        let image = try Self.image("tiny-q30")
        let rowLength = image.width * image.pixelFormat.bytesPerPixel, padding = 5
        var padded: [UInt8] = []
        for row in 0..<image.height {
            padded += image.pixels[row * image.bytesPerRow..<row * image.bytesPerRow + rowLength]
            padded += [UInt8](repeating: 0xFF, count: padding)
        }
        let strided = Image(
            width: image.width, height: image.height, pixelFormat: image.pixelFormat,
            bytesPerRow: rowLength + padding, pixels: padded
        )
        let reference = try Self.image("tiny")
        #expect(
            ImageComparison(strided, reference).ssimulacra2 == ImageComparison(image, reference).ssimulacra2
        )
    }

    @Test(arguments: [(1, 1), (7, 7), (40, 7), (7, 40)])
    func imagesUnderEightPixelsHaveNoScore(width: Int, height: Int) {
        // No scale is measured (the reference's function scores 100, its tool refuses such images): no score,
        // so a tolerance on it fails rather than passing two different pictures.
        func filled(_ value: UInt8) -> Image {
            let pixels = [UInt8](repeating: value, count: width * height)
            return Image(width: width, height: height, pixelFormat: .gray8, pixels: pixels)
        }
        let black = filled(0), white = filled(255)
        let comparison = ImageComparison(white, black)
        #expect(comparison.ssimulacra2.isNaN)
        #expect(!comparison.matches(.ssimulacra2(atLeast: 0)))
    }
}
