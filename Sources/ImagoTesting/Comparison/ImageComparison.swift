import Foundation
import Imago

/// How two images differ: the largest channel difference, PSNR, SSIM, the
/// difference that survives a blur, the mean shift of each channel, and
/// which pixels differ, with the verdict for any ``ImageTolerance``.
///
/// ```swift
/// let comparison = ImageComparison(thumbnail, expected)
/// #expect(comparison.matches(.visuallyIdentical))      // a Bool, for #expect or XCTAssert
/// try comparison.require(.visuallyIdentical)           // throws ImageMismatch, which says why
/// ```
///
/// A failing ``require(_:name:artifactsFolder:)`` writes the actual, the
/// expected and a difference image to a folder its message names.
///
/// **What is compared.** Both images are read as the same channels: luma
/// for two gray images, red, green and blue otherwise, with alpha as a
/// fourth channel when either image has a pixel that is not opaque; then
/// colour is premultiplied by alpha, so the colour of a transparent pixel
/// never counts. Pixel values are compared as they are: two images with
/// different colour profiles fail every tolerance (convert both to sRGB
/// first). Animations are compared frame by frame, and each measure is the
/// worst frame's.
public struct ImageComparison: Sendable, CustomStringConvertible {
    /// The image under test.
    public let actual: Image
    /// The image it should match.
    public let expected: Image
    /// Why the images cannot be compared pixel by pixel (their sizes, frame
    /// counts or colour profiles differ), or `nil`. When set, every measure
    /// is `nan` and every tolerance fails.
    public let incomparability: String?
    /// The largest difference of one channel of one pixel, in levels.
    public let maximumDifference: Double
    /// The peak signal-to-noise ratio in decibels, over every channel
    /// (`infinity` for identical images), as scikit-image's
    /// `peak_signal_noise_ratio(..., data_range=255)`.
    public let psnr: Double
    /// The structural similarity, the mean over channels (1 for identical
    /// images), as scikit-image's `structural_similarity(...,
    /// data_range=255, gaussian_weights=True, sigma=1.5,
    /// use_sample_covariance=False, channel_axis=-1)`.
    public let ssim: Double
    /// The largest difference after a Gaussian blur of standard deviation 2
    /// pixels (signed differences, each channel), in levels: what differs
    /// over an area rather than in the fine grain.
    public let lowFrequencyDifference: Double
    /// Where ``lowFrequencyDifference`` peaks: the middle of what differs
    /// most over an area, or `nil` when nothing differs.
    public let lowFrequencyPeak: (x: Int, y: Int)?
    /// The largest average signed difference of a channel, in levels: a
    /// shift of colour or brightness over the whole image.
    public let meanDifference: Double
    /// The average absolute difference over every channel of every pixel, in levels.
    public let meanAbsoluteDifference: Double
    /// How many pixels differ in any channel.
    public let differingPixelCount: Int
    /// The smallest rectangle holding every differing pixel, or `nil` when none differs.
    public let differingRegion: PixelRegion?
    /// The frame the measures above come from when the worst differs by
    /// measure: the frame with the lowest PSNR.
    public let worstFrame: Int
    /// Per pixel of ``worstFrame``, its largest channel difference.
    let pixelDifferences: [Double]

    /// A rectangle of pixels.
    public struct PixelRegion: Sendable, Hashable, CustomStringConvertible {
        public let x: Int
        public let y: Int
        public let width: Int
        public let height: Int

        /// The rectangle `width` by `height` whose top-left pixel is `x`, `y`.
        public init(x: Int, y: Int, width: Int, height: Int) {
            (self.x, self.y, self.width, self.height) = (x, y, width, height)
        }

        public var description: String { "\(width)x\(height) at (\(x), \(y))" }
    }

