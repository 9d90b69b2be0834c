import Foundation
import Imago
import ImagoTesting
import Testing

/// ImageComparison's measures on pairs whose differences are known, its
/// verdicts, and what a failure says and leaves behind.
@Suite struct ImageComparisonTests {
    /// A measure as messages print it: one decimal.
    static func formatted(_ value: Double) -> String { String(format: "%.1f", value) }

    /// `image` with `change` applied to the pixel values of the rectangle (all of it by default).
    static func edited(_ image: Image, x: Range<Int>? = nil, y: Range<Int>? = nil, _ change: (inout [UInt8]) -> Void) -> Image {
        let format = image.pixelFormat, step = format.bytesPerPixel
        var pixels = image.pixels
        for row in y ?? 0..<image.height {
            for column in x ?? 0..<image.width {
                let index = (row * image.width + column) * step
                var pixel = Array(pixels[index..<(index + step)])
                change(&pixel)
                pixels.replaceSubrange(index..<(index + step), with: pixel)
            }
        }
        return Image(width: image.width, height: image.height, pixelFormat: format, pixels: pixels)
    }

    @Test func identicalImagesMatchExactly() throws {
        let photo = TestImages.photo(width: 64, height: 48)
        let comparison = ImageComparison(photo, photo)
        #expect(comparison.maximumDifference == 0)
        #expect(comparison.psnr == .infinity)
        #expect(comparison.ssim == 1)
        #expect(comparison.differingPixelCount == 0)
        #expect(comparison.differingRegion == nil)
        #expect(comparison.matches(.exact))
        try comparison.require(.exact)
    }

    @Test func aUniformShiftIsMeasuredAsItIs() {
        let photo = TestImages.photo(width: 64, height: 48)
        let shifted = Self.edited(photo) { $0[0] = $0[0] < 253 ? $0[0] + 2 : $0[0] - 2 }
        let comparison = ImageComparison(shifted, photo)
        #expect(comparison.maximumDifference == 2)
        #expect(comparison.matches(.within(levels: 2)))
        #expect(!comparison.matches(.within(levels: 1)))
        #expect(!comparison.matches(.exact))
        // Every red value moved by 2 (down for the few near white): one
        // channel in three, so the mean square error is 4/3.
        #expect(abs(comparison.psnr - 10 * log10(255 * 255 / (4.0 / 3))) < 1e-9)
        #expect(comparison.differingPixelCount == 64 * 48)
    }

    @Test func theDifferingRegionBoundsTheChangedPixels() {
        let photo = TestImages.photo(width: 64, height: 48)
        let patched = Self.edited(photo, x: 10..<15, y: 20..<23) { $0 = [0, 0, 0] }
        let comparison = ImageComparison(patched, photo)
        #expect(comparison.differingRegion == ImageComparison.PixelRegion(x: 10, y: 20, width: 5, height: 3))
        #expect(comparison.differingPixelCount == 15)
        #expect(comparison.differingPixels(above: 255).count == 0)
        #expect(!comparison.matches(.visuallyIdentical))
    }

    @Test func imagesOfDifferentSizesFailEveryToleranceAndSaySo() throws {
        let comparison = ImageComparison(TestImages.photo(width: 64, height: 48), TestImages.photo(width: 64, height: 47))
        #expect(comparison.incomparability?.contains("64x48") == true)
        #expect(comparison.psnr.isNaN)
        for tolerance in [ImageTolerance.exact, .within(levels: 255), .psnr(atLeast: 0), .visuallyIdentical] {
            #expect(!comparison.matches(tolerance))
        }
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("imago-comparison-\(UUID())")
        defer { try? FileManager.default.removeItem(at: folder) }
        let mismatch = try #require(throws: ImageMismatch.self) { try comparison.require(.exact, artifactsFolder: folder) }
        #expect(mismatch.description.contains("the sizes differ: actual 64x48, expected 64x47"))
    }

