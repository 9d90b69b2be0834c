/// How an image is fitted to a target box by ``Image/resized(toFit:height:mode:allowsUpscaling:)``.
public enum ResizeMode: String, Sendable, Hashable, CaseIterable {
    /// Scale so the whole image fits inside the box; aspect ratio kept.
    case fit
    /// Scale so the image covers the box; aspect ratio kept, one side may overflow.
    case fill
    /// Cover the box, then cut the overflow evenly from both sides: exactly the box.
    case crop
}

extension Image {
    /// The image scaled to a box as `mode` says.
    ///
    /// - Parameters:
    ///   - width: The box width, at least 1.
    ///   - height: The box height, at least 1.
    ///   - allowsUpscaling: Whether a smaller image is enlarged; when `false`
    ///     (the default) it keeps its size, and ``ResizeMode/crop`` cuts only
    ///     what exceeds the box.
    public func resized(toFit width: Int, height: Int, mode: ResizeMode = .fit, allowsUpscaling: Bool = false) -> Image {
        precondition(width > 0 && height > 0, "the target box must not be empty")
        let scaleX = Double(width) / Double(self.width)
        let scaleY = Double(height) / Double(self.height)
        var scale = mode == .fit ? min(scaleX, scaleY) : max(scaleX, scaleY)
        if !allowsUpscaling { scale = min(scale, 1) }
        let scaledWidth = max(1, Int((Double(self.width) * scale).rounded()))
        let scaledHeight = max(1, Int((Double(self.height) * scale).rounded()))
        guard mode == .crop else { return resized(width: scaledWidth, height: scaledHeight) }
        // Crop in source coordinates first, so only the kept part is resampled.
        let keepWidth = min(self.width, max(1, Int((Double(min(width, scaledWidth)) / scale).rounded())))
        let keepHeight = min(self.height, max(1, Int((Double(min(height, scaledHeight)) / scale).rounded())))
        let cropped = cropped(x: (self.width - keepWidth) / 2, y: (self.height - keepHeight) / 2, width: keepWidth, height: keepHeight)
        return cropped.resized(width: min(width, scaledWidth), height: min(height, scaledHeight))
    }

    /// The image scaled so its longer side is at most `maximumPixelSize`;
    /// `self` when it is already that small.
    public func resized(maximumPixelSize: Int) -> Image {
        guard max(width, height) > maximumPixelSize else { return self }
        return resized(toFit: maximumPixelSize, height: maximumPixelSize, mode: .fit)
    }

    /// A rectangle of the image, clamped to its bounds.
    ///
    /// - Precondition: the rectangle overlaps the image.
    public func cropped(x: Int, y: Int, width: Int, height: Int) -> Image {
        let left = max(0, x), top = max(0, y)
        let right = min(self.width, x + width), bottom = min(self.height, y + height)
        precondition(right > left && bottom > top, "the crop rectangle lies outside the image")
        if left == 0 && top == 0 && right == self.width && bottom == self.height { return self }
        let bpp = pixelFormat.bytesPerPixel
        let rowBytes = (right - left) * bpp
        let frames = frames.map { frame in
            var pixels = [UInt8]()
            pixels.reserveCapacity(rowBytes * (bottom - top))
            for row in top..<bottom {
                let start = row * bytesPerRow + left * bpp
                pixels.append(contentsOf: frame.pixels[start..<start + rowBytes])
            }
            return ImageFrame(pixels: pixels, duration: frame.duration)
        }
        return Image(width: right - left, height: bottom - top, pixelFormat: pixelFormat, frames: frames, loopCount: loopCount)
    }

    /// The image resampled to exactly `width` x `height`.
    ///
    /// Shrinking averages the covered area of every source pixel (a box
    /// filter with exact coverage weights); enlarging interpolates linearly.
    /// Colours are weighted by alpha, so transparent pixels do not bleed.
    /// Every frame is resampled.
    public func resized(width: Int, height: Int) -> Image {
        precondition(width > 0 && height > 0, "the target size must not be empty")
        if width == self.width && height == self.height { return self }
        let horizontal = Resampler.Contributions(from: self.width, to: width)
        let vertical = Resampler.Contributions(from: self.height, to: height)
        let frames = frames.map { frame in
            ImageFrame(
                pixels: Resampler.resample(
                    frame.pixels, width: self.width, height: self.height, bytesPerRow: bytesPerRow,
                    format: pixelFormat, horizontal: horizontal, vertical: vertical
                ),
                duration: frame.duration
            )
        }
        return Image(width: width, height: height, pixelFormat: pixelFormat, frames: frames, loopCount: loopCount)
    }
}

/// A separable resampler: rows first into a float buffer, then columns.
enum Resampler {
    /// For each output index, the first input index and `taps` weights
    /// (summing to 1). Every output has the same number of taps, padded with
    /// zero weights, so the inner loops have a fixed length.
    struct Contributions {
        /// The first input index of each output; `start + taps <= input`.
        var starts: [Int]
        /// `taps` weights per output, flattened.
        var weights: [Float]
        /// Inputs per output.
        var taps: Int