    /// Compares `actual` with `expected`.
    public init(_ actual: Image, _ expected: Image) {
        self.actual = actual
        self.expected = expected
        if let reason = Self.incomparability(actual, expected) {
            incomparability = reason
            (maximumDifference, psnr, ssim, lowFrequencyDifference, meanDifference, meanAbsoluteDifference) = (.nan, .nan, .nan, .nan, .nan, .nan)
            differingPixelCount = max(actual.width * actual.height, expected.width * expected.height)
            differingRegion = nil
            lowFrequencyPeak = nil
            worstFrame = 0
            pixelDifferences = []
            return
        }
        incomparability = nil
        let frames = (0..<actual.frames.count).map { FrameMeasures(ComparedPlanes(actual, expected, frame: $0)) }
        let worst = frames.indices.min { frames[$0].psnr < frames[$1].psnr } ?? 0
        worstFrame = worst
        maximumDifference = frames.map(\.maximumDifference).max() ?? 0
        psnr = frames.map(\.psnr).min() ?? .infinity
        ssim = frames.map(\.ssim).min() ?? 1
        lowFrequencyDifference = frames.map(\.lowFrequencyDifference).max() ?? 0
        let peakFrame = frames.indices.max { frames[$0].lowFrequencyDifference < frames[$1].lowFrequencyDifference } ?? 0
        lowFrequencyPeak = lowFrequencyDifference > 0
            ? (frames[peakFrame].lowFrequencyPeak % actual.width, frames[peakFrame].lowFrequencyPeak / actual.width) : nil
        meanDifference = frames.map(\.meanDifference).max() ?? 0
        meanAbsoluteDifference = frames.map(\.meanAbsoluteDifference).max() ?? 0
        pixelDifferences = frames[worst].pixelDifferences
        (differingPixelCount, differingRegion) = Self.differingPixels(pixelDifferences, width: actual.width, above: 0)
    }

    /// Compares two encoded images, decoded with `decoder` (ImagoCodecs'
    /// `ImageDecoders.all`, for one).
    ///
    /// - Throws: the decoder's error for a file it cannot decode.
    public init(_ actual: Data, _ expected: Data, decoder: any ImageDecoding) throws {
        try self.init(decoder.decode(actual, options: ImageDecodingOptions()), decoder.decode(expected, options: ImageDecodingOptions()))
    }

    /// The SSIMULACRA 2 score of the actual image against the expected one
    /// (the lowest over frames), as Cloudinary's reference tool computes it
    /// (Imago's tests hold it to the tool's scores): 100 for identical
    /// images, about 90 when no difference can be seen, 70 for high
    /// quality, 50 medium, below 30 poor. Computed when asked (about 0.1 s
    /// for 256x256 pixels in a debug build). `nan` for images under 8
    /// pixels on a side, which the metric cannot measure.
    public var ssimulacra2: Double {
        guard incomparability == nil, actual.width >= 8, actual.height >= 8 else { return .nan }
        return (0..<actual.frames.count)
            .map { SSIMULACRA2.score(reference: expected.still(frame: $0), distorted: actual.still(frame: $0)) }
            .min() ?? .nan
    }

    /// How many pixels of ``worstFrame`` differ by more than `levels` in
    /// some channel, and the rectangle that holds them.
    public func differingPixels(above levels: Double) -> (count: Int, region: PixelRegion?) {
        guard incomparability == nil else { return (differingPixelCount, nil) }
        return Self.differingPixels(pixelDifferences, width: actual.width, above: levels)
    }

    /// Whether the images match within `tolerance`.
    public func matches(_ tolerance: ImageTolerance = .visuallyIdentical) -> Bool {
        failedRequirements(of: tolerance).isEmpty
    }

