import Foundation

extension Image {
    /// The image's [BlurHash](https://blurha.sh): a short string that
    /// clients decode into a blurred placeholder, computed as Wolt's
    /// reference encoder computes it (the same string for the same pixels).
    ///
    /// Every pixel is read, so hash a small copy of a large image
    /// (`image.resized(maximumPixelSize: 64).blurHash()`). Alpha is ignored.
    ///
    /// - Parameters:
    ///   - xComponents: Detail across, 1 to 9. Default: 4.
    ///   - yComponents: Detail down, 1 to 9. Default: 3.
    public func blurHash(xComponents: Int = 4, yComponents: Int = 3) -> String {
        precondition((1...9).contains(xComponents) && (1...9).contains(yComponents), "BlurHash takes 1 to 9 components each way")
        let rgb = converted(to: .rgb8)
        let pixels = rgb.pixels
        var linear = [Float](repeating: 0, count: 256)
        for value in 0..<256 { linear[value] = BlurHash.linear(fromSRGB: value) }
        var factors: [(Float, Float, Float)] = []
        // Float sums and the reference's promotions, so the string matches it.
        for y in 0..<yComponents {
            for x in 0..<xComponents {
                let normalisation: Float = x == 0 && y == 0 ? 1 : 2
                var (r, g, b): (Float, Float, Float) = (0, 0, 0)
                for row in 0..<height {
                    let cosY = cosf(Float(Double.pi * Double(y) * Double(row) / Double(height)))
                    for column in 0..<width {
                        let basis = cosf(Float(Double.pi * Double(x) * Double(column) / Double(width))) * cosY
                        let index = row * rgb.bytesPerRow + column * 3
                        r += basis * linear[Int(pixels[index])]
                        g += basis * linear[Int(pixels[index + 1])]
                        b += basis * linear[Int(pixels[index + 2])]
                    }
                }
                let scale = normalisation / Float(width * height)
                factors.append((r * scale, g * scale, b * scale))
            }
        }
        var hash = BlurHash.base83((xComponents - 1) + (yComponents - 1) * 9, length: 1)
        let ac = factors.dropFirst()
        var maximum: Float = 1
        if ac.isEmpty {
            hash += BlurHash.base83(0, length: 1)
        } else {
            let actual = ac.map { max(abs($0.0), abs($0.1), abs($0.2)) }.max() ?? 0
            let quantised = Int(max(0, min(82, floorf(actual * 166 - 0.5))))
            maximum = Float(quantised + 1) / 166
            hash += BlurHash.base83(quantised, length: 1)
        }
        let dc = factors[0]
        hash += BlurHash.base83((BlurHash.sRGB(fromLinear: dc.0) << 16) + (BlurHash.sRGB(fromLinear: dc.1) << 8) + BlurHash.sRGB(fromLinear: dc.2), length: 4)
        for factor in ac {
            func quantised(_ value: Float) -> Int {
                Int(max(0, min(18, floorf(BlurHash.signedPower(value / maximum, 0.5) * 9 + 9.5))))
            }
            hash += BlurHash.base83(quantised(factor.0) * 19 * 19 + quantised(factor.1) * 19 + quantised(factor.2), length: 2)
        }
        return hash
    }

    /// The image's [ThumbHash](https://evanw.github.io/thumbhash/): a
    /// placeholder of about 25 bytes that also keeps the aspect ratio and
    /// alpha, computed as Evan Wallace's reference encoder computes it.
    ///
    /// The image is first scaled to fit 100x100, as the format asks.
    public func thumbHash() -> Data {
        let small = (width > 100 || height > 100) ? resized(maximumPixelSize: 100) : self
        let rgba = small.converted(to: .rgba8)
        return Data(ThumbHash.encode(width: rgba.width, height: rgba.height, rgba: rgba.pixels))
    }
}

/// The arithmetic of Wolt's BlurHash reference encoder.
enum BlurHash {
    static let characters = Array("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz#$%*+,-.:;=?@[]^_{|}~")

    static func base83(_ value: Int, length: Int) -> String {
        var result = ""
        var divisor = 1
        for _ in 1..<length { divisor *= 83 }
        for _ in 0..<length {
            result.append(characters[(value / divisor) % 83])
            divisor /= 83
        }
        return result
    }

    static func linear(fromSRGB value: Int) -> Float {
        let v = Float(value) / 255
        return Double(v) <= 0.04045 ? Float(Double(v) / 12.92) : powf(Float((Double(v) + 0.055) / 1.055), 2.4)
    }

    static func sRGB(fromLinear value: Float) -> Int {
        let v = max(0, min(1, value))
        if Double(v) <= 0.0031308 { return Int(Double(v) * 12.92 * 255 + 0.5) }
        return Int((1.055 * Double(powf(v, Float(1 / 2.4))) - 0.055) * 255 + 0.5)
    }

