import Foundation
import Imago

/// SSIMULACRA 2, Cloudinary's perceptual image metric: how close `distorted` looks to `reference`, on the scale
/// of human quality ratings. 100 means identical; about 90 is visually lossless (no difference in a flicker
/// test), 70 high quality, 50 medium, and below 30 poor, with obvious artefacts; very strong distortions go
/// negative.
///
/// Computed as the reference implementation (Cloudinary's `ssimulacra2`, also libjxl's `tools/ssimulacra2.cc`)
/// computes it: sRGB pixels to linear RGB (alpha first blended over a gray background), then for 6 scales (1:1 to
/// 1:32, each halving the last by 2x2 box averages in linear light) the images in XYB, shifted and scaled into
/// 0...1; on each of X, Y and B, a Gaussian blur (the same recursive filter, sigma 1.5) gives an SSIM error map
/// and two edge-difference maps (ringing: edges only in `distorted`; blurring: edges only in `reference`), each
/// reduced to its mean and its 4-norm. The 108 norms are weighted with the published weights and mapped to the
/// score by its polynomial. The arithmetic is the reference's as it runs with fused multiply-adds (x86-64 with
/// AVX2, ARM), operation for operation, so the scores are its scores to the last bit.
enum SSIMULACRA2 {
    /// The score of `distorted` against `reference` (same size; at least 8x8).
    ///
    /// When `reference` has an alpha channel both images are blended over a dark (0.1) and a bright (0.9) gray
    /// and the worse score is returned, as the reference tool does; otherwise a `distorted` with alpha is
    /// blended over middle gray (0.5). Pixels are read as sRGB whatever the colour profile. An image under 8
    /// pixels wide or high has no scale the metric measures: like the reference's function (its tool refuses
    /// such images) this returns 100, so compare tiny images some other way.
    static func score(reference: Image, distorted: Image) -> Double {
        precondition(
            reference.width == distorted.width && reference.height == distorted.height,
            "SSIMULACRA 2 compares images of the same size"
        )
        guard reference.pixelFormat.hasAlpha else {
            return score(reference, distorted, background: 0.5)
        }
        return min(score(reference, distorted, background: 0.1), score(reference, distorted, background: 0.9))
    }

    /// The score with any alpha blended over a gray of `background` (encoded sRGB, 0...1).
    private static func score(_ reference: Image, _ distorted: Image, background: Float) -> Double {
        var original = LinearImage(reference, background: background)
        var changed = LinearImage(distorted, background: background)
        var workspace = Workspace(pixelCount: original.width * original.height, width: original.width)
        var scales: [ScaleNorms] = []
        for scale in 0..<scaleCount {
            // As the reference does, the size is checked before halving: the last scale may be 4 to 7 wide.
            guard original.width >= minimumSize, original.height >= minimumSize else { break }
            if scale > 0 {
                original = original.halved()
                changed = changed.halved()
            }
            scales.append(workspace.norms(original, changed))
        }
        return finalScore(scales)
    }

    private static let scaleCount = 6
    private static let minimumSize = 8