    /// The requirements of `tolerance` these images break, each with the
    /// value measured; empty when they match.
    public func failedRequirements(of tolerance: ImageTolerance) -> [(requirement: ImageTolerance.Requirement, value: Double)] {
        if incomparability != nil { return tolerance.requirements.map { ($0, .nan) } }
        return tolerance.requirements.compactMap { requirement in
            let value = measure(of: requirement)
            let holds: Bool = switch requirement {
            case .maximumDifference(let bound), .lowFrequencyDifference(let bound), .meanDifference(let bound): value <= bound
            case .psnr(let bound), .ssim(let bound), .ssimulacra2(let bound): value >= bound
            }
            return holds ? nil : (requirement, value)
        }
    }

    /// Throws ``ImageMismatch`` unless the images match within `tolerance`,
    /// after writing `actual.png`, `expected.png` and `difference.png` to a
    /// new folder the error names: under `artifactsFolder`, else under
    /// `IMAGO_COMPARISON_ARTIFACTS` from the environment, else under the
    /// temporary directory's `imago-image-comparisons`.
    ///
    /// - Parameter name: The comparison's name in the folder's (the
    ///   calling function's, by default).
    public func require(
        _ tolerance: ImageTolerance = .visuallyIdentical, name: String = #function, artifactsFolder: URL? = nil
    ) throws(ImageMismatch) {
        let failed = failedRequirements(of: tolerance)
        guard !failed.isEmpty else { return }
        let folder = ComparisonArtifacts.newFolder(named: name, under: artifactsFolder)
        var written: URL?
        do {
            try writeArtifacts(to: folder)
            written = folder
        } catch {
            written = nil
        }
        throw ImageMismatch(comparison: self, tolerance: tolerance, failed: failed, artifacts: written)
    }

    /// Writes `actual.png`, `expected.png` and `difference.png` (the
    /// expected image faded to gray, each differing pixel red, darker the
    /// more it differs) into `folder`, creating it.
    public func writeArtifacts(to folder: URL) throws {
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try StoredPNG.write(actual, to: folder.appendingPathComponent("actual.png"))
        try StoredPNG.write(expected, to: folder.appendingPathComponent("expected.png"))
        if incomparability == nil {
            try StoredPNG.write(differenceImage(), to: folder.appendingPathComponent("difference.png"))
        }
    }

    /// A summary of every measure.
    public var description: String {
        if let incomparability { return incomparability }
        let frame = actual.frames.count > 1 ? " (worst frame: \(worstFrame))" : ""
        let peak = lowFrequencyPeak.map { " at (\($0.x), \($0.y))" } ?? ""
        let region = differingRegion.map { " in \($0)" } ?? ""
        return "PSNR \(formatted(psnr, digits: 2)) dB, SSIM \(formatted(ssim)), "
            + "largest difference \(formatted(maximumDifference, digits: 1)) levels, "
            + "low-frequency difference \(formatted(lowFrequencyDifference, digits: 1))\(peak), "
            + "mean difference \(formatted(meanDifference, digits: 2)); "
            + "\(differingPixelCount) of \(actual.width * actual.height) pixels differ\(region)\(frame)"
    }

    /// The value `requirement` bounds.
    func measure(of requirement: ImageTolerance.Requirement) -> Double {
        switch requirement {
        case .maximumDifference: maximumDifference
        case .psnr: psnr
        case .ssim: ssim
        case .ssimulacra2: ssimulacra2
        case .lowFrequencyDifference: lowFrequencyDifference
        case .meanDifference: meanDifference
        }
    }

    private static func incomparability(_ actual: Image, _ expected: Image) -> String? {
        if actual.width != expected.width || actual.height != expected.height {
            return "the sizes differ: actual \(actual.width)x\(actual.height), expected \(expected.width)x\(expected.height)"
        }
        if actual.frames.count != expected.frames.count {
            return "the frame counts differ: actual \(actual.frames.count), expected \(expected.frames.count)"
        }
        if actual.colorProfile != expected.colorProfile {
            let name = { (image: Image) in image.colorProfile.map { $0.name ?? "an embedded profile" } ?? "sRGB" }
            return "the colour profiles differ: actual \(name(actual)), expected \(name(expected)); convert both to sRGB first"
        }
        return nil
    }