    @Test func theColourOfTransparentPixelsDoesNotCount() {
        let cutout = TestImages.cutout(width: 64, height: 48)
        // Every fully transparent pixel repainted: nobody can see it.
        let repainted = Self.edited(cutout) { if $0[3] == 0 { $0[0] = 255; $0[1] = 0; $0[2] = 255 } }
        #expect(repainted != cutout)
        #expect(ImageComparison(repainted, cutout).matches(.exact))
        // A visible pixel repainted counts.
        let visible = Self.edited(cutout, x: 32..<33, y: 24..<25) { $0[0] = $0[0] ^ 0x80 }
        #expect(!ImageComparison(visible, cutout).matches(.exact))
    }

    @Test func translucencyIsComparedAsAFourthChannel() {
        let photo = TestImages.photo(width: 32, height: 24).converted(to: .rgba8)
        let faded = Self.edited(photo) { $0[3] = 128 }
        let comparison = ImageComparison(faded, photo)
        // Colour is premultiplied: red 200 at alpha 128 counts as 100.4, so
        // colour moves by up to half its value, and alpha by 127.
        #expect(comparison.maximumDifference == 127)
        #expect(!comparison.matches(.visuallyIdentical))
    }

    @Test func differentColourProfilesAreNotCompared() {
        let photo = TestImages.photo(width: 32, height: 24)
        let comparison = ImageComparison(TestImages.displayP3Photo(width: 32, height: 24), photo)
        #expect(comparison.incomparability?.contains("Display P3") == true)
        #expect(!comparison.matches(.within(levels: 255)))
    }

    @Test func animationsAreComparedFrameByFrame() {
        let animation = TestImages.animation(width: 48, height: 32, frames: 4)
        #expect(ImageComparison(animation, animation).matches(.exact))
        var frames = animation.frames
        frames[2] = ImageFrame(pixels: frames[1].pixels, duration: frames[2].duration)
        let repeated = Image(width: 48, height: 32, pixelFormat: animation.pixelFormat, frames: frames, loopCount: 0)
        let comparison = ImageComparison(repeated, animation)
        #expect(comparison.worstFrame == 2)
        #expect(!comparison.matches(.exact))
        #expect(ImageComparison(animation.firstFrame, animation).incomparability?.contains("frame counts differ") == true)
    }

    @Test func aFailureNamesTheMeasureTheBoundTheValueAndTheFolder() throws {
        let photo = TestImages.photo(width: 64, height: 48)
        let patched = Self.edited(photo, x: 20..<44, y: 16..<32) { $0 = [255, 255, 255] }
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("imago-comparison-\(UUID())")
        defer { try? FileManager.default.removeItem(at: folder) }
        let mismatch = try #require(throws: ImageMismatch.self) {
            try ImageComparison(patched, photo).require(.visuallyIdentical, name: "patch()", artifactsFolder: folder)
        }
        let message = mismatch.description
        #expect(message.hasPrefix("the images are not visually identical:"))
        #expect(message.contains("low-frequency difference "))
        #expect(message.contains(", at most 24 allowed"))
        // The place that differs most over an area is named, and it is in the patch.
        let peak = try #require(mismatch.comparison.lowFrequencyPeak)
        #expect((20..<44).contains(peak.x) && (16..<32).contains(peak.y))
        #expect(message.contains("low-frequency difference \(Self.formatted(mismatch.comparison.lowFrequencyDifference)) levels at (\(peak.x), \(peak.y))"))
        #expect(message.contains("24x16 at (20, 16)"))
        let artifacts = try #require(mismatch.artifacts)
        #expect(artifacts.lastPathComponent.hasPrefix("patch-"))
        #expect(message.contains(artifacts.path))
        for file in ["actual.png", "expected.png", "difference.png"] {
            let data = try Data(contentsOf: artifacts.appendingPathComponent(file))
            #expect(data.prefix(8) == TestImages.pngSignature)
        }
    }

    @Test func requirementsCombine() {
        let photo = TestImages.photo(width: 64, height: 48)
        let shifted = Self.edited(photo) { $0[1] = $0[1] < 251 ? $0[1] + 4 : $0[1] - 4 }
        let comparison = ImageComparison(shifted, photo)
        #expect(comparison.matches(.psnr(atLeast: 40)))
        #expect(comparison.matches(.ssim(atLeast: 0.99)))
        // A shift of 4 levels over the whole picture is a tint: not visually identical.
        #expect(!comparison.matches(.visuallyIdentical))
        let failed = comparison.failedRequirements(of: .psnr(atLeast: 40).and(.within(levels: 3)))
        #expect(failed.map(\.requirement) == [.maximumDifference(atMost: 3)])
        #expect(failed.first?.value == 4)
    }
}