    /// Weights of the 108 norms, in the order of `finalScore`: for each channel (X, Y, B), each scale, and each
    /// norm (1, then 4): SSIM error, ringing, blurring. Tuned by Cloudinary on CID22, TID2013, KADID-10k and
    /// KonFiG-IQA (SSIMULACRA 2.1).
    private static let weights: [Double] = [
        // X, scales 1:1 to 1:32
        0.0, 0.0007376606707406586, 0.0, 0.0, 0.0007793481682867309, 0.0,
        0.0, 0.0004371155730107379, 0.0, 1.1041726426657346, 0.00066284834129271, 0.00015231632783718752,
        0.0, 0.0016406437456599754, 0.0, 1.8422455520539298, 11.441172603757666, 0.0,
        0.0007989109436015163, 0.000176816438078653, 0.0, 1.8787594979546387, 10.94906990605142, 0.0,
        0.0007289346991508072, 0.9677937080626833, 0.0,
        0.00014003424285435884, 0.9981766977854967, 0.00031949755934435053,
        0.0004550992113792063, 0.0, 0.0, 0.0013648766163243398, 0.0, 0.0,
        // Y, scales 1:1 to 1:32
        0.0, 0.0, 0.0, 7.466890328078848, 0.0, 17.445833984131262,
        0.0006235601634041466, 0.0, 0.0, 6.683678146179332, 0.00037724407979611296, 1.027889937768264,
        225.20515300849274, 0.0, 0.0, 19.213238186143016, 0.0011401524586618361, 0.001237755635509985,
        176.39317598450694, 0.0, 0.0, 24.43300999870476, 0.28520802612117757, 0.0004485436923833408,
        0.0, 0.0, 0.0, 34.77906344483772, 44.835625328877896, 0.0,
        0.0, 0.0, 0.0, 0.0, 0.0, 0.0,
        // B, scales 1:1 to 1:32
        0.0, 0.0008680556573291698, 0.0, 0.0, 0.0, 0.0,
        0.0, 0.0005313191874358747, 0.0, 0.00016533814161379112, 0.0, 0.0,
        0.0, 0.0, 0.0, 0.0004179171803251336, 0.0017290828234722833, 0.0,
        0.0020827005846636437, 0.0, 0.0, 8.826982764996862, 23.19243343998926, 0.0,
        95.1080498811086, 0.9863978034400682, 0.9834382792465353,
        0.0012286405048278493, 171.2667255897307, 0.9807858872435379,
        0.0, 0.0, 0.0, 0.0005130064588990679, 0.0, 0.00010854057858411537,
    ]

    /// The weighted sum of the norms, through the reference's polynomial, as a score.
    ///
    /// The weights are taken in sequence, as the reference takes them: with fewer than 6 scales (a side under 113
    /// pixels) the channels after X use weights meant for other positions.
    private static func finalScore(_ scales: [ScaleNorms]) -> Double {
        var sum = 0.0
        var index = 0
        for channel in 0..<3 {
            for norms in scales {
                for norm in 0..<2 {
                    let slot = channel * 2 + norm
                    sum += weights[index] * norms.ssim[slot].magnitude
                    sum += weights[index + 1] * norms.ringing[slot].magnitude
                    sum += weights[index + 2] * norms.blurring[slot].magnitude
                    index += 3
                }
            }
        }
        var error = sum * 0.9562382616834844
        error =
            2.326765642916932 * error - 0.020884521182843837 * error * error
            + 6.248496625763138e-05 * error * error * error
        return error > 0 ? 100 - 10 * pow(error, 0.6276336467831387) : 100
    }
}

// MARK: - Per-scale norms

/// The six mean / 4-norm pairs of one scale, each indexed `channel * 2 + norm` (norm 0: mean, 1: 4-norm).
private struct ScaleNorms {
    var ssim = [Double](repeating: 0, count: 6)
    var ringing = [Double](repeating: 0, count: 6)
    var blurring = [Double](repeating: 0, count: 6)
}

// MARK: - Linear RGB

/// An image as three planes of linear-light RGB, the space SSIMULACRA 2 downscales in.
private struct LinearImage {
    let width: Int
    let height: Int
    /// Red, green and blue planes one after the other, each `width * height` row by row.
    var planes: [Float]

    init(width: Int, height: Int, planes: [Float]) {
        self.width = width
        self.height = height
        self.planes = planes
    }

