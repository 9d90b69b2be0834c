/// The weights of one axis of a resampling: for each output index, the
/// first input index and `taps` weights (summing to 1).
///
/// Every output has the same number of taps, padded with zero weights, so
/// the inner loops have a fixed length. With ``ResamplingFilter/area``,
/// shrinking uses a box filter with the exact coverage of each input and
/// enlarging interpolates linearly between the two nearest input centres.
/// The other filters are sampled at each input's centre, stretched by the
/// shrink factor, cut at the image's edges and normalised (as Pillow does).
struct ResamplingContributions: Sendable {
    /// The first input index of each output; `start + taps <= input`.
    let starts: [Int]
    /// `taps` weights per output, flattened.
    let weights: [Float]
    /// Inputs per output.
    let taps: Int

    init(from input: Int, to output: Int, filter: ResamplingFilter = .area) {
        self = filter == .area ? Self.area(from: input, to: output) : Self.convolution(filter, from: input, to: output)
    }

    private init(starts: [Int], weights: [Float], taps: Int) {
        self.starts = starts
        self.weights = weights
        self.taps = taps
    }

    /// Area averaging (shrinking) or linear interpolation (enlarging).
    private static func area(from input: Int, to output: Int) -> ResamplingContributions {
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
        return ResamplingContributions(starts: starts, weights: weights, taps: taps)
    }

    /// The weights of a convolution `kernel` (Lanczos, Mitchell), computed
    /// in double precision and stored as floats.
    private static func convolution(_ kernel: ResamplingFilter, from input: Int, to output: Int) -> ResamplingContributions {
        let scale = Double(input) / Double(output)
        let stretch = max(scale, 1)
        let support = kernel.support * stretch
        let taps = min(input, Int(support.rounded(.up)) * 2 + 1)
        var starts = [Int](repeating: 0, count: output)
        var weights = [Float](repeating: 0, count: output * taps)
        var dense = [Double](repeating: 0, count: taps)
        for index in 0..<output {
            for k in 0..<taps { dense[k] = 0 }
            let centre = (Double(index) + 0.5) * scale
            let lower = max(Int(centre - support + 0.5), 0)
            let upper = min(Int(centre + support + 0.5), input)
            let first = min(lower, input - taps)
            var total = 0.0
            for source in lower..<max(upper, lower + 1) where source < input {
                let weight = kernel.weight((Double(source) - centre + 0.5) / stretch)
                dense[source - first] += weight
                total += weight
            }
            if total != 0 { for k in 0..<taps { dense[k] /= total } }
            starts[index] = first
            for k in 0..<taps { weights[index * taps + k] = Float(dense[k]) }
        }
        return ResamplingContributions(starts: starts, weights: weights, taps: taps)
    }

    /// The first and last input index with a non-zero weight, for each output.
    ///
    /// Both are non-decreasing in the output index, for every filter.
    var nonZeroSpans: (first: [Int], last: [Int]) {
        var first = [Int](), last = [Int]()
        first.reserveCapacity(starts.count)
        last.reserveCapacity(starts.count)
        for (index, start) in starts.enumerated() {
            let taps = weights[index * self.taps..<(index + 1) * self.taps]
            let lower = taps.firstIndex { $0 != 0 }.map { $0 - index * self.taps } ?? 0
            let upper = taps.lastIndex { $0 != 0 }.map { $0 - index * self.taps } ?? 0
            first.append(start + lower)
            last.append(start + upper)
        }
        return (first, last)
    }
}
