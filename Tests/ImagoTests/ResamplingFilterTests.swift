import Foundation
import Imago
import ImagoTesting
import Testing

/// The Lanczos3 and Mitchell filters, against a direct
/// double-precision evaluation of the same separable convolution.
@Suite struct ResamplingFilterTests {
    /// A deterministic photo-like RGB image: smooth fields, an edge and noise.
    static func photo(width: Int, height: Int) -> Image {
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        var pixels: [UInt8] = []
        pixels.reserveCapacity(width * height * 3)
        for y in 0..<height {
            for x in 0..<width {
                state = state &* 6364136223846793005 &+ 1442695040888963407
                let noise = Int(state >> 59) - 16
                let edge = x > width / 3 ? 90 : 0
                let r = 60 + (x * 150) / width + noise + edge
                let g = 40 + (y * 170) / height - noise
                let b = 128 + Int(60 * sin(Double(x) / 5) * cos(Double(y) / 7)) + noise / 2
                pixels += [r, g, b].map { UInt8(clamping: $0) }
            }
        }
        return Image(width: width, height: height, pixelFormat: .rgb8, pixels: pixels)
    }

    /// The filter's weight at `x`, written out from its definition.
    static func kernel(_ filter: ResamplingFilter, _ x: Double) -> Double {
        let x = abs(x)
        switch filter {
        case .lanczos3:
            if x == 0 { return 1 }
            if x >= 3 { return 0 }
            return sin(.pi * x) / (.pi * x) * sin(.pi * x / 3) / (.pi * x / 3)
        case .mitchell:
            let (b, c) = (1.0 / 3, 1.0 / 3)
            if x < 1 { return ((12 - 9 * b - 6 * c) * pow(x, 3) + (-18 + 12 * b + 6 * c) * x * x + (6 - 2 * b)) / 6 }
            if x < 2 { return ((-b - 6 * c) * pow(x, 3) + (6 * b + 30 * c) * x * x + (-12 * b - 48 * c) * x + (8 * b + 24 * c)) / 6 }
            return 0
        case .area:
            return 0
        }
    }

    /// One axis resampled in doubles: weights from the kernel stretched by
    /// the shrink factor, cut at the edges and normalised.
    static func reference(_ values: [Double], to output: Int, filter: ResamplingFilter) -> [Double] {
        let input = values.count
        let scale = Double(input) / Double(output), stretch = max(scale, 1)
        return (0..<output).map { index in
            let centre = (Double(index) + 0.5) * scale
            var sum = 0.0, total = 0.0
            for source in 0..<input {
                let weight = kernel(filter, (Double(source) + 0.5 - centre) / stretch)
                sum += values[source] * weight
                total += weight
            }
            return sum / total
        }
    }

    /// The image resampled in doubles, rows then columns, per channel, each
    /// value passed through `transform` first.
    static func reference(_ image: Image, width: Int, height: Int, filter: ResamplingFilter,
                          transform: (Double) -> Double = { $0 }) -> [Double] {
        let channels = image.pixelFormat.bytesPerPixel
        var rows: [[Double]] = []
        for y in 0..<image.height {
            var row = [Double](repeating: 0, count: width * channels)
            for c in 0..<channels {
                let line = (0..<image.width).map { transform(Double(image.pixels[y * image.bytesPerRow + $0 * channels + c])) }
                for (x, value) in reference(line, to: width, filter: filter).enumerated() { row[x * channels + c] = value }
            }
            rows.append(row)
        }
        var out = [Double](repeating: 0, count: width * height * channels)
        for column in 0..<(width * channels) {
            for (y, value) in reference(rows.map { $0[column] }, to: height, filter: filter).enumerated() {
                out[y * width * channels + column] = value
            }
        }
        return out
    }

    @Test(arguments: [ResamplingFilter.lanczos3, .mitchell], [2, 3, 5, 8, 16])
    func shrinkingMatchesTheDoublePrecisionConvolution(filter: ResamplingFilter, factor: Int) {
        let image = Self.photo(width: 96, height: 80)
        let width = 96 / factor, height = 80 / factor
        let resized = image.resized(width: width, height: height, filter: filter)
        let expected = Self.reference(image, width: width, height: height, filter: filter)
        var worst = 0.0
        for (index, value) in resized.pixels.enumerated() {
            let clamped = min(max(expected[index], 0), 255)
            worst = max(worst, abs(Double(value) - clamped))
        }
        // Float sums, then rounding to bytes: never more than half a level plus a little.
        #expect(worst <= 0.52, "\(filter) 1/\(factor): \(worst)")
    }

    @Test(arguments: ResamplingFilter.allCases)
    func aFlatImageStaysFlatAndWeightsSumToOne(filter: ResamplingFilter) {
        let flat = Image(width: 37, height: 29, pixelFormat: .rgba8, pixels: [UInt8](repeating: 0, count: 37 * 29 * 4).enumerated().map {
            [200, 100, 50, 180][$0.offset % 4]
        })
        for (width, height) in [(5, 4), (12, 9), (36, 28), (50, 40)] {
            let resized = flat.resized(width: width, height: height, filter: filter)
            let colours: Set<[UInt8]> = Set(stride(from: 0, to: resized.pixels.count, by: 4).map { Array(resized.pixels[$0..<$0 + 4]) })
            #expect(colours == [[200, 100, 50, 180]], "\(filter) \(width)x\(height)")
        }
    }