    /// The pixels of `image` (read as sRGB) in linear light; alpha, if any, blended over `background` first,
    /// in encoded sRGB as the reference does.
    init(_ image: Image, background: Float) {
        width = image.width
        height = image.height
        let format = image.pixelFormat
        let bytesPerPixel = format.bytesPerPixel
        let greenOffset = format.isGray ? 0 : 1
        let blueOffset = format.isGray ? 0 : 2
        let alphaOffset = format.hasAlpha ? bytesPerPixel - 1 : -1
        let planeSize = width * height
        var planes = [Float](repeating: 0, count: 3 * planeSize)
        let width = width, height = height, stride = image.bytesPerRow
        SRGB.linearTable.withUnsafeBufferPointer { table in
            let linear = table.baseAddress!
            image.pixels.withUnsafeBufferPointer { bytes in
                planes.withUnsafeMutableBufferPointer { buffer in
                    let red = buffer.baseAddress!, green = red + planeSize, blue = green + planeSize
                    var index = 0
                    for y in 0..<height {
                        var pixel = bytes.baseAddress! + y * stride
                        for _ in 0..<width {
                            if alphaOffset < 0 {
                                red[index] = linear[Int(pixel[0])]
                                green[index] = linear[Int(pixel[greenOffset])]
                                blue[index] = linear[Int(pixel[blueOffset])]
                            } else {
                                let scale = SRGB.byteScale, alpha = Float(pixel[alphaOffset]) * scale
                                let behind = (1 - alpha) * background
                                red[index] = SRGB.linear(alpha * (Float(pixel[0]) * scale) + behind)
                                green[index] = SRGB.linear(alpha * (Float(pixel[greenOffset]) * scale) + behind)
                                blue[index] = SRGB.linear(alpha * (Float(pixel[blueOffset]) * scale) + behind)
                            }
                            pixel += bytesPerPixel
                            index += 1
                        }
                    }
                }
            }
        }
        self.planes = planes
    }

    /// The image at half the size (rounded up): each pixel the mean of a 2x2 block, the last row and column
    /// repeated when the size is odd.
    func halved() -> LinearImage {
        let halfWidth = (width + 1) / 2, halfHeight = (height + 1) / 2
        let planeSize = width * height, halfPlaneSize = halfWidth * halfHeight
        var half = [Float](repeating: 0, count: 3 * halfPlaneSize)
        let width = width, height = height
        planes.withUnsafeBufferPointer { source in
            half.withUnsafeMutableBufferPointer { target in
                for plane in 0..<3 {
                    let input = source.baseAddress! + plane * planeSize
                    var output = target.baseAddress! + plane * halfPlaneSize
                    for halfY in 0..<halfHeight {
                        let top = input + 2 * halfY * width
                        let bottom = input + min(2 * halfY + 1, height - 1) * width
                        for halfX in 0..<halfWidth {
                            let left = 2 * halfX, right = min(2 * halfX + 1, width - 1)
                            // Summed in the reference's order, for the same rounding.
                            var sum = top[left]
                            sum += top[right]
                            sum += bottom[left]
                            sum += bottom[right]
                            output.pointee = sum * 0.25
                            output += 1
                        }
                    }
                }
            }
        }
        return LinearImage(width: halfWidth, height: halfHeight, planes: half)
    }
}

/// The sRGB transfer function as libjxl evaluates it.
private enum SRGB {
    /// The scale from a byte to 0...1, as a `Float` like the reference's.
    static let byteScale = Float(1.0 / 255.0)

    /// The linear value of every byte.
    static let linearTable: [Float] = (0..<256).map { linear(Float($0) * byteScale) }

    /// The linear value of an encoded value in 0...1: libjxl's rational approximation above the linear toe
    /// (within about 1e-7 of `pow`), evaluated as it does, with fused multiply-adds.
    static func linear(_ encoded: Float) -> Float {
        guard encoded > 0.04045 else { return encoded * (1 / Float(12.92)) }
        let x = encoded
        var numerator: Float = 8.210152774e-01
        numerator = Float(7.961564959e-01).plusProduct(numerator, x)
        numerator = Float(1.624820318e-01).plusProduct(numerator, x)
        numerator = Float(1.043637593e-02).plusProduct(numerator, x)
        numerator = Float(2.200248328e-04).plusProduct(numerator, x)
        var denominator: Float = 6.521209011e-03
        denominator = Float(-5.512498495e-02).plusProduct(denominator, x)
        denominator = Float(4.987528350e-01).plusProduct(denominator, x)
        denominator = Float(1.076976492e+00).plusProduct(denominator, x)
        denominator = Float(2.631846970e-01).plusProduct(denominator, x)
        return numerator / denominator
    }
}

// MARK: - XYB

