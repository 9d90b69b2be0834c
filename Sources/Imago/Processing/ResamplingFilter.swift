import Foundation

/// The filter that resamples an image to another size.
///
/// ```swift
/// let sharp = image.resized(width: 320, height: 240, filter: .lanczos3)
/// ImageDecodingOptions(thumbnail: Thumbnail(maximumPixelSize: 256, filter: .lanczos3))
/// ```
///
/// Every filter works on colours weighted by alpha (premultiplied), so
/// transparent pixels do not bleed into their neighbours, and clamps the
/// result to 0...255 (the Lanczos and Mitchell lobes can overshoot at edges).
public enum ResamplingFilter: String, Sendable, Hashable, CaseIterable {
    /// Area averaging when shrinking (each source pixel weighted by the
    /// exact area it covers), linear interpolation when enlarging. The
    /// default: the fastest, with no ringing, and as good as the others
    /// for the last factor of 2 or less after JPEG's DCT scaling, which
    /// has already low-pass filtered the image.
    case area
    /// The Lanczos windowed sinc with 3 lobes, stretched by the shrink
    /// factor: the sharpest, with slight ringing at hard edges. The filter
    /// of Pillow's `LANCZOS` and libvips' default.
    case lanczos3
    /// The Mitchell-Netravali cubic (B = C = 1/3): softer than Lanczos,
    /// with less ringing.
    case mitchell

    /// How far the filter reaches, in source pixels at a scale of 1.
    var support: Double {
        switch self {
        case .area: 1
        case .lanczos3: 3
        case .mitchell: 2
        }
    }

    /// The filter's weight at distance `x` (in source pixels at a scale of 1).
    func weight(_ x: Double) -> Double {
        let x = abs(x)
        switch self {
        case .area:
            return x < 0.5 ? 1 : 0
        case .lanczos3:
            guard x < 3 else { return 0 }
            guard x > 1e-12 else { return 1 }
            let pix = Double.pi * x
            return 3 * sin(pix) * sin(pix / 3) / (pix * pix)
        case .mitchell:
            let b = 1.0 / 3, c = 1.0 / 3
            if x < 1 {
                return ((12 - 9 * b - 6 * c) * x * x * x + (-18 + 12 * b + 6 * c) * x * x + (6 - 2 * b)) / 6
            }
            if x < 2 {
                return ((-b - 6 * c) * x * x * x + (6 * b + 30 * c) * x * x + (-12 * b - 48 * c) * x + (8 * b + 24 * c)) / 6
            }
            return 0
        }
    }
}
