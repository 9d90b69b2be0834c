import Foundation

/// How far two images may differ and still match, in the terms a test
/// states: exact, within a number of levels, a PSNR, SSIM or
/// SSIMULACRA 2 floor, or ``visuallyIdentical``. Tolerances combine with
/// ``and(_:)``; a comparison matches when every requirement holds.
///
/// ```swift
/// try ImageComparison(thumbnail, reference).require(.visuallyIdentical)
/// try ImageComparison(decoded, original).require(.within(levels: 1))
/// try ImageComparison(sharpened, reference).require(.psnr(atLeast: 40).and(.ssim(atLeast: 0.99)))
/// ```
///
/// Differences are in levels of an 8-bit channel (0 to 255), measured on
/// the channels ``ImageComparison`` describes (colour premultiplied by
/// alpha when an image is not opaque).
public struct ImageTolerance: Sendable, Hashable, CustomStringConvertible {
    /// One measure and its bound.
    public enum Requirement: Sendable, Hashable, CustomStringConvertible {
        /// Every channel of every pixel within this many levels.
        case maximumDifference(atMost: Double)
        /// Peak signal-to-noise ratio at least this many decibels.
        case psnr(atLeast: Double)
        /// Structural similarity (mean SSIM over the channels) at least this.
        case ssim(atLeast: Double)
        /// SSIMULACRA 2 score at least this (100: identical; 90: visually
        /// lossless; 70: high quality; 50: medium).
        case ssimulacra2(atLeast: Double)
        /// The difference after a Gaussian blur (standard deviation 2
        /// pixels) at most this many levels anywhere: what differs over an
        /// area (a shape, a crop, a watermark, a tint), with the fine grain
        /// encoders and resamplers change averaged out.
        case lowFrequencyDifference(atMost: Double)
        /// The average signed difference of each channel at most this many
        /// levels: a shift of colour or brightness over the whole image.
        case meanDifference(atMost: Double)

        public var description: String {
            switch self {
            case .maximumDifference(let levels): "largest difference ≤ \(formatted(levels)) levels"
            case .psnr(let decibels): "PSNR ≥ \(formatted(decibels)) dB"
            case .ssim(let value): "SSIM ≥ \(formatted(value))"
            case .ssimulacra2(let score): "SSIMULACRA 2 ≥ \(formatted(score))"
            case .lowFrequencyDifference(let levels): "low-frequency difference ≤ \(formatted(levels)) levels"
            case .meanDifference(let levels): "mean difference ≤ \(formatted(levels)) levels"
            }
        }
    }

    /// What must hold, all of it.
    public let requirements: [Requirement]
    /// The tolerance's name in messages ("visually identical"), or `nil`
    /// to list its requirements.
    public let name: String?

    /// A tolerance of the given requirements.
    public init(_ requirements: [Requirement], name: String? = nil) {
        self.requirements = requirements
        self.name = name
    }

    /// The same pixels: no channel of any pixel differs (colour under
    /// transparent pixels aside).
    public static let exact = ImageTolerance([.maximumDifference(atMost: 0)], name: "exact")

    /// No channel of any pixel differs by more than `levels`.
    public static func within(levels: Int) -> ImageTolerance {
        ImageTolerance([.maximumDifference(atMost: Double(levels))])
    }

    /// A peak signal-to-noise ratio of at least `decibels` (identical images: infinity).
    public static func psnr(atLeast decibels: Double) -> ImageTolerance {
        ImageTolerance([.psnr(atLeast: decibels)])
    }

    /// A structural similarity of at least `value` (1: identical).
    public static func ssim(atLeast value: Double) -> ImageTolerance {
        ImageTolerance([.ssim(atLeast: value)])
    }

    /// A SSIMULACRA 2 score of at least `score`: Cloudinary's perceptual
    /// measure of quality (100: identical, 90: visually lossless, 70: high
    /// quality, 50: medium), for a test of an encoder's quality rather than
    /// of the picture's content.
    public static func ssimulacra2(atLeast score: Double) -> ImageTolerance {
        ImageTolerance([.ssimulacra2(atLeast: score)])
    }

    /// The same picture to a viewer at a glance: what JPEG, WebP or AVIF
    /// at their usual qualities (75 and up) and a different good resampler
    /// change passes; a crop a few pixels off, a colour shift, a missing
    /// or extra watermark, text or shape fails. It holds when
    ///
    /// - the low-frequency difference is at most 24 levels (correct
    ///   re-encodes and resamples measure 7 to 14 on the seeded
    ///   ``TestImages/photo(width:height:seed:)`` and 8 to 16 on
    ///   photographs; a crop three pixels off, 49 to 76; a crop 2% too
    ///   tight, 60 to 140; a missing 48x16 watermark, 83 to 85),
    /// - the mean difference of every channel is at most 3 levels (correct
    ///   re-encodes measure under 1; a tint of 12 levels measures 12), and
    /// - the PSNR is at least 25 dB (correct re-encodes measure 32 to 37 on
    ///   the seeded photo, 28 to 34 on photographs).
    ///
    /// It does not judge fine sharpness: a slight blur passes. State
    /// ``ssim(atLeast:)`` or ``psnr(atLeast:)`` as well to test that.
    public static let visuallyIdentical = ImageTolerance(
        [.lowFrequencyDifference(atMost: 24), .meanDifference(atMost: 3), .psnr(atLeast: 25)],
        name: "visually identical"
    )

    /// This tolerance and `other`: every requirement of both.
    public func and(_ other: ImageTolerance) -> ImageTolerance {
        ImageTolerance(requirements + other.requirements)
    }

    public var description: String {
        name ?? requirements.map(\.description).joined(separator: ", ")
    }
}

/// A number as a test would write it: no trailing zeros, at most `digits` decimals.
func formatted(_ value: Double, digits: Int = 4) -> String {
    if value.isInfinite { return value > 0 ? "∞" : "-∞" }
    if value.isNaN { return "n/a" }
    var text = String(format: "%.\(digits)f", value)
    guard text.contains(".") else { return text }
    while text.hasSuffix("0") { text.removeLast() }
    if text.hasSuffix(".") { text.removeLast() }
    return text
}