/// The seeded fixtures: the same seed, the same pixels; another seed, another picture.
@Suite struct SeededFixtureTests {
    @Test func theSameSeedGivesTheSamePixels() {
        #expect(TestImages.photo(seed: 7) == TestImages.photo(seed: 7))
        #expect(TestImages.graphic(seed: 7) == TestImages.graphic(seed: 7))
        #expect(TestImages.animation(seed: 7) == TestImages.animation(seed: 7))
        #expect(!ImageComparison(TestImages.photo(seed: 7), TestImages.photo(seed: 8)).matches(.visuallyIdentical))
        #expect(!ImageComparison(TestImages.graphic(seed: 7), TestImages.graphic(seed: 8)).matches(.visuallyIdentical))
    }

    /// A checksum of the photo's pixels, so that a change to the generator
    /// (which would move every user's references) is a decision, not an accident.
    @Test func thePhotoIsStableAcrossReleases() {
        let pixels = TestImages.photo(width: 64, height: 48, seed: 1).pixels
        let sum = pixels.enumerated().reduce(0) { ($0 &* 31 &+ Int($1.element) &* ($1.offset % 7 + 1)) % 1_000_000_007 }
        #expect(sum == Self.photoChecksum)
    }

    static let photoChecksum = 34_681_158

    @Test func thePhotoHasDetailAtEveryScale() {
        let photo = TestImages.photo()
        // Neighbouring pixels differ a little (grain and texture), and
        // distant ones a lot (sky and ground).
        let luma = photo.converted(to: .gray8).pixels
        let neighbours = (0..<(luma.count - 1)).filter { luma[$0] != luma[$0 + 1] }.count
        #expect(Double(neighbours) / Double(luma.count) > 0.5)
        #expect(Int(luma.max()!) - Int(luma.min()!) > 120)
    }

    @Test func theCutoutIsTransparentAtItsCornersAndOpaqueInItsMiddle() {
        let cutout = TestImages.cutout()
        #expect(cutout.pixel(x: 0, y: 0)[3] == 0)
        #expect(cutout.pixel(x: cutout.width - 1, y: cutout.height - 1)[3] == 0)
        #expect(cutout.pixel(x: cutout.width / 2, y: cutout.height / 2)[3] == 255)
        let rim = Set(cutout.frames[0].pixels.enumerated().filter { $0.offset % 4 == 3 }.map(\.element))
        #expect(rim.contains { $0 > 0 && $0 < 255 })
    }

    @Test func everyFrameOfTheAnimationDiffers() {
        let animation = TestImages.animation(frames: 6, frameDuration: 0.05)
        #expect(animation.frames.count == 6)
        #expect(animation.loopCount == 0)
        #expect(animation.frames.allSatisfy { $0.duration == 0.05 })
        #expect(Set(animation.frames.map(\.pixels)).count == 6)
    }

    @Test func theDisplayP3PhotoCarriesANamedProfile() {
        let photo = TestImages.displayP3Photo()
        #expect(photo.colorProfile?.name == "Display P3")
        #expect(photo.colorProfile?.colorSpace == "RGB")
        #expect(photo.pixels == TestImages.photo().pixels)
    }
}
