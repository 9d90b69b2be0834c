import Foundation

/// How a smart crop chooses the part it keeps.
public enum SmartCrop: String, Sendable, Hashable, CaseIterable {
    /// The window whose luminance has the most entropy (the most detail),
    /// tried at nine positions along each side that is cut; ties go to the
    /// centre. (imgproxy's `smart` gravity.)
    case entropy
    /// The window that holds the most of what draws the eye, in the spirit
    /// of libvips' `attention`: edges (a Sobel filter on CIE L*), skin
    /// tones (a* from 3 to 22 and b* from 4 to 31, L* at least 15) and
    /// strong colour (chroma above 60), scored on a copy at most 256
    /// pixels across, every position tried; ties go to the centre.
    case attention
}

extension Image {
    /// Where a smart crop of `width` x `height` starts, from the first frame.
    package func smartCropOrigin(width: Int, height: Int, strategy: SmartCrop) -> (x: Int, y: Int) {
        switch strategy {
        case .entropy: firstFrame.entropyCropOrigin(width: width, height: height)
        case .attention: firstFrame.attentionCropOrigin(width: width, height: height)
        }
    }

    // MARK: Entropy

    private func entropyCropOrigin(width: Int, height: Int) -> (x: Int, y: Int) {
        let spareX = Swift.max(0, self.width - width)
        let spareY = Swift.max(0, self.height - height)
        let luma = converted(to: .gray8).pixels
        let positions = 9
        func candidates(_ spare: Int) -> [Int] {
            guard spare > 0 else { return [0] }
            return (0..<positions).map { spare * $0 / (positions - 1) }
        }
        var best = (x: spareX / 2, y: spareY / 2)
        var bestScore = -1.0
        var bestDistance = Int.max
        for y in candidates(spareY) {
            for x in candidates(spareX) {
                let score = Self.entropy(luma, imageWidth: self.width, x: x, y: y, width: width, height: height)
                let distance = abs(x - spareX / 2) + abs(y - spareY / 2)
                if score > bestScore + 1e-9 || (abs(score - bestScore) <= 1e-9 && distance < bestDistance) {
                    (best, bestScore, bestDistance) = ((x, y), score, distance)
                }
            }
        }
        return best
    }

    /// The Shannon entropy of a window's luminance, from at most about 16,000 samples.
    private static func entropy(_ luma: [UInt8], imageWidth: Int, x: Int, y: Int, width: Int, height: Int) -> Double {
        let step = Swift.max(1, Int((Double(width * height) / 16_384).squareRoot()))
        var histogram = [Int](repeating: 0, count: 256)
        var count = 0
        var row = y
        while row < y + height {
            var column = x
            while column < x + width {
                histogram[Int(luma[row * imageWidth + column])] += 1
                count += 1
                column += step
            }
            row += step
        }
        guard count > 0 else { return 0 }
        var result = 0.0
        for bin in histogram where bin > 0 {
            let p = Double(bin) / Double(count)
            result -= p * log2(p)
        }
        return result
    }

    // MARK: Attention

    /// The longest side of the copy the attention map is made on.
    static let attentionMapSide = 256

    private func attentionCropOrigin(width: Int, height: Int) -> (x: Int, y: Int) {
        let spareX = Swift.max(0, self.width - width), spareY = Swift.max(0, self.height - height)
        guard spareX > 0 || spareY > 0 else { return (0, 0) }
        // The map, on a small copy (blocks of `factor` x `factor` pixels averaged):
        // the precision of the placement is a pixel of it.
        let factor = (Swift.max(self.width, self.height) + Self.attentionMapSide - 1) / Self.attentionMapSide
        let small = factor > 1 ? converted(to: .rgb8).blockAveraged(factor) : converted(to: .rgb8)
        let map = Self.attentionMap(small)
        let (mapWidth, mapHeight) = (small.width, small.height)
        let sx = Double(mapWidth) / Double(self.width), sy = Double(mapHeight) / Double(self.height)
        let windowWidth = Swift.min(mapWidth, Swift.max(1, Int((Double(width) * sx).rounded())))
        let windowHeight = Swift.min(mapHeight, Swift.max(1, Int((Double(height) * sy).rounded())))
        // A summed-area table: any window's sum in four reads.
        var table = [Double](repeating: 0, count: (mapWidth + 1) * (mapHeight + 1))
        for y in 0..<mapHeight {
            var row = 0.0
            for x in 0..<mapWidth {
                row += map[y * mapWidth + x]
                table[(y + 1) * (mapWidth + 1) + x + 1] = table[y * (mapWidth + 1) + x + 1] + row
            }
        }
        func sum(_ x: Int, _ y: Int) -> Double {
            let w = mapWidth + 1
            return table[(y + windowHeight) * w + x + windowWidth] - table[y * w + x + windowWidth]
                - table[(y + windowHeight) * w + x] + table[y * w + x]
        }
        // Every position of the window; the best sum, the nearest the centre among equals.
        let centreX = Double(mapWidth - windowWidth) / 2, centreY = Double(mapHeight - windowHeight) / 2
        var best = (x: Int(centreX), y: Int(centreY))
        var bestScore = sum(best.x, best.y)
        var bestDistance = abs(Double(best.x) - centreX) + abs(Double(best.y) - centreY)
        let tolerance = Swift.max(1e-9, bestScore * 1e-9)
        for y in 0...(mapHeight - windowHeight) {
            for x in 0...(mapWidth - windowWidth) {
                let score = sum(x, y)
                let distance = abs(Double(x) - centreX) + abs(Double(y) - centreY)
                if score > bestScore + tolerance || (abs(score - bestScore) <= tolerance && distance < bestDistance) {
                    (best, bestScore, bestDistance) = ((x, y), score, distance)
                }
            }
        }
        // Back to the image: the window's place, kept inside.
        let x = Swift.max(0, Swift.min(spareX, Int((Double(best.x) / sx).rounded())))
        let y = Swift.max(0, Swift.min(spareY, Int((Double(best.y) / sy).rounded())))
        return (x, y)
    }

