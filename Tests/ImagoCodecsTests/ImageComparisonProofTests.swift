import Foundation
import Imago
import ImagoCodecs
import ImagoTesting
import ChildProcesses
import Testing

/// ImageComparison with real codecs: the default tolerance proved on the
/// pairs it exists for (correct re-encodes pass; a wrong crop, a colour
/// shift, a missing watermark fail), and its measures checked against
/// scikit-image and SciPy.
@Suite struct ImageComparisonProofTests {
    static func reencoded(_ image: Image, _ encoder: any ImageEncoding) throws -> Image {
        try ImageDecoders.all.decode(encoder.encode(image))
    }

    /// A semi-transparent white label with dark bars, like a watermark's text.
    static let watermark: Image = {
        let (width, height) = (48, 16)
        var pixels = [UInt8](repeating: 0, count: width * height * 4)
        for y in 0..<height {
            for x in 0..<width {
                let bar = y >= 5 && y < 11 && x % 8 < 5
                let index = (y * width + x) * 4
                pixels.replaceSubrange(index..<(index + 4), with: bar ? [20, 20, 20, 140] : [255, 255, 255, 110])
            }
        }
        return Image(width: width, height: height, pixelFormat: .rgba8, pixels: pixels)
    }()

    /// What the default must let through: what codecs and resamplers change.
    static func correctPairs(seed: UInt64) throws -> [(String, Image, Image)] {
        let photo = TestImages.photo(width: 256, height: 192, seed: seed)
        let large = TestImages.photo(width: 768, height: 576, seed: seed)
        let thumbnail = large.resized(width: 256, height: 192, filter: .lanczos3)
        return [
            ("JPEG q75", try reencoded(photo, ImageEncoders.jpeg(quality: 75)), photo),
            ("JPEG q85", try reencoded(photo, ImageEncoders.jpeg(quality: 85)), photo),
            ("WebP q80", try reencoded(photo, ImageEncoders.webp(quality: 80)), photo),
            ("AVIF q60", try reencoded(photo, ImageEncoders.avif(quality: 60, speed: 9)), photo),
            ("area thumbnail, JPEG q80, against Lanczos",
             try reencoded(large.resized(width: 256, height: 192, filter: .area), ImageEncoders.jpeg(quality: 80)), thumbnail),
            ("Mitchell thumbnail in linear light, JPEG q80, against Lanczos",
             try reencoded(large.resized(width: 256, height: 192, filter: .mitchell, linearLight: true), ImageEncoders.jpeg(quality: 80)),
             thumbnail),
        ]
    }

    /// What the default must catch, each after a JPEG q85 round trip so
    /// that the codec's noise is there too.
    static func wrongPairs(seed: UInt64) throws -> [(String, Image, Image)] {
        let photo = TestImages.photo(width: 256, height: 192, seed: seed)
        let jpeg = { (image: Image) in try reencoded(image, ImageEncoders.jpeg(quality: 85)) }
        let tinted = Image(width: photo.width, height: photo.height, pixelFormat: .rgb8,
                           pixels: photo.pixels.enumerated().map { $0.offset % 3 == 0 ? UInt8(min(255, Int($0.element) + 12)) : $0.element })
        let cropped = photo.cropped(x: 5, y: 4, width: 246, height: 184).resized(width: 256, height: 192, filter: .lanczos3)
        // Every row moved three pixels left, the last column repeated: a crop window three pixels off.
        let shifted = Image(width: 256, height: 192, pixelFormat: .rgb8, pixels: (0..<192).flatMap { y in
            (0..<256).flatMap { x in photo.pixel(x: min(x + 3, 255), y: y) }
        })
        let marked = photo.composited(with: watermark, at: .gravity(.southEast, offsetX: 8, offsetY: 8))
        return [
            ("a crop 2% too tight", try jpeg(cropped), photo),
            ("a crop three pixels off", try jpeg(shifted), photo),
            ("red 12 levels too strong", try jpeg(tinted), photo),
            ("the watermark missing", try jpeg(photo), marked),
        ]
    }

    // The pictures are made, encoded and compared on a thread of their own
    // (offTheTestThreads): seconds of work in a debug build would otherwise
    // hold one of the two threads every suite's async work runs on.

    @Test(arguments: [1, 2, 3] as [UInt64])
    func visuallyIdenticalPassesCorrectReencodes(seed: UInt64) async throws {
        let comparisons = try await offTheTestThreads { try Self.correctPairs(seed: seed).map { ($0.0, ImageComparison($0.1, $0.2)) } }
        for (name, comparison) in comparisons {
            #expect(comparison.matches(.visuallyIdentical), "\(name): \(comparison)")
        }
    }