/// libjxl's XYB: linear RGB mixed by the opsin absorbance matrix (plus a bias), cube-rooted, with X the
/// red-green difference, Y the sum and B the blue cone.
private enum XYB {
    static let mix: (Float, Float, Float, Float, Float, Float, Float, Float, Float) = {
        let m00: Float = 0.30, m02: Float = 0.078, m10: Float = 0.23, m12: Float = 0.078
        let m20: Float = 0.24342268924547819, m21: Float = 0.20476744424496821
        return (m00, 1 - m02 - m00, m02, m10, 1 - m12 - m10, m12, m20, m21, 1 - m20 - m21)
    }()
    static let bias: Float = 0.0037930732552754493
    static let cubeRootOfBias = cbrtf(bias)

    /// Converts `image` into three planes (X, Y, B) at `output`, shifted and scaled as the reference does so
    /// that each lies in about 0...1: X * 14 + 0.42, Y + 0.01, and B - Y + 0.55.
    static func convert(_ image: LinearImage, into output: UnsafeMutablePointer<Float>) {
        let count = image.width * image.height
        let (m00, m01, m02, m10, m11, m12, m20, m21, m22) = mix
        let bias = bias, negatedCubeRootOfBias = -cubeRootOfBias
        image.planes.withUnsafeBufferPointer { planes in
            let red = planes.baseAddress!, green = red + count, blue = green + count
            let x = output, y = output + count, b = y + count
            var index = 0
            while index < count {
                let r = red[index], g = green[index], bl = blue[index]
                let long = bias.plusProduct(m02, bl).plusProduct(m01, g).plusProduct(m00, r)
                let medium = bias.plusProduct(m12, bl).plusProduct(m11, g).plusProduct(m10, r)
                let short = bias.plusProduct(m22, bl).plusProduct(m21, g).plusProduct(m20, r)
                let l = cubeRoot(long > 0 ? long : 0, plus: negatedCubeRootOfBias)
                let m = cubeRoot(medium > 0 ? medium : 0, plus: negatedCubeRootOfBias)
                let s = cubeRoot(short > 0 ? short : 0, plus: negatedCubeRootOfBias)
                let luma = 0.5 * (l + m)
                x[index] = 0.5 * (l - m) * 14 + 0.42
                y[index] = luma + 0.01
                b[index] = (s - luma) + 0.55
                index += 1
            }
        }
    }

    /// The cube root of `value` (not negative), plus `addend`, as libjxl computes it: an estimate from the
    /// exponent bits refined by Newton's method (within 6 ulp of `cbrtf`).
    static func cubeRoot(_ value: Float, plus addend: Float) -> Float {
        let third: Float = 1 / 3, fourThirds: Float = 4 / 3
        let valueThird = third * value
        let bits = Int32(bitPattern: value.bitPattern)
        // The exponent times -1/3, in the bits: an estimate of value^(-1/3).
        var root = bits == 0 ? 0 : Float(bitPattern: UInt32(bitPattern: 0x5480_0000 &- (bits >> 23) &* 0x002A_AAAA))
        for _ in 0..<3 {
            let square = root * root
            root = (fourThirds * root).plusProduct(-valueThird, square * square)
        }
        var square = root * root
        root = root.plusProduct(third, root.plusProduct(-value, square * square))
        square = root * root
        return addend.plusProduct(square, value)
    }
}

// MARK: - Blur and maps

/// Buffers for one comparison, sized for its first scale and reused by the smaller ones.
private struct Workspace {
    /// All the buffers, in one allocation; see `norms` for the layout.
    private var storage: [Float]
    private let planeCapacity: Int
    private let widthCapacity: Int

    init(pixelCount: Int, width: Int) {
        planeCapacity = pixelCount
        widthCapacity = width
        storage = [Float](repeating: 0, count: 13 * pixelCount + 8 * width + 3 * Gaussian.radius)
    }

