/// The weights of one axis of a resampling: for each output index, the
/// first input index and `taps` weights (summing to 1).
///
/// Every output has the same number of taps, padded with zero weights, so
/// the inner loops have a fixed length. Shrinking uses a box filter with the
/// exact coverage of each input; enlarging interpolates linearly between the
/// two nearest input centres.
struct ResamplingContributions: Sendable {
    /// The first input index of each output; `start + taps <= input`.
    let starts: [Int]
    /// `taps` weights per output, flattened.
    let weights: [Float]
    /// Inputs per output.
    let taps: Int

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

    /// The first and last input index with a non-zero weight, for each output.
    ///
    /// Both are non-decreasing in the output index, for the box filter and
    /// for linear interpolation alike.
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