    static func signedPower(_ value: Float, _ exponent: Float) -> Float {
        copysignf(powf(abs(value), exponent), value)
    }
}

/// The arithmetic of Evan Wallace's ThumbHash reference encoder.
enum ThumbHash {
    /// JavaScript's `Math.round`: halves up.
    private static func round(_ value: Double) -> Int { Int((value + 0.5).rounded(.down)) }

    static func encode(width w: Int, height h: Int, rgba: [UInt8]) -> [UInt8] {
        precondition(w <= 100 && h <= 100, "ThumbHash takes images of at most 100x100")
        var average = (r: 0.0, g: 0.0, b: 0.0, a: 0.0)
        for i in 0..<w * h {
            let j = i * 4
            let alpha = Double(rgba[j + 3]) / 255
            average.r += alpha / 255 * Double(rgba[j])
            average.g += alpha / 255 * Double(rgba[j + 1])
            average.b += alpha / 255 * Double(rgba[j + 2])
            average.a += alpha
        }
        if average.a > 0 {
            average.r /= average.a
            average.g /= average.a
            average.b /= average.a
        }
        let hasAlpha = average.a < Double(w * h)
        let lLimit = Double(hasAlpha ? 5 : 7)
        let lx = max(1, round(lLimit * Double(w) / Double(max(w, h))))
        let ly = max(1, round(lLimit * Double(h) / Double(max(w, h))))
        var l: [Double] = [], p: [Double] = [], q: [Double] = [], a: [Double] = []
        for i in 0..<w * h {
            let j = i * 4
            let alpha = Double(rgba[j + 3]) / 255
            let r = average.r * (1 - alpha) + alpha / 255 * Double(rgba[j])
            let g = average.g * (1 - alpha) + alpha / 255 * Double(rgba[j + 1])
            let b = average.b * (1 - alpha) + alpha / 255 * Double(rgba[j + 2])
            l.append((r + g + b) / 3)
            p.append((r + g) / 2 - b)
            q.append(r - g)
            a.append(alpha)
        }
        func encodeChannel(_ channel: [Double], _ nx: Int, _ ny: Int) -> (dc: Double, ac: [Double], scale: Double) {
            var dc = 0.0, ac: [Double] = [], scale = 0.0
            var fx = [Double](repeating: 0, count: w)
            for cy in 0..<ny {
                var cx = 0
                while cx * ny < nx * (ny - cy) {
                    var f = 0.0
                    for x in 0..<w { fx[x] = cos(Double.pi / Double(w) * Double(cx) * (Double(x) + 0.5)) }
                    for y in 0..<h {
                        let fy = cos(Double.pi / Double(h) * Double(cy) * (Double(y) + 0.5))
                        for x in 0..<w { f += channel[x + y * w] * fx[x] * fy }
                    }
                    f /= Double(w * h)
                    if cx > 0 || cy > 0 {
                        ac.append(f)
                        scale = max(scale, abs(f))
                    } else {
                        dc = f
                    }
                    cx += 1
                }
            }
            if scale > 0 { ac = ac.map { 0.5 + 0.5 / scale * $0 } }
            return (dc, ac, scale)
        }
        let lChannel = encodeChannel(l, max(3, lx), max(3, ly))
        let pChannel = encodeChannel(p, 3, 3)
        let qChannel = encodeChannel(q, 3, 3)
        let aChannel = hasAlpha ? encodeChannel(a, 5, 5) : (dc: 1, ac: [], scale: 1)
        let isLandscape = w > h
        let header24 = round(63 * lChannel.dc) | (round(31.5 + 31.5 * pChannel.dc) << 6) | (round(31.5 + 31.5 * qChannel.dc) << 12)
            | (round(31 * lChannel.scale) << 18) | ((hasAlpha ? 1 : 0) << 23)
        let header16 = (isLandscape ? ly : lx) | (round(63 * pChannel.scale) << 3) | (round(63 * qChannel.scale) << 9)
            | ((isLandscape ? 1 : 0) << 15)
        var hash: [UInt8] = [UInt8(header24 & 255), UInt8((header24 >> 8) & 255), UInt8(header24 >> 16), UInt8(header16 & 255), UInt8(header16 >> 8)]
        if hasAlpha { hash.append(UInt8(round(15 * aChannel.dc) | (round(15 * aChannel.scale) << 4))) }
        let start = hash.count
        var index = 0
        for ac in hasAlpha ? [lChannel.ac, pChannel.ac, qChannel.ac, aChannel.ac] : [lChannel.ac, pChannel.ac, qChannel.ac] {
            for f in ac {
                let position = start + (index >> 1)
                if position == hash.count { hash.append(0) }
                hash[position] |= UInt8(round(15 * f) << ((index & 1) << 2))
                index += 1
            }
        }
        return hash
    }
}