    /// The norms of the three maps of each channel, for one scale.
    mutating func norms(_ first: LinearImage, _ second: LinearImage) -> ScaleNorms {
        let width = first.width, height = first.height, count = width * height
        let planeCapacity = planeCapacity, widthCapacity = widthCapacity
        var result = ScaleNorms()
        storage.withUnsafeMutableBufferPointer { storage in
            // Both images in XYB (three planes each), then one channel's blurred planes (the two means, the
            // squares and the product), a product before its blur, a blur between its passes, and the blur's
            // rows.
            let original = storage.baseAddress!, changed = original + 3 * planeCapacity
            let mean1 = changed + 3 * planeCapacity, mean2 = mean1 + planeCapacity
            let square1 = mean2 + planeCapacity, square2 = square1 + planeCapacity
            let product12 = square2 + planeCapacity, product = product12 + planeCapacity
            let pass = product + planeCapacity, rows = pass + planeCapacity
            let history = rows + 2 * widthCapacity + 3 * Gaussian.radius
            let blur = Gaussian(width: width, height: height, pass: pass, rows: rows, history: history)
            XYB.convert(first, into: original)
            XYB.convert(second, into: changed)
            for channel in 0..<3 {
                let image1 = original + channel * count, image2 = changed + channel * count
                blur.apply(image1, into: mean1)
                blur.apply(image2, into: mean2)
                Self.multiply(image1, image1, into: product, count: count)
                blur.apply(product, into: square1)
                Self.multiply(image2, image2, into: product, count: count)
                blur.apply(product, into: square2)
                Self.multiply(image1, image2, into: product, count: count)
                blur.apply(product, into: product12)
                let sums = MapSums(
                    image1: image1, image2: image2, mean1: mean1, mean2: mean2, square1: square1, square2: square2,
                    product12: product12, count: count
                )
                let perPixel = 1.0 / Double(count)
                result.ssim[channel * 2] = sums.ssim * perPixel
                result.ssim[channel * 2 + 1] = (sums.ssim4 * perPixel).squareRoot().squareRoot()
                result.ringing[channel * 2] = sums.ringing * perPixel
                result.ringing[channel * 2 + 1] = (sums.ringing4 * perPixel).squareRoot().squareRoot()
                result.blurring[channel * 2] = sums.blurring * perPixel
                result.blurring[channel * 2 + 1] = (sums.blurring4 * perPixel).squareRoot().squareRoot()
            }
        }
        return result
    }

    private static func multiply(
        _ a: UnsafeMutablePointer<Float>, _ b: UnsafeMutablePointer<Float>, into output: UnsafeMutablePointer<Float>,
        count: Int
    ) {
        var index = 0
        while index < count {
            output[index] = a[index] * b[index]
            index += 1
        }
    }
}

/// The sums over one channel's pixels of the SSIM error map and of the two edge-difference maps, and of their
/// fourth powers.
private struct MapSums {
    var ssim = 0.0, ssim4 = 0.0, ringing = 0.0, ringing4 = 0.0, blurring = 0.0, blurring4 = 0.0

    /// SSIM's constant for the contrast-structure term. The luminance term has none: SSIMULACRA 2 drops its
    /// denominator (mu1² + mu2²), which would weigh errors in the darks more, correcting for gamma a second time.
    static let c2: Float = 0.0009

    init(
        image1: UnsafeMutablePointer<Float>, image2: UnsafeMutablePointer<Float>,
        mean1: UnsafeMutablePointer<Float>, mean2: UnsafeMutablePointer<Float>,
        square1: UnsafeMutablePointer<Float>, square2: UnsafeMutablePointer<Float>,
        product12: UnsafeMutablePointer<Float>, count: Int
    ) {
        let c2 = Self.c2
        var index = 0
        while index < count {
            let mu1 = mean1[index], mu2 = mean2[index]
            let difference = mu1 - mu2
            let luminance = Float(1.0 - Double(difference * difference))
            let covariance = 2 * (product12[index] - mu1 * mu2) + c2
            let variances = (square1[index] - mu1 * mu1) + (square2[index] - mu2 * mu2) + c2
            // 1 - SSIM, an error, so that its 4-norm means something.
            var error = 1.0 - Double(luminance * covariance / variances)
            if error < 0 { error = 0 }
            ssim += error
            error *= error
            ssim4 += error * error

            // Detail around each pixel: its distance from the local mean.
            var detail1 = image1[index] - mu1, detail2 = image2[index] - mu2
            if detail1 < 0 { detail1 = -detail1 }
            if detail2 < 0 { detail2 = -detail2 }
            let edge = (1.0 + Double(detail2)) / (1.0 + Double(detail1)) - 1.0
            if edge > 0 {
                // Edges in the distorted image where the original is smooth: ringing, banding, blocks.
                ringing += edge
                let square = edge * edge
                ringing4 += square * square
            } else {
                // Edges of the original smoothed away: blur, smearing.
                blurring -= edge
                let square = edge * edge
                blurring4 += square * square
            }
            index += 1
        }
    }
}