    @Test(arguments: [ResamplingFilter.lanczos3, .mitchell])
    func transparentPixelsDoNotBleedTheirColour(filter: ResamplingFilter) {
        // Left half opaque blue; right half transparent red (the red must never show).
        let width = 40, height = 8
        var pixels: [UInt8] = []
        for _ in 0..<height { for x in 0..<width { pixels += x < width / 2 ? [0, 0, 255, 255] : [255, 0, 0, 0] } }
        let resized = Image(width: width, height: height, pixelFormat: .rgba8, pixels: pixels).resized(width: 10, height: 2, filter: filter)
        for x in 0..<10 {
            let p = Array(resized.pixels[x * 4..<x * 4 + 4])
            if p[3] > 0 { #expect(p[0] == 0 && p[2] >= 250, "\(filter) x \(x): \(p)") }
        }
    }

    @Test func lanczosIsSharperThanAreaAveraging() {
        // A one-pixel checkerboard band next to flat gray: Lanczos keeps more contrast at 2x.
        let image = Self.photo(width: 64, height: 64)
        let area = image.resized(width: 32, height: 32, filter: .area)
        let lanczos = image.resized(width: 32, height: 32, filter: .lanczos3)
        let reference = Self.reference(image, width: 32, height: 32, filter: .lanczos3)
        func error(_ pixels: [UInt8]) -> Double { zip(pixels, reference).map { abs(Double($0) - $1) }.reduce(0, +) }
        #expect(error(lanczos.pixels) * 4 < error(area.pixels))
        #expect(area != lanczos)
    }

    @Test(arguments: ResamplingFilter.allCases)
    func linearLightAveragesIntensitiesNotValues(filter: ResamplingFilter) {
        // Black and white columns: their mean light is half, which sRGB encodes as 188, not 128.
        let stripes = Image(width: 64, height: 4, pixelFormat: .rgb8, pixels: (0..<64 * 4).flatMap { index in
            Array(repeating: UInt8(index % 2 == 0 ? 0 : 255), count: 3)
        })
        let linear = stripes.resized(width: 8, height: 1, filter: filter, linearLight: true)
        let stored = stripes.resized(width: 8, height: 1, filter: filter)
        // Area averaging covers whole stripe pairs; the kernels' lobes leave a few levels either way.
        let slack = filter == .area ? 0 : 6   // the first and last outputs, where the kernel is cut: 122 and 133 in stored values
        #expect(linear.pixels.allSatisfy { (187 - slack...188 + slack).contains(Int($0)) }, "\(filter): \(linear.pixels)")
        #expect(stored.pixels.allSatisfy { (127 - slack...128 + slack).contains(Int($0)) }, "\(filter): \(stored.pixels)")
        // Opaque or not, alpha is weighted as stored, and a flat colour stays itself.
        let flat = Image(width: 9, height: 9, pixelFormat: .rgba8, pixels: (0..<81).flatMap { _ in [10, 120, 240, 200] as [UInt8] })
        #expect(flat.resized(width: 3, height: 3, filter: filter, linearLight: true).pixels == (0..<9).flatMap { _ in [10, 120, 240, 200] as [UInt8] })
    }

    @Test func linearLightMatchesTheDoublePrecisionComputation() {
        let image = Self.photo(width: 60, height: 40)
        func decode(_ v: Double) -> Double { let x = v / 255; return 255 * (x <= 0.04045 ? x / 12.92 : pow((x + 0.055) / 1.055, 2.4)) }
        func encode(_ v: Double) -> Double { let x = min(max(v / 255, 0), 1); return 255 * (x <= 0.0031308 ? x * 12.92 : 1.055 * pow(x, 1 / 2.4) - 0.055) }
        let expected = Self.reference(image, width: 15, height: 10, filter: .lanczos3, transform: decode).map(encode)
        let resized = image.resized(width: 15, height: 10, filter: .lanczos3, linearLight: true)
        let worst = zip(resized.pixels, expected).map { abs(Double($0) - min(max($1, 0), 255)) }.max() ?? 0
        #expect(worst <= 0.55, "\(worst)")
    }

    @Test func thumbnailsCarryTheFilterAndNameIt() {
        let thumbnail = Thumbnail(maximumPixelSize: 64, filter: .lanczos3)
        #expect(thumbnail.filter == .lanczos3 && thumbnail.description == "64x64,fit,lanczos3")
        #expect(Thumbnail(maximumPixelSize: 64).description == "64x64,fit")
        #expect(Thumbnail(maximumPixelSize: 64, filter: .mitchell, linearLight: true).description == "64x64,fit,mitchell,linear")
        #expect(thumbnail.forStoredPixels(turnedBy: .right).filter == .lanczos3)
    }
}
