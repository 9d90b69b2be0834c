@testable import Imago
import ImagoTesting
import Testing

/// The row-at-a-time resampler against a two-pass reference: the resampler
/// Imago used before rows were streamed (every row resampled horizontally
/// into a full float buffer, then every column; when the height shrinks,
/// every column first, then every row, as ``ResamplingPlan/verticalFirst``
/// says). The two must agree bit for bit, so a thumbnail does not depend on
/// whether its rows were streamed.
@Suite struct RowResamplerTests {
    static let sizes: [(from: (Int, Int), to: (Int, Int))] = [
        ((97, 61), (13, 7)), ((97, 61), (1, 1)), ((1, 40), (1, 3)), ((40, 1), (7, 1)),
        ((300, 200), (256, 171)), ((257, 255), (256, 256)), ((640, 480), (100, 75)),
        ((50, 30), (50, 29)), ((50, 30), (49, 30)), ((3, 3), (2, 2)),
        ((20, 10), (45, 23)), ((7, 5), (16, 16)), ((2, 1), (4, 1)),   // enlarging
        ((40, 10), (20, 30)), ((10, 40), (30, 20)),                   // one axis each way
    ]

    @Test(arguments: PixelFormat.allCases)
    func matchesTheTwoPassResamplerBitForBit(format: PixelFormat) {
        for (from, to) in Self.sizes {
            let count = from.0 * from.1 * format.bytesPerPixel
            let pixels = (0..<count).map { Self.scrambled($0 &+ 1_000 * format.bytesPerPixel) }
            let image = Image(width: from.0, height: from.1, pixelFormat: format, pixels: pixels)
            let resized = image.resized(width: to.0, height: to.1)
            let expected = twoPass(image, width: to.0, height: to.1)
            // Bytes, not ImageComparison: bit for bit in every pixel format, the
            // colour under transparent pixels included. On a mismatch, name the
            // first differing byte rather than print both images.
            let first = zip(resized.pixels, expected).enumerated().first { $0.element.0 != $0.element.1 }?.offset
            #expect(resized.pixels.count == expected.count && first == nil,
                    "\(format) \(from) -> \(to): byte \(first.map(String.init) ?? "count") differs")
        }
    }

    @Test func paddedRowsAreReadUpToTheirWidthOnly() {
        // A stride of 5 bytes for a 1-pixel RGB row: the padding must not leak in.
        let padded = Image(width: 1, height: 4, pixelFormat: .rgb8, bytesPerRow: 5, pixels: [
            10, 20, 30, 255, 255, 10, 20, 30, 255, 255, 50, 60, 70, 255, 255, 50, 60, 70, 255, 255,
        ])
        #expect(padded.resized(width: 1, height: 2).pixels == [10, 20, 30, 50, 60, 70])
    }

    @Test func rowsCanBeFedOneAtATime() {
        let image = TestImages.gradient(width: 123, height: 77)
        let plan = ResamplingPlan(sourceWidth: 123, sourceHeight: 77, format: image.pixelFormat, width: 31, height: 20)
        let streamed = image.frames[0].pixels.withUnsafeBufferPointer { pixels in
            plan.makePixels { resampler in
                var completeEarly = false
                for row in 0..<77 {
                    completeEarly = completeEarly || resampler.isComplete
                    resampler.append(row: pixels.baseAddress! + row * image.bytesPerRow)
                }
                let complete = resampler.isComplete
                #expect(!completeEarly && complete)
            }
        }
        #expect(streamed == image.resized(width: 31, height: 20).pixels)
    }

    /// Random-looking but repeatable bytes, alpha included: SplitMix64's
    /// finaliser applied to the index.
    private static func scrambled(_ index: Int) -> UInt8 {
        var z = UInt64(index) &* 0x9E37_79B9_7F4A_7C15
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return UInt8(truncatingIfNeeded: z ^ (z >> 31))
    }

    @Test func theVerticalPassComesFirstOnlyWhenTheHeightShrinks() {
        let plan = { (height: Int, linearLight: Bool) in
            ResamplingPlan(sourceWidth: 40, sourceHeight: 30, format: .rgb8, width: 20, height: height, linearLight: linearLight)
        }
        #expect(plan(15, false).verticalFirst)
        #expect(!plan(30, false).verticalFirst)
        #expect(!plan(45, false).verticalFirst)
        #expect(!plan(15, true).verticalFirst)
    }

    /// The reference: both passes over whole buffers, in the order the
    /// streamed resampler must reproduce.
    private func twoPass(_ image: Image, width: Int, height: Int) -> [UInt8] {
        let horizontal = ResamplingContributions(from: image.width, to: width)
        let vertical = ResamplingContributions(from: image.height, to: height)
        let channels = image.pixelFormat.bytesPerPixel
        let alpha = image.pixelFormat.hasAlpha ? channels - 1 : -1
        let rowFloats = width * channels
        let input = image.frames[0].pixels
        if height < image.height {
            // Columns first: each output row's sums at the source's width, then across.
            let sourceFloats = image.width * channels
            var output = [UInt8]()
            for y in 0..<height {
                var sums = [Float](repeating: 0, count: sourceFloats)
                for k in 0..<vertical.taps {
                    let w = vertical.weights[y * vertical.taps + k]
                    if w == 0 { continue }
                    let row = (vertical.starts[y] + k) * image.bytesPerRow
                    for x in 0..<image.width {
                        let source = row + x * channels, out = x * channels
                        if alpha >= 0 {
                            let a = Float(input[source + alpha]) * w
                            for c in 0..<alpha { sums[out + c] += Float(input[source + c]) * a }
                            sums[out + alpha] += a
                        } else {
                            for c in 0..<channels { sums[out + c] += Float(input[source + c]) * w }
                        }
                    }
                }
                var across = [Float](repeating: 0, count: rowFloats)
                for x in 0..<width {
                    for k in 0..<horizontal.taps {
                        let w = horizontal.weights[x * horizontal.taps + k]
                        let source = (horizontal.starts[x] + k) * channels
                        for c in 0..<channels { across[x * channels + c] += sums[source + c] * w }
                    }
                }
                output += bytes(of: across, width: width, channels: channels, alpha: alpha)
            }
            return output
        }
        var middle = [Float](repeating: 0, count: rowFloats * image.height)
        for y in 0..<image.height {
            for x in 0..<width {
                for k in 0..<horizontal.taps {
                    let w = horizontal.weights[x * horizontal.taps + k]
                    let source = y * image.bytesPerRow + (horizontal.starts[x] + k) * channels
                    let out = y * rowFloats + x * channels
                    if alpha >= 0 {
                        let a = Float(input[source + alpha]) * w
                        for c in 0..<alpha { middle[out + c] += Float(input[source + c]) * a }
                        middle[out + alpha] += a
                    } else {
                        for c in 0..<channels { middle[out + c] += Float(input[source + c]) * w }
                    }
                }
            }
        }
        var output = [UInt8]()
        for y in 0..<height {
            var sums = [Float](repeating: 0, count: rowFloats)
            for k in 0..<vertical.taps {
                let weight = vertical.weights[y * vertical.taps + k]
                if weight == 0 { continue }
                for i in 0..<rowFloats { sums[i] += middle[(vertical.starts[y] + k) * rowFloats + i] * weight }
            }
            output += bytes(of: sums, width: width, channels: channels, alpha: alpha)
        }
        return output
    }

    /// A row of premultiplied sums to bytes, as the resampler writes them.
    private func bytes(of sums: [Float], width: Int, channels: Int, alpha: Int) -> [UInt8] {
        var output = [UInt8]()
        for x in 0..<width {
            let base = x * channels
            for c in 0..<channels {
                if alpha < 0 || c == alpha {
                    output.append(RowResampler.clampToByte(sums[base + c]))
                } else {
                    let a = sums[base + alpha]
                    output.append(a > 0 ? RowResampler.clampToByte(sums[base + c] / a) : 0)
                }
            }
        }
        return output
    }
}