/// libjxl's recursive Gaussian of sigma 1.5 (Charalampidis 2016, "Recursive Implementation of the Gaussian
/// Filter Using Truncated Cosine Functions"): the sum of three second-order recursions (k = 1, 3, 5),
///
///     out[n] = n2 * (in[n - radius - 1] + in[n + radius - 1]) - d1 * out[n - 1] - out[n - 2],
///
/// run along each row, then down each column, from zeros at n = 1 - radius; the image is zero outside. Every
/// multiply-add is fused, and the rows are computed four outputs at a time where the reference's vector code
/// does so, so that the sums round as the reference's do (on processors with FMA, which the reference uses when
/// there: AVX2 and later, and ARM).
private struct Gaussian {
    /// The support: round(3.2795 * sigma + 0.2546).
    static let radius = 5
    static let recursions = (
        Recursion(sigma: 1.5, radius: radius, k: 1),
        Recursion(sigma: 1.5, radius: radius, k: 3),
        Recursion(sigma: 1.5, radius: radius, k: 5)
    )

    let width: Int
    let height: Int
    /// A plane between the two passes.
    let pass: UnsafeMutablePointer<Float>
    /// Room for `2 * width + 3 * radius` values: a padded row, or a row of zeros and one to discard.
    let rows: UnsafeMutablePointer<Float>
    /// Room for `6 * width` values: the state of the vertical recursions.
    let history: UnsafeMutablePointer<Float>

    /// Blurs a `width` x `height` plane into `output`.
    func apply(_ input: UnsafeMutablePointer<Float>, into output: UnsafeMutablePointer<Float>) {
        blurRows(input, into: pass)
        blurColumns(pass, into: output)
    }

    private func blurRows(_ input: UnsafeMutablePointer<Float>, into output: UnsafeMutablePointer<Float>) {
        let radius = Self.radius, width = width
        // One input row at a time, with zeros before (2 * radius) and after (radius) it.
        rows.update(repeating: 0, count: width + 3 * radius)
        let padded = rows + 2 * radius
        // As the reference: one by one up to the first multiple of 4 past the radius, then four at a time while
        // the inputs are inside the row, then one by one again.
        let blocksStart = min((radius + 4) / 4 * 4, width), blocksEnd = width - radius - 2
        var y = 0
        while y < height {
            padded.update(from: input + y * width, count: width)
            let out = output + y * width
            var (first, second, third) = Self.recursions
            var n = 1 - radius
            while n < blocksStart {
                let sum = padded[n - radius - 1] + padded[n + radius - 1]
                let value = first.next(sum) + (second.next(sum) + third.next(sum))
                if n >= 0 { out[n] = value }
                n += 1
            }
            while n < blocksEnd {
                let left = padded + n - radius - 1, right = padded + n + radius - 1
                let sums = (left[0] + right[0], left[1] + right[1], left[2] + right[2], left[3] + right[3])
                let a = first.nextFour(sums), b = second.nextFour(sums), c = third.nextFour(sums)
                out[n] = a.0 + (b.0 + c.0)
                out[n + 1] = a.1 + (b.1 + c.1)
                out[n + 2] = a.2 + (b.2 + c.2)
                out[n + 3] = a.3 + (b.3 + c.3)
                n += 4
            }
            while n < width {
                let sum = padded[n - radius - 1] + padded[n + radius - 1]
                out[n] = first.next(sum) + (second.next(sum) + third.next(sum))
                n += 1
            }
            y += 1
        }
    }

