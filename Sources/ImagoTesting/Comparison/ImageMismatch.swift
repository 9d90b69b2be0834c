import Foundation

/// The error ``ImageComparison/require(_:name:artifactsFolder:)`` throws:
/// which measures broke the tolerance, by how much, and where the actual,
/// expected and difference images were written.
///
/// Its description is the failure message a test shows:
///
/// ```text
/// the images are not visually identical:
///   low-frequency difference 71.6 levels, at most 24 allowed
///   (PSNR 30.49 dB, SSIM 0.9385, largest difference 105 levels, ...; 1312 of 65536 pixels differ in 48x16 at (198, 230))
///   actual, expected and difference images: /tmp/imago-image-comparisons/watermark-5C1E09/
/// ```
public struct ImageMismatch: Error, Sendable, CustomStringConvertible {
    /// The comparison that failed.
    public let comparison: ImageComparison
    /// The tolerance it failed.
    public let tolerance: ImageTolerance
    /// Each broken requirement with the value measured.
    public let failed: [(requirement: ImageTolerance.Requirement, value: Double)]
    /// The folder holding `actual.png`, `expected.png` and `difference.png`,
    /// or `nil` when they could not be written.
    public let artifacts: URL?

    public var description: String {
        var lines = ["the images are not \(tolerance.name ?? "within \(tolerance)")" + ":"]
        if let reason = comparison.incomparability {
            lines.append("  \(reason)")
        } else {
            lines += failed.map { "  " + Self.explain($0.requirement, $0.value, comparison) }
            lines.append("  (\(comparison))")
        }
        lines.append(artifacts.map { "  actual, expected and difference images: \($0.path)/" }
            ?? "  (the actual and expected images could not be written)")
        return lines.joined(separator: "\n")
    }

    /// "PSNR 27.1 dB, at least 30 required".
    private static func explain(_ requirement: ImageTolerance.Requirement, _ value: Double, _ comparison: ImageComparison) -> String {
        switch requirement {
        case .maximumDifference(let bound):
            "largest difference \(formatted(value, digits: 1)) levels, at most \(formatted(bound)) allowed"
        case .lowFrequencyDifference(let bound):
            "low-frequency difference \(formatted(value, digits: 1)) levels"
                + (comparison.lowFrequencyPeak.map { " at (\($0.x), \($0.y))" } ?? "") + ", at most \(formatted(bound)) allowed"
        case .meanDifference(let bound):
            "mean difference \(formatted(value, digits: 2)) levels, at most \(formatted(bound)) allowed"
        case .psnr(let bound):
            "PSNR \(formatted(value, digits: 2)) dB, at least \(formatted(bound)) required"
        case .ssim(let bound):
            "SSIM \(formatted(value)), at least \(formatted(bound)) required"
        case .ssimulacra2(let bound):
            "SSIMULACRA 2 \(formatted(value, digits: 2)), at least \(formatted(bound)) required"
        }
    }
}

/// Where a failed comparison's images go.
enum ComparisonArtifacts {
    /// A new folder for one failed comparison: `name` made safe for a file
    /// name, and a random suffix, so that runs and parallel tests never
    /// overwrite each other's images.
    static func newFolder(named name: String, under parent: URL?) -> URL {
        let root = parent
            ?? ProcessInfo.processInfo.environment["IMAGO_COMPARISON_ARTIFACTS"].map { URL(fileURLWithPath: $0) }
            ?? FileManager.default.temporaryDirectory.appendingPathComponent("imago-image-comparisons")
        let safe = String(name.map { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" ? $0 : "-" }.prefix(80))
            .trimmingCharacters(in: CharacterSet(charactersIn: "-"))
        let suffix = String(UInt32.random(in: 0...UInt32.max), radix: 16, uppercase: true)
        return root.appendingPathComponent("\(safe.isEmpty ? "comparison" : safe)-\(suffix)")
    }
}