    private static func differingPixels(_ differences: [Double], width: Int, above levels: Double) -> (Int, PixelRegion?) {
        var count = 0
        var (minX, minY, maxX, maxY) = (Int.max, Int.max, -1, -1)
        for (index, difference) in differences.enumerated() where difference > levels {
            count += 1
            let (y, x) = index.quotientAndRemainder(dividingBy: width)
            minX = min(minX, x); maxX = max(maxX, x); minY = min(minY, y); maxY = max(maxY, y)
        }
        guard count > 0 else { return (0, nil) }
        return (count, PixelRegion(x: minX, y: minY, width: maxX - minX + 1, height: maxY - minY + 1))
    }

    /// The expected image faded to light gray, tinted red where ``worstFrame``
    /// differs: barely for the few levels a codec changes, full red from 48
    /// levels up.
    func differenceImage() -> Image {
        let gray = expected.still(frame: worstFrame).converted(to: .gray8).pixels
        var pixels = [UInt8](repeating: 255, count: actual.width * actual.height * 4)
        for index in pixelDifferences.indices {
            let faded = 160 + Double(gray[index]) * 3 / 8
            let redness = min(1, pixelDifferences[index] / 48)
            pixels[index * 4] = UInt8((faded + (255 - faded) * redness).rounded())
            pixels[index * 4 + 1] = UInt8((faded * (1 - redness)).rounded())
            pixels[index * 4 + 2] = UInt8((faded * (1 - redness)).rounded())
        }
        return Image(width: actual.width, height: actual.height, pixelFormat: .rgba8, pixels: pixels)
    }
}

extension Image {
    /// Frame `index` as a still image.
    func still(frame index: Int) -> Image {
        Image(width: width, height: height, pixelFormat: pixelFormat, bytesPerRow: bytesPerRow, pixels: frames[index].pixels)
    }
}

/// The measures of one frame.
private struct FrameMeasures {
    var maximumDifference = 0.0
    var psnr = Double.infinity
    var ssim = 1.0
    var lowFrequencyDifference = 0.0
    /// The pixel index where the low-frequency difference peaks.
    var lowFrequencyPeak = 0
    var meanDifference = 0.0
    var meanAbsoluteDifference = 0.0
    var pixelDifferences: [Double]

    init(_ planes: ComparedPlanes) {
        let count = planes.pixelCount
        pixelDifferences = [Double](repeating: 0, count: count)
        var squares = 0.0, absolutes = 0.0
        var similarities = 0.0
        let lowPass = GaussianFilter(sigma: 2, truncate: 4)
        for channel in 0..<planes.channelCount {
            let a = planes.actual[channel], b = planes.expected[channel]
            var signed = [Double](repeating: 0, count: count)
            var sum = 0.0
            for index in 0..<count {
                let difference = a[index] - b[index]
                signed[index] = difference
                sum += difference
                squares += difference * difference
                let magnitude = abs(difference)
                absolutes += magnitude
                if magnitude > pixelDifferences[index] { pixelDifferences[index] = magnitude }
            }
            meanDifference = max(meanDifference, abs(sum / Double(count)))
            let blurred = lowPass.apply(signed, width: planes.width, height: planes.height)
            for (index, value) in blurred.enumerated() where abs(value) > lowFrequencyDifference {
                lowFrequencyDifference = abs(value)
                lowFrequencyPeak = index
            }
            similarities += structuralSimilarity(a, b, width: planes.width, height: planes.height)
        }
        maximumDifference = pixelDifferences.max() ?? 0
        let meanSquare = squares / Double(count * planes.channelCount)
        meanAbsoluteDifference = absolutes / Double(count * planes.channelCount)
        psnr = meanSquare == 0 ? .infinity : 10 * log10(255 * 255 / meanSquare)
        ssim = similarities / Double(planes.channelCount)
    }
}