        init(from input: Int, to output: Int) {
            let scale = Double(input) / Double(output)
            // The widest span: a box of `scale` inputs can touch ceil(scale) + 1.
            let taps = min(input, scale >= 1 ? Int(scale.rounded(.up)) + 1 : 2)
            var starts = [Int](repeating: 0, count: output)
            var weights = [Float](repeating: 0, count: output * taps)
            var dense = [Double](repeating: 0, count: taps)
            for index in 0..<output {
                for k in 0..<taps { dense[k] = 0 }
                var first: Int
                if scale >= 1 {
                    // Box filter: exact coverage of [index * scale, (index + 1) * scale).
                    let lower = Double(index) * scale, upper = lower + scale
                    first = min(Int(lower), input - taps)
                    var total = 0.0
                    var source = Int(lower)
                    while Double(source) < upper && source < input {
                        let overlap = min(upper, Double(source + 1)) - max(lower, Double(source))
                        if overlap > 1e-9 {
                            dense[source - first] += overlap
                            total += overlap
                        }
                        source += 1
                    }
                    for k in 0..<taps { dense[k] /= total }
                } else {
                    // Linear interpolation between the two nearest source centres.
                    let centre = (Double(index) + 0.5) * scale - 0.5
                    let left = Int(centre.rounded(.down))
                    let fraction = centre - Double(left)
                    first = min(max(left, 0), input - taps)
                    dense[min(max(left, 0), input - 1) - first] += 1 - fraction
                    dense[min(max(left + 1, 0), input - 1) - first] += fraction
                }
                starts[index] = first
                for k in 0..<taps { weights[index * taps + k] = Float(dense[k]) }
            }
            self.starts = starts
            self.weights = weights
            self.taps = taps
        }
    }

    static func resample(
        _ pixels: [UInt8], width: Int, height: Int, bytesPerRow: Int, format: PixelFormat,
        horizontal: Contributions, vertical: Contributions
    ) -> [UInt8] {
        let channels = format.bytesPerPixel
        let alpha = format.hasAlpha ? channels - 1 : -1
        let outWidth = horizontal.starts.count, outHeight = vertical.starts.count
        let rowFloats = outWidth * channels
        let taps = horizontal.taps
        // Pass 1: every input row to outWidth columns, premultiplied by alpha.
        // RGB and RGBA (nearly every image) have loops of their own with the
        // sums in registers; other formats take the general loop.
        var middle = [Float](repeating: 0, count: rowFloats * height)
        pixels.withUnsafeBufferPointer { input in
            middle.withUnsafeMutableBufferPointer { mid in
                horizontal.weights.withUnsafeBufferPointer { weights in
                    horizontal.starts.withUnsafeBufferPointer { starts in
                        for y in 0..<height {
                            let row = y * bytesPerRow
                            var out = y * rowFloats
                            var weight = 0
                            switch format {
                            case .rgb8:
                                for x in 0..<outWidth {
                                    var source = row + starts[x] * 3
                                    var (r, g, b): (Float, Float, Float) = (0, 0, 0)
                                    for _ in 0..<taps {
                                        let w = weights[weight]
                                        r += Float(input[source]) * w
                                        g += Float(input[source + 1]) * w
                                        b += Float(input[source + 2]) * w
                                        source += 3
                                        weight += 1
                                    }
                                    mid[out] = r; mid[out + 1] = g; mid[out + 2] = b
                                    out += 3
                                }
                            case .rgba8:
                                for x in 0..<outWidth {
                                    var source = row + starts[x] * 4
                                    var (r, g, b, a): (Float, Float, Float, Float) = (0, 0, 0, 0)
                                    for _ in 0..<taps {
                                        let weighted = Float(input[source + 3]) * weights[weight]
                                        r += Float(input[source]) * weighted
                                        g += Float(input[source + 1]) * weighted
                                        b += Float(input[source + 2]) * weighted
                                        a += weighted
                                        source += 4
                                        weight += 1
                                    }
                                    mid[out] = r; mid[out + 1] = g; mid[out + 2] = b; mid[out + 3] = a
                                    out += 4
                                }
                            default:
                                for x in 0..<outWidth {
                                    var source = row + starts[x] * channels
                                    for _ in 0..<taps {
                                        let w = weights[weight]
                                        if alpha >= 0 {
                                            let a = Float(input[source + alpha]) * w
                                            for c in 0..<alpha { mid[out + c] += Float(input[source + c]) * a }
                                            mid[out + alpha] += a
                                        } else {
                                            for c in 0..<channels { mid[out + c] += Float(input[source + c]) * w }
                                        }
                                        source += channels
                                        weight += 1
                                    }
                                    out += channels
                                }
                            }
                        }
                    }
                }
            }
        }
        // Pass 2: columns, then back to bytes (un-premultiplied).
        let rows = vertical.taps
        return [UInt8](unsafeUninitializedCapacity: rowFloats * outHeight) { out, count in
            middle.withUnsafeBufferPointer { mid in
                vertical.weights.withUnsafeBufferPointer { weights in
                    var sumStorage = [Float](repeating: 0, count: rowFloats)
                    sumStorage.withUnsafeMutableBufferPointer { sums in
                        for y in 0..<outHeight {
                            for i in 0..<rowFloats { sums[i] = 0 }
                            let start = vertical.starts[y]
                            for k in 0..<rows {
                                let weight = weights[y * rows + k]
                                if weight == 0 { continue }
                                let source = mid.baseAddress! + (start + k) * rowFloats
                                for i in 0..<rowFloats { sums[i] += source[i] * weight }
                            }
                            let outRow = out.baseAddress! + y * rowFloats
                            if alpha < 0 {
                                for i in 0..<rowFloats { outRow[i] = clampToByte(sums[i]) }
                                continue
                            }
                            for x in 0..<outWidth {
                                let base = x * channels
                                let a = sums[base + alpha]
                                for c in 0..<alpha {
                                    outRow[base + c] = a > 0 ? clampToByte(sums[base + c] / a) : 0
                                }
                                outRow[base + alpha] = clampToByte(a)
                            }
                        }
                    }
                }
            }
            count = rowFloats * outHeight
        }
    }

    @inline(__always)
    static func clampToByte(_ value: Float) -> UInt8 {
        UInt8(min(255, max(0, value + 0.5)))
    }
}