    /// The same recursions down the columns, all columns of a row at once.
    private func blurColumns(_ input: UnsafeMutablePointer<Float>, into output: UnsafeMutablePointer<Float>) {
        let radius = Self.radius, width = width, height = height
        let (first, second, third) = Self.recursions
        let (feed1, feed3, feed5) = (first.feed.0, second.feed.0, third.feed.0)
        let (decay1, decay3, decay5) = (first.fromLast.0, second.fromLast.0, third.fromLast.0)
        // Two rows of state per recursion: the last outputs (`newer`) and the ones before (`older`), which the
        // new outputs replace before the two swap roles.
        var newer = history, older = history + 3 * width
        newer.update(repeating: 0, count: 6 * width)
        // Rows outside the image read zeros; the warm-up outputs go to a row that is discarded.
        rows.update(repeating: 0, count: width)
        let zeros = rows, discard = rows + width
        var n = 1 - radius
        while n < height {
            let top = n - radius - 1 >= 0 ? input + (n - radius - 1) * width : zeros
            let bottom = n + radius - 1 < height ? input + (n + radius - 1) * width : zeros
            let out = n >= 0 ? output + n * width : discard
            let newer3 = newer + width, newer5 = newer3 + width, older3 = older + width, older5 = older3 + width
            var x = 0
            while x < width {
                let sum = top[x] + bottom[x]
                // n2 * sum + (-d1 * last - before), as the reference's two fused operations.
                let next1 = (-older[x]).plusProduct(decay1, newer[x]).plusProduct(feed1, sum)
                let next3 = (-older3[x]).plusProduct(decay3, newer3[x]).plusProduct(feed3, sum)
                let next5 = (-older5[x]).plusProduct(decay5, newer5[x]).plusProduct(feed5, sum)
                older[x] = next1
                older3[x] = next3
                older5[x] = next5
                out[x] = next1 + (next3 + next5)
                x += 1
            }
            swap(&newer, &older)
            n += 1
        }
    }
}

/// One of the Gaussian's three recursions along a row: its coefficients and its last two outputs.
private struct Recursion {
    /// The weight of input sum i in output i + j, for j in 0...3; `feed.0` is n2.
    let feed: (Float, Float, Float, Float)
    /// The weight of the last output in the next four; `fromLast.0` is -d1.
    let fromLast: (Float, Float, Float, Float)
    /// The weight of the output before it in the next four; `fromBefore.0` is -1.
    let fromBefore: (Float, Float, Float, Float)
    private var last: Float = 0
    private var before: Float = 0

    /// Solves for recursion `k` (1, 3 or 5) of a Gaussian of `sigma` as libjxl's `CreateRecursiveGaussian`
    /// does, in `Double`; the four-output weights expand the recursion over four steps.
    init(sigma: Double, radius: Int, k: Int) {
        let radius = Double(radius)
        let omega = [1.0, 3.0, 5.0].map { $0 * Double.pi / (2 * radius) }
        let p = [1 / tan(omega[0] / 2), -1 / tan(omega[1] / 2), 1 / tan(omega[2] / 2)]
        let r = [p[0] * p[0] / sin(omega[0]), -p[1] * p[1] / sin(omega[1]), p[2] * p[2] / sin(omega[2])]
        let rho = omega.map { exp(-0.5 * sigma * sigma * $0 * $0) / radius }
        let d13 = p[0] * r[1] - r[0] * p[1], d35 = p[1] * r[2] - r[1] * p[2], d51 = p[2] * r[0] - r[2] * p[0]
        let zeta15 = d35 / d13, zeta35 = d51 / d13
        // beta = A^-1 gamma, A's rows being p, r and (zeta15, zeta35, 1): the weights that make the filter sum to 1
        // and match the Gaussian's variance.
        let inverse = Self.inverse([p[0], p[1], p[2], r[0], r[1], r[2], zeta15, zeta35, 1])
        let gamma = [1, radius * radius - sigma * sigma, zeta15 * rho[0] + zeta35 * rho[1] + rho[2]]
        let i = (k - 1) / 2
        var beta = 0.0
        for j in 0..<3 { beta += inverse[3 * i + j] * gamma[j] }
        let n2 = -beta * cos(omega[i] * (radius + 1)), d1 = -2 * cos(omega[i]), d1Squared = d1 * d1
        feed = (
            Float(n2), Float(-d1 * n2), Float(d1Squared * n2 - n2), Float(-d1Squared * d1 * n2 + 2 * d1 * n2)
        )
        fromLast = (
            Float(-d1), Float(d1Squared - 1), Float(-d1Squared * d1 + 2 * d1),
            Float(d1Squared * d1Squared - 3 * d1Squared + 1)
        )
        fromBefore = (-1, Float(d1), Float(-d1Squared + 1), Float(d1Squared * d1 - 2 * d1))
    }