    @Test(arguments: [1, 2, 3] as [UInt64])
    func visuallyIdenticalFailsWhatAViewerWouldSee(seed: UInt64) async throws {
        let comparisons = try await offTheTestThreads { try Self.wrongPairs(seed: seed).map { ($0.0, ImageComparison($0.1, $0.2)) } }
        for (name, comparison) in comparisons {
            #expect(!comparison.matches(.visuallyIdentical), "\(name): \(comparison)")
        }
    }

    /// The measures, from pairs of several kinds (RGB, RGBA with
    /// translucency, gray, codec noise, shifts, resamplers, watermarks),
    /// match scikit-image's PSNR and SSIM and SciPy's Gaussian filter.
    @Test func theMeasuresMatchScikitImage() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("imago-metrics-\(UUID())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let (pairs, arguments) = try await offTheTestThreads {
            let pairs = try Self.referencePairs()
            var arguments: [String] = []
            for (index, pair) in pairs.enumerated() {
                for (side, image) in [("actual", pair.actual), ("expected", pair.expected)] {
                    let url = folder.appendingPathComponent("\(index)-\(side).png")
                    try ImageEncoders.png().encode(image).write(to: url)
                    arguments.append(url.path)
                }
            }
            return (pairs.map { ($0.name, ImageComparison($0.actual, $0.expected)) }, arguments)
        }
        #expect(pairs.count == 20)
        let lines = try await PythonReference.run(script: "scripts/image-metrics", arguments: arguments)
        #expect(lines.count == pairs.count)
        struct Measures: Decodable { let psnr: Double; let ssim: Double; let low_frequency: Double; let mean: Double }
        for ((name, ours), line) in zip(pairs, lines) {
            let reference = try JSONDecoder().decode(Measures.self, from: Data(line.utf8))
            #expect(abs(ours.psnr - reference.psnr) < 1e-6, "\(name): PSNR \(ours.psnr) vs \(reference.psnr)")
            #expect(abs(ours.ssim - reference.ssim) < 1e-7, "\(name): SSIM \(ours.ssim) vs \(reference.ssim)")
            #expect(abs(ours.lowFrequencyDifference - reference.low_frequency) < 1e-6,
                    "\(name): low frequency \(ours.lowFrequencyDifference) vs \(reference.low_frequency)")
            #expect(abs(ours.meanDifference - reference.mean) < 1e-9, "\(name): mean \(ours.meanDifference) vs \(reference.mean)")
        }
    }

    static func referencePairs() throws -> [(name: String, actual: Image, expected: Image)] {
        var pairs: [(name: String, actual: Image, expected: Image)] = []
        for seed in 1...4 as ClosedRange<UInt64> {
            let photo = TestImages.photo(width: 96, height: 72, seed: seed)
            pairs.append(("photo \(seed), JPEG q\(50 + 10 * seed)", try reencoded(photo, ImageEncoders.jpeg(quality: 50 + 10 * Int(seed))), photo))
        }
        for seed in 1...4 as ClosedRange<UInt64> {
            let graphic = TestImages.graphic(width: 80, height: 64, seed: seed)
            pairs.append(("graphic \(seed), WebP q70", try reencoded(graphic, ImageEncoders.webp(quality: 70)), graphic))
        }
        for seed in 1...3 as ClosedRange<UInt64> {
            let cutout = TestImages.cutout(width: 64, height: 48, seed: seed)
            pairs.append(("cutout \(seed), WebP q80", try reencoded(cutout, ImageEncoders.webp(quality: 80)).converted(to: .rgba8), cutout))
        }
        for seed in 1...3 as ClosedRange<UInt64> {
            let photo = TestImages.photo(width: 96, height: 72, seed: seed)
            pairs.append(("photo \(seed), watermarked", photo.composited(with: watermark, at: .gravity(.center)).converted(to: .rgb8), photo))
        }
        for seed in 1...2 as ClosedRange<UInt64> {
            let gray = TestImages.photo(width: 72, height: 60, seed: seed).converted(to: .gray8)
            pairs.append(("gray \(seed), JPEG q70", try reencoded(gray, ImageEncoders.jpeg(quality: 70)).converted(to: .gray8), gray))
        }
        let animation = TestImages.animation(width: 64, height: 48, frames: 3)
        pairs.append(("animation frames 0 and 1", still(animation, frame: 0), still(animation, frame: 1)))
        pairs.append(("animation frames 0 and 2", still(animation, frame: 0), still(animation, frame: 2)))
        for seed in 1...2 as ClosedRange<UInt64> {
            let large = TestImages.photo(width: 192, height: 144, seed: seed)
            pairs.append(("photo \(seed), area against Lanczos", large.resized(width: 96, height: 72, filter: .area),
                          large.resized(width: 96, height: 72, filter: .lanczos3)))
        }
        return pairs
    }

    static func still(_ image: Image, frame: Int) -> Image {
        Image(width: image.width, height: image.height, pixelFormat: image.pixelFormat, pixels: image.frames[frame].pixels)
    }

    /// A failure's difference image is a readable PNG the size of the images.
    @Test func theDifferenceImageIsAReadablePNG() throws {
        let photo = TestImages.photo(width: 120, height: 90)
        let marked = photo.composited(with: Self.watermark, at: .gravity(.center))
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("imago-comparison-\(UUID())")
        defer { try? FileManager.default.removeItem(at: folder) }
        let mismatch = try #require(throws: ImageMismatch.self) {
            try ImageComparison(photo, marked).require(artifactsFolder: folder)
        }
        let artifacts = try #require(mismatch.artifacts)
        let difference = try ImageDecoders.all.decode(Data(contentsOf: artifacts.appendingPathComponent("difference.png")))
        #expect(difference.width == 120 && difference.height == 90)
        // Red where the watermark is, gray elsewhere.
        #expect(difference.pixel(x: 60, y: 45)[0] == 255 && difference.pixel(x: 60, y: 45)[1] < 200)
        let corner = difference.pixel(x: 0, y: 0)
        #expect(corner[0] == corner[1] && corner[1] == corner[2])
        let actual = try ImageDecoders.all.decode(Data(contentsOf: artifacts.appendingPathComponent("actual.png")))
        #expect(ImageComparison(actual, photo).matches(.exact))
    }

    /// The Display P3 fixture's profile is one Little CMS reads: converted
    /// to sRGB its colours move (more saturated), and a neutral gray stays.
    @Test func theDisplayP3FixtureConvertsToSRGB() throws {
        let p3 = TestImages.displayP3Photo(width: 64, height: 48)
        let file = try ImageEncoders.png().encode(p3)
        let converted = try ImageDecoders.all.decode(file)
        #expect(converted.colorProfile == nil)
        let comparison = ImageComparison(converted.converted(to: .rgb8), TestImages.photo(width: 64, height: 48))
        #expect(comparison.maximumDifference > 5)
        let gray = Image(width: 1, height: 1, pixelFormat: .rgb8, pixels: [128, 128, 128])
        var taggedGray = gray
        taggedGray.colorProfile = p3.colorProfile
        let grayBack = try ImageDecoders.all.decode(ImageEncoders.png().encode(taggedGray)).converted(to: .rgb8)
        #expect(ImageComparison(grayBack, gray).matches(.within(levels: 1)))
    }
}

