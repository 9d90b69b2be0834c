import Foundation
import Imago

/// The channels of one frame of two images, as the comparison sees them:
/// one plane of `Double`s per channel, row by row.
///
/// Both images are read as the same channels: luma for two gray images,
/// red, green and blue otherwise, and alpha as a fourth plane when either
/// image has a pixel that is not opaque. With alpha, colour is
/// premultiplied (`value * alpha / 255`), so the colour of a transparent
/// pixel, which nobody sees and encoders are free to change, never counts.
struct ComparedPlanes {
    let width: Int
    let height: Int
    /// The actual image's planes, each `width * height` values in 0...255.
    let actual: [[Double]]
    /// The expected image's planes, in the same order.
    let expected: [[Double]]

    var channelCount: Int { actual.count }
    var pixelCount: Int { width * height }

    /// The planes of frame `frame` of two images of the same size.
    init(_ actual: Image, _ expected: Image, frame: Int) {
        precondition(actual.width == expected.width && actual.height == expected.height)
        let gray = actual.pixelFormat.isGray && expected.pixelFormat.isGray
        let withAlpha = Self.hasTranslucentPixel(actual, frame: frame) || Self.hasTranslucentPixel(expected, frame: frame)
        let format: PixelFormat = gray ? (withAlpha ? .grayAlpha8 : .gray8) : (withAlpha ? .rgba8 : .rgb8)
        width = actual.width
        height = actual.height
        self.actual = Self.planes(of: actual, frame: frame, as: format)
        self.expected = Self.planes(of: expected, frame: frame, as: format)
    }

    /// Whether frame `frame` of `image` has a pixel whose alpha is below 255.
    private static func hasTranslucentPixel(_ image: Image, frame: Int) -> Bool {
        guard image.pixelFormat.hasAlpha else { return false }
        let packed = image.converted(to: image.pixelFormat)
        let step = packed.pixelFormat.bytesPerPixel
        return packed.frames[frame].pixels.withUnsafeBufferPointer { bytes in
            var index = step - 1
            while index < bytes.count {
                if bytes[index] != 255 { return true }
                index += step
            }
            return false
        }
    }

    /// One plane per channel of `format`, colour premultiplied when it has alpha.
    private static func planes(of image: Image, frame: Int, as format: PixelFormat) -> [[Double]] {
        let packed = image.converted(to: format)
        let channels = format.bytesPerPixel
        let count = image.width * image.height
        var planes = [[Double]](repeating: [Double](repeating: 0, count: count), count: channels)
        packed.frames[frame].pixels.withUnsafeBufferPointer { bytes in
            for channel in 0..<channels {
                planes[channel].withUnsafeMutableBufferPointer { plane in
                    for index in 0..<count { plane[index] = Double(bytes[index * channels + channel]) }
                }
            }
        }
        if format.hasAlpha {
            let alpha = planes[channels - 1]
            for channel in 0..<(channels - 1) {
                planes[channel].withUnsafeMutableBufferPointer { plane in
                    alpha.withUnsafeBufferPointer { alpha in
                        for index in 0..<count { plane[index] *= alpha[index] / 255 }
                    }
                }
            }
        }
        return planes
    }
}

/// A one-dimensional Gaussian kernel and the separable filter that applies
/// it, with borders mirrored (`d c b a | a b c d | d c b a`), as SciPy's
/// `gaussian_filter` does by default.
struct GaussianFilter {
    let weights: [Double]
    var radius: Int { weights.count / 2 }

    /// A kernel of standard deviation `sigma`, cut at `truncate` deviations
    /// (radius `Int(truncate * sigma + 0.5)`), its weights summing to 1.
    init(sigma: Double, truncate: Double) {
        let radius = Int(truncate * sigma + 0.5)
        let raw = (-radius...radius).map { offset in exp(-0.5 * Double(offset * offset) / (sigma * sigma)) }
        let sum = raw.reduce(0, +)
        weights = raw.map { $0 / sum }
    }

