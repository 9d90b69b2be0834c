import Foundation

/// Resampling in linear light: the sRGB values are decoded to light
/// intensities (IEC 61966-2-1's curve) before they are weighted, and
/// encoded again once summed, so a black-and-white pattern shrinks to the
/// gray of its mean light (about 188), not of its mean value (128).
/// Alpha is a coverage, not a colour: it is weighted as stored.
///
/// The decoding is a 256-entry table; the encoding, a 4,096-interval table
/// interpolated linearly (within 0.02 of a level of the exact curve).
enum LinearLight {
    /// Each byte's light intensity, scaled to 0...255.
    static let decoded: [Float] = (0..<256).map { value in
        let v = Double(value) / 255
        return Float(255 * (v <= 0.04045 ? v / 12.92 : pow((v + 0.055) / 1.055, 2.4)))
    }

    /// The number of intervals of ``encoded``.
    static let intervals = 4_096

    /// The encoded value (0...255, unrounded) at each of `intervals + 1`
    /// evenly spaced intensities from 0 to 1.
    static let encoded: [Float] = (0...intervals).map { index in
        let v = Double(index) / Double(intervals)
        return Float(255 * (v <= 0.0031308 ? v * 12.92 : 1.055 * pow(v, 1 / 2.4) - 0.055))
    }

    /// The sRGB byte for a light intensity on the 0...255 scale, from `table` (``encoded``).
    @inline(__always)
    static func encode(_ intensity: Float, _ table: UnsafeBufferPointer<Float>) -> UInt8 {
        let position = min(max(intensity, 0), 255) / 255 * Float(intervals)
        let index = min(Int(position), intervals - 1)
        let fraction = position - Float(index)
        let value = table[index] + (table[index + 1] - table[index]) * fraction
        return UInt8(min(255, max(0, value + 0.5)))
    }

    /// One input row to `width` columns of sums: colours decoded to light,
    /// then weighted (by alpha too, when there is one).
    static func resampleRow(
        _ input: UnsafePointer<UInt8>, format: PixelFormat, starts: UnsafeBufferPointer<Int>, weights: UnsafeBufferPointer<Float>,
        taps: Int, width: Int, into sums: UnsafeMutablePointer<Float>
    ) {
        let channels = format.bytesPerPixel
        let alpha = format.hasAlpha ? channels - 1 : -1
        let colours = format.hasAlpha ? channels - 1 : channels
        sums.update(repeating: 0, count: width * channels)
        decoded.withUnsafeBufferPointer { light in
            var weight = 0
            for x in 0..<width {
                let out = sums + x * channels
                var source = starts[x] * channels
                for _ in 0..<taps {
                    var w = weights[weight]
                    if alpha >= 0 {
                        w *= Float(input[source + alpha])
                        out[alpha] += w
                    }
                    for c in 0..<colours { out[c] += light[Int(input[source + c])] * w }
                    source += channels
                    weight += 1
                }
            }
        }
    }

    /// One row of summed output to bytes: un-premultiplied, encoded to sRGB.
    static func writeRow(_ sums: UnsafePointer<Float>, to output: UnsafeMutablePointer<UInt8>, width: Int, channels: Int, hasAlpha: Bool) {
        let colours = hasAlpha ? channels - 1 : channels
        encoded.withUnsafeBufferPointer { table in
            for x in 0..<width {
                let base = x * channels
                if hasAlpha {
                    let a = sums[base + colours]
                    for c in 0..<colours { output[base + c] = a > 0 ? encode(sums[base + c] / a, table) : 0 }
                    output[base + colours] = UInt8(min(255, max(0, a + 0.5)))
                } else {
                    for c in 0..<colours { output[base + c] = encode(sums[base + c], table) }
                }
            }
        }
    }
}