/// Runs a script of this repository with the Python of
/// `scripts/install-python-tools` (or `IMAGO_PYTHON`).
enum PythonReference {
    struct Failed: Error, CustomStringConvertible {
        let description: String
    }

    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../..").standardized

    /// The script's standard output, line by line.
    static func run(script: String, arguments: [String]) async throws -> [String] {
        let python = ProcessInfo.processInfo.environment["IMAGO_PYTHON"] ?? root.appendingPathComponent(".build/python/bin/python").path
        guard FileManager.default.isExecutableFile(atPath: python) else {
            throw Failed(description: "no \(python): scripts/test installs it with scripts/install-python-tools")
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: python)
        process.arguments = [root.appendingPathComponent(script).path] + arguments
        let output = FileManager.default.temporaryDirectory.appendingPathComponent("imago-python-\(UUID()).out")
        _ = FileManager.default.createFile(atPath: output.path, contents: nil)
        defer { try? FileManager.default.removeItem(at: output) }
        let handle = try FileHandle(forWritingTo: output)
        process.standardOutput = handle
        try await process.runToExit()
        try handle.close()
        guard process.terminationStatus == 0 else {
            throw Failed(description: "\(script) exited with \(process.terminationStatus)")
        }
        return try String(contentsOf: output, encoding: .utf8).split(separator: "\n").map(String.init)
    }
}