    /// `plane` (`width * height` values) filtered across, then down.
    func apply(_ plane: [Double], width: Int, height: Int) -> [Double] {
        let radius = radius
        var across = [Double](repeating: 0, count: plane.count)
        var padded = [Double](repeating: 0, count: width + 2 * radius)
        weights.withUnsafeBufferPointer { weights in
            plane.withUnsafeBufferPointer { plane in
                across.withUnsafeMutableBufferPointer { across in
                    padded.withUnsafeMutableBufferPointer { padded in
                        for y in 0..<height {
                            let row = y * width
                            for x in 0..<(width + 2 * radius) {
                                padded[x] = plane[row + Self.mirrored(x - radius, count: width)]
                            }
                            for x in 0..<width {
                                var sum = 0.0
                                for tap in 0..<weights.count { sum += weights[tap] * padded[x + tap] }
                                across[row + x] = sum
                            }
                        }
                    }
                }
            }
        }
        var result = [Double](repeating: 0, count: plane.count)
        weights.withUnsafeBufferPointer { weights in
            across.withUnsafeBufferPointer { across in
                result.withUnsafeMutableBufferPointer { result in
                    for y in 0..<height {
                        let row = y * width
                        for tap in 0..<weights.count {
                            let source = Self.mirrored(y + tap - radius, count: height) * width
                            let weight = weights[tap]
                            for x in 0..<width { result[row + x] += weight * across[source + x] }
                        }
                    }
                }
            }
        }
        return result
    }

    /// `index` mirrored into `0..<count` about the half-pixel edges.
    static func mirrored(_ index: Int, count: Int) -> Int {
        var index = index
        while index < 0 || index >= count {
            index = index < 0 ? -index - 1 : 2 * count - index - 1
        }
        return index
    }
}

/// The structural similarity index (Wang, Bovik, Sheikh and Simoncelli,
/// 2004) of two planes, computed as scikit-image's
/// `structural_similarity(..., data_range=255, gaussian_weights=True,
/// sigma=1.5, use_sample_covariance=False)` does: local statistics under an
/// 11-tap Gaussian window, averaged over the pixels at least 5 from every
/// edge. A plane smaller than the window on either side is taken whole, as
/// one window.
func structuralSimilarity(_ a: [Double], _ b: [Double], width: Int, height: Int) -> Double {
    let c1 = (0.01 * 255) * (0.01 * 255), c2 = (0.03 * 255) * (0.03 * 255)
    let filter = GaussianFilter(sigma: 1.5, truncate: 3.5)
    let pad = filter.radius
    func similarity(_ muA: Double, _ muB: Double, _ varA: Double, _ varB: Double, _ covariance: Double) -> Double {
        ((2 * muA * muB + c1) * (2 * covariance + c2)) / ((muA * muA + muB * muB + c1) * (varA + varB + c2))
    }
    guard width > 2 * pad, height > 2 * pad else {
        let count = Double(a.count)
        let muA = a.reduce(0, +) / count, muB = b.reduce(0, +) / count
        var varA = 0.0, varB = 0.0, covariance = 0.0
        for index in a.indices {
            let da = a[index] - muA, db = b[index] - muB
            varA += da * da; varB += db * db; covariance += da * db
        }
        return similarity(muA, muB, varA / count, varB / count, covariance / count)
    }
    let products = (a: zip(a, a).map(*), b: zip(b, b).map(*), ab: zip(a, b).map(*))
    let muA = filter.apply(a, width: width, height: height)
    let muB = filter.apply(b, width: width, height: height)
    let meanAA = filter.apply(products.a, width: width, height: height)
    let meanBB = filter.apply(products.b, width: width, height: height)
    let meanAB = filter.apply(products.ab, width: width, height: height)
    var sum = 0.0
    for y in pad..<(height - pad) {
        for x in pad..<(width - pad) {
            let index = y * width + x
            let ua = muA[index], ub = muB[index]
            sum += similarity(ua, ub, meanAA[index] - ua * ua, meanBB[index] - ub * ub, meanAB[index] - ua * ub)
        }
    }
    return sum / Double((width - 2 * pad) * (height - 2 * pad))
}