    /// The next output, from the sum of its two inputs.
    mutating func next(_ sum: Float) -> Float {
        let value = (sum * feed.0).plusProduct(fromBefore.0, before).plusProduct(fromLast.0, last)
        before = last
        last = value
        return value
    }

    /// The next four outputs, from the sums of their inputs, each computed from the last two outputs before them.
    mutating func nextFour(_ sums: (Float, Float, Float, Float)) -> (Float, Float, Float, Float) {
        var value0 = sums.0 * feed.0, value1 = sums.0 * feed.1, value2 = sums.0 * feed.2, value3 = sums.0 * feed.3
        value1 = value1.plusProduct(feed.0, sums.1)
        value2 = value2.plusProduct(feed.1, sums.1).plusProduct(feed.0, sums.2)
        value3 = value3.plusProduct(feed.2, sums.1).plusProduct(feed.1, sums.2).plusProduct(feed.0, sums.3)
        value0 = value0.plusProduct(fromBefore.0, before).plusProduct(fromLast.0, last)
        value1 = value1.plusProduct(fromBefore.1, before).plusProduct(fromLast.1, last)
        value2 = value2.plusProduct(fromBefore.2, before).plusProduct(fromLast.2, last)
        value3 = value3.plusProduct(fromBefore.3, before).plusProduct(fromLast.3, last)
        before = value2
        last = value3
        return (value0, value1, value2, value3)
    }

    /// The inverse of a 3x3 matrix (row-major), by its adjugate, as libjxl's `Inv3x3Matrix`.
    private static func inverse(_ m: [Double]) -> [Double] {
        let adjugate = [
            m[4] * m[8] - m[5] * m[7], m[2] * m[7] - m[1] * m[8], m[1] * m[5] - m[2] * m[4],
            m[5] * m[6] - m[3] * m[8], m[0] * m[8] - m[2] * m[6], m[2] * m[3] - m[0] * m[5],
            m[3] * m[7] - m[4] * m[6], m[1] * m[6] - m[0] * m[7], m[0] * m[4] - m[1] * m[3],
        ]
        let determinant = m[0] * adjugate[0] + m[1] * adjugate[3] + m[2] * adjugate[6]
        return adjugate.map { $0 * (1 / determinant) }
    }
}

extension Float {
    /// `self + a * b` rounded once, as the reference's fused multiply-adds compute it.
    ///
    /// Unoptimised, this is the standard library's `addingProduct`: one call to the C library's `fmaf`, the
    /// cheapest there. Optimised, it is the same sum through `Double`, which the compiler inlines and vectorises
    /// (three times as fast overall): the product of two floats is exact in a `Double`, and the sum, rounded
    /// twice, differs by one unit in the last place only when the `Double` lands exactly halfway between two
    /// floats, a case too rare to show in the scores.
    @inline(__always) fileprivate func plusProduct(_ a: Float, _ b: Float) -> Float {
        #if DEBUG
            addingProduct(a, b)
        #else
            Float(Double(self) + Double(a) * Double(b))
        #endif
    }
}