    /// The RGB image shrunk by a whole `factor`: each pixel the mean of a
    /// `factor` x `factor` block (smaller at the right and bottom edges).
    private func blockAveraged(_ factor: Int) -> Image {
        let (outWidth, outHeight) = ((width + factor - 1) / factor, (height + factor - 1) / factor)
        let rowBytes = width * 3
        // The block's rows summed byte by byte first (a loop the vector unit runs), then its columns.
        let columnSums = UnsafeMutablePointer<UInt32>.allocate(capacity: rowBytes)
        defer { columnSums.deallocate() }
        let out = [UInt8](pixelCapacity: outWidth * outHeight * 3) { out, count in
            pixels.withUnsafeBufferPointer { input in
                let source = input.baseAddress!
                for outRow in 0..<outHeight {
                    columnSums.initialize(repeating: 0, count: rowBytes)
                    let top = outRow * factor, bottom = Swift.min(height, top + factor)
                    for row in top..<bottom {
                        let line = source + row * bytesPerRow
                        for index in 0..<rowBytes { columnSums[index] &+= UInt32(line[index]) }
                    }
                    for column in 0..<outWidth {
                        let first = column * factor, last = Swift.min(width, first + factor)
                        var (r, g, b): (UInt32, UInt32, UInt32) = (0, 0, 0)
                        for x in first..<last {
                            r &+= columnSums[x * 3]; g &+= columnSums[x * 3 + 1]; b &+= columnSums[x * 3 + 2]
                        }
                        let cells = UInt32((bottom - top) * (last - first)), to = (outRow * outWidth + column) * 3
                        out[to] = UInt8((r + cells / 2) / cells)
                        out[to + 1] = UInt8((g + cells / 2) / cells)
                        out[to + 2] = UInt8((b + cells / 2) / cells)
                    }
                }
            }
            count = outWidth * outHeight * 3
        }
        return Image(width: outWidth, height: outHeight, pixelFormat: .rgb8, pixels: out)
    }

    /// How much each pixel of an RGB image draws the eye: its Sobel edge
    /// strength on L*, plus 255 for a skin tone and 255 for strong colour.
    private static func attentionMap(_ image: Image) -> [Double] {
        let (width, height) = (image.width, image.height)
        let pixels = image.pixels
        var lightness = [Double](repeating: 0, count: width * height)
        var map = [Double](repeating: 0, count: width * height)
        for index in 0..<width * height {
            let lab = Self.lab(pixels[index * 3], pixels[index * 3 + 1], pixels[index * 3 + 2])
            lightness[index] = lab.l
            let skin = lab.l >= 15 && (3...22).contains(lab.a) && (4...31).contains(lab.b)
            let saturated = (lab.a * lab.a + lab.b * lab.b).squareRoot() > 60
            map[index] = (skin ? 255 : 0) + (saturated ? 255 : 0)
        }
        func l(_ x: Int, _ y: Int) -> Double {
            lightness[Swift.min(Swift.max(y, 0), height - 1) * width + Swift.min(Swift.max(x, 0), width - 1)]
        }
        for y in 0..<height {
            for x in 0..<width {
                let gx = (l(x + 1, y - 1) + 2 * l(x + 1, y) + l(x + 1, y + 1)) - (l(x - 1, y - 1) + 2 * l(x - 1, y) + l(x - 1, y + 1))
                let gy = (l(x - 1, y + 1) + 2 * l(x, y + 1) + l(x + 1, y + 1)) - (l(x - 1, y - 1) + 2 * l(x, y - 1) + l(x + 1, y - 1))
                map[y * width + x] += abs(gx) + abs(gy)
            }
        }
        return map
    }

    /// CIE L*a*b* (D65) of an sRGB colour.
    private static func lab(_ red: UInt8, _ green: UInt8, _ blue: UInt8) -> (l: Double, a: Double, b: Double) {
        let r = Double(LinearLight.decoded[Int(red)]) / 255
        let g = Double(LinearLight.decoded[Int(green)]) / 255
        let b = Double(LinearLight.decoded[Int(blue)]) / 255
        // sRGB to XYZ, relative to D65's white (0.95047, 1, 1.08883).
        let x = (0.4124564 * r + 0.3575761 * g + 0.1804375 * b) / 0.95047
        let y = 0.2126729 * r + 0.7151522 * g + 0.0721750 * b
        let z = (0.0193339 * r + 0.1191920 * g + 0.9503041 * b) / 1.08883
        func f(_ t: Double) -> Double { t > 216.0 / 24389 ? cbrt(t) : (24389.0 / 27 * t + 16) / 116 }
        let (fx, fy, fz) = (f(x), f(y), f(z))
        return (116 * fy - 16, 500 * (fx - fy), 200 * (fy - fz))
    }
}
