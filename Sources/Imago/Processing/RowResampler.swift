import CImagoKernels
/// How to resample images of one size and pixel format to another: the
/// weights of both axes, computed once and shared by every frame.
///
/// ``Image/resized(width:height:)`` is built on it, and so are the decoders
/// that downscale rows as they decode them, so a streamed thumbnail is the
/// same, bit for bit, as a full decode followed by a resize.
package struct ResamplingPlan: Sendable {
    /// The size of the images this plan reads.
    package let sourceWidth: Int, sourceHeight: Int
    /// The size of the images this plan makes.
    package let width: Int, height: Int
    /// The pixel format of both.
    package let format: PixelFormat
    /// The filter.
    package let filter: ResamplingFilter
    /// Whether the colours are averaged as light intensities (decoded from
    /// sRGB first, encoded again after) rather than as stored values.
    package let linearLight: Bool
    let horizontal: ResamplingContributions
    let vertical: ResamplingContributions
    /// For each output row, the first and last input rows it is made of.
    let firstRow: [Int], lastRow: [Int]
    /// The most output rows that are being summed at once.
    let openRows: Int
    /// Whether rows are summed vertically first, at the source's width, and
    /// each finished output row then resampled across (rather than each
    /// source row resampled across, then summed): chosen when the height
    /// shrinks, where it is several times cheaper, because the vertical
    /// sums are plain vector arithmetic and the horizontal pass, the costly
    /// one, then runs on the output's rows instead of the source's. Not in
    /// linear light, whose decoding belongs to the horizontal pass. Both
    /// orders give the same image to within float rounding; one plan always
    /// uses the same order, so a streamed thumbnail is still bit for bit a
    /// full decode resized.
    let verticalFirst: Bool

    /// A plan from `sourceWidth` x `sourceHeight` to `width` x `height`, all at least 1.
    package init(sourceWidth: Int, sourceHeight: Int, format: PixelFormat, width: Int, height: Int,
                 filter: ResamplingFilter = .area, linearLight: Bool = false) {
        precondition(sourceWidth > 0 && sourceHeight > 0 && width > 0 && height > 0, "a resampling needs non-empty sizes")
        self.sourceWidth = sourceWidth
        self.sourceHeight = sourceHeight
        self.width = width
        self.height = height
        self.format = format
        self.filter = filter
        self.linearLight = linearLight
        horizontal = ResamplingContributions(from: sourceWidth, to: width, filter: filter)
        vertical = ResamplingContributions(from: sourceHeight, to: height, filter: filter)
        (firstRow, lastRow) = vertical.nonZeroSpans
        // Both bounds only grow with the output row, so the rows open at
        // input row r are a run: those that started and have not ended.
        var most = 1, ended = 0, started = 0
        for row in 0..<sourceHeight {
            while ended < height && lastRow[ended] < row { ended += 1 }
            while started < height && firstRow[started] <= row { started += 1 }
            most = max(most, started - ended)
        }
        openRows = most
        verticalFirst = height < sourceHeight && !linearLight
    }

    /// The size of the output in bytes.
    package var byteCount: Int { width * height * format.bytesPerPixel }

    /// Makes the output pixels: `body` appends every source row, top to
    /// bottom, to the resampler it is given.
    ///
    /// - Precondition: `body` appends all `sourceHeight` rows or throws.
    package func makePixels(_ body: (inout RowResampler) throws -> Void) rethrows -> [UInt8] {
        try [UInt8](pixelCapacity: byteCount) { buffer, count in
            var resampler = RowResampler(plan: self, output: buffer.baseAddress!)
            try body(&resampler)
            precondition(resampler.isComplete, "a resampler needs every source row")
            count = byteCount
        }
    }

    /// `pixels`, whose rows are `bytesPerRow` apart, resampled.
    package func resample(_ pixels: [UInt8], bytesPerRow: Int) -> [UInt8] {
        pixels.withUnsafeBufferPointer { input in resample(input.baseAddress!, bytesPerRow: bytesPerRow) }
    }

    /// The pixels at `pixels` (``sourceHeight`` rows, `bytesPerRow` apart)
    /// resampled, read in place.
    package func resample(_ pixels: UnsafePointer<UInt8>, bytesPerRow: Int) -> [UInt8] {
        makePixels { resampler in
            for row in 0..<sourceHeight { resampler.append(row: pixels + row * bytesPerRow) }
        }
    }
}

/// Resamples an image that arrives one row at a time, top to bottom, into
/// an output buffer, holding a few rows of sums instead of the image.
///
/// Each row is first resampled horizontally (weighted by alpha, so
/// transparent pixels do not bleed; in linear light, from decoded sRGB
/// values), then added, with its weight, to every
/// output row it contributes to; an output row is written as soon as its
/// last input row has arrived. When the height shrinks
/// (``ResamplingPlan/verticalFirst``) the order is turned round: each row
/// is added, weighted, at the source's width, and a finished output row is
/// resampled horizontally before it is written. The sums happen in the same
/// order as a two-pass resampler's, so the result does not depend on how
/// the rows were delivered.
package struct RowResampler: ~Copyable {
    private let plan: ResamplingPlan
    private let output: UnsafeMutablePointer<UInt8>
    /// One row resampled horizontally: an input row, or with
    /// ``ResamplingPlan/verticalFirst`` a finished output row.
    private let rowSums: UnsafeMutablePointer<Float>
    /// `plan.openRows` output rows being summed, by output row modulo that
    /// count, `accumulatorFloats` floats apart.
    private let accumulators: UnsafeMutablePointer<Float>
    /// The floats of an output row.
    private let rowFloats: Int
    /// The floats of a row of sums: `rowFloats`, or the source's width of
    /// them (and one more, which the horizontal kernel may read) when the
    /// rows are summed first.
    private let accumulatorFloats: Int
    private var nextRow = 0
    private var firstOpenRow = 0
    /// The deadline the work runs under (``WorkDeadline/current`` when made).
    private let deadline: WorkDeadline?
    /// Whether the deadline passed: rows are then counted and nothing else
    /// is done, and the output is left unwritten (``WorkDeadline/run(_:)``
    /// throws it away).
    private var stopped = false

    init(plan: ResamplingPlan, output: UnsafeMutablePointer<UInt8>) {
        self.plan = plan
        self.deadline = WorkDeadline.current
        self.output = output
        rowFloats = plan.width * plan.format.bytesPerPixel
        accumulatorFloats = plan.verticalFirst ? plan.sourceWidth * plan.format.bytesPerPixel + 1 : rowFloats
        rowSums = .allocate(capacity: rowFloats)
        accumulators = .allocate(capacity: accumulatorFloats * plan.openRows)
        if plan.verticalFirst { accumulators.initialize(repeating: 0, count: accumulatorFloats * plan.openRows) }
    }

    deinit {
        rowSums.deallocate()
        accumulators.deallocate()
    }

    /// Whether every source row has been appended (and so every output row written).
    package var isComplete: Bool { nextRow == plan.sourceHeight }

    /// Adds the next source row: `sourceWidth` pixels in the plan's format.
    ///
    /// - Precondition: fewer than `sourceHeight` rows were appended before.
    package mutating func append(row: UnsafePointer<UInt8>) {
        precondition(nextRow < plan.sourceHeight, "more rows than the source has")
        let inputRow = nextRow
        nextRow += 1
        if !stopped, let deadline, deadline.hasPassed { stopped = true }
        guard !stopped else { return }
        let verticalFirst = plan.verticalFirst
        if !verticalFirst { resampleHorizontally(row) }
        let rowFloats = rowFloats, rowSums = rowSums, accumulatorFloats = accumulatorFloats
        let channels = plan.format.bytesPerPixel, sourceWidth = plan.sourceWidth, premultiplies: Int32 = plan.format.hasAlpha ? 1 : 0
        plan.vertical.weights.withUnsafeBufferPointer { weights in
            plan.vertical.starts.withUnsafeBufferPointer { starts in
                plan.firstRow.withUnsafeBufferPointer { firstRow in
                    let taps = plan.vertical.taps
                    var outputRow = firstOpenRow
                    while outputRow < plan.height && firstRow[outputRow] <= inputRow {
                        let sums = accumulators + (outputRow % plan.openRows) * accumulatorFloats
                        let isFirst = firstRow[outputRow] == inputRow
                        let weight = weights[outputRow * taps + inputRow - starts[outputRow]]
                        if verticalFirst {
                            if weight != 0 || isFirst {
                                imago_accumulate_row(row, sourceWidth, channels, premultiplies, weight, isFirst ? 1 : 0, sums)
                            }
                        } else {
                            if isFirst { sums.update(repeating: 0, count: rowFloats) }
                            if weight != 0 {
                                for i in 0..<rowFloats { sums[i] += rowSums[i] * weight }
                            }
                        }
                        outputRow += 1
                    }
                }
            }
        }
        while firstOpenRow < plan.height && plan.lastRow[firstOpenRow] <= inputRow {
            let sums = accumulators + (firstOpenRow % plan.openRows) * accumulatorFloats
            if verticalFirst {
                resampleSumsHorizontally(sums)
                writeRow(firstOpenRow, from: rowSums)
            } else {
                writeRow(firstOpenRow, from: sums)
            }
            firstOpenRow += 1
        }
    }

    /// A finished row of vertical sums (premultiplied, at the source's
    /// width) to `plan.width` columns in `rowSums`.
    private func resampleSumsHorizontally(_ sums: UnsafePointer<Float>) {
        let channels = plan.format.bytesPerPixel, taps = plan.horizontal.taps, width = plan.width, rowSums = rowSums
        plan.horizontal.weights.withUnsafeBufferPointer { weights in
            plan.horizontal.starts.withUnsafeBufferPointer { starts in
                imago_resample_float_row(sums, channels, starts.baseAddress, weights.baseAddress, taps, width, rowSums)
            }
        }
    }

    /// One finished output row, its sums at `sums`, to bytes, un-premultiplied.
    private func writeRow(_ outputRow: Int, from sums: UnsafePointer<Float>) {
        let outRow = output + outputRow * rowFloats
        let channels = plan.format.bytesPerPixel
        if plan.linearLight {
            LinearLight.writeRow(sums, to: outRow, width: plan.width, channels: channels, hasAlpha: plan.format.hasAlpha)
            return
        }
        guard plan.format.hasAlpha else {
            imago_floats_to_bytes(sums, outRow, rowFloats)   // clampToByte, vectorised
            return
        }
        let alpha = channels - 1
        for x in 0..<plan.width {
            let base = x * channels
            let a = sums[base + alpha]
            for c in 0..<alpha {
                outRow[base + c] = a > 0 ? Self.clampToByte(sums[base + c] / a) : 0
            }
            outRow[base + alpha] = Self.clampToByte(a)
        }
    }

    /// `input` to `plan.width` columns in `rowSums`, premultiplied by alpha.
    /// RGB and RGBA (nearly every image) run in C kernels (SSE2 where there
    /// is SSE2, the same sums in the same order elsewhere); other formats
    /// take the general loop.
    private func resampleHorizontally(_ input: UnsafePointer<UInt8>) {
        let mid = rowSums
        let outWidth = plan.width, taps = plan.horizontal.taps
        let channels = plan.format.bytesPerPixel
        plan.horizontal.weights.withUnsafeBufferPointer { weights in
            plan.horizontal.starts.withUnsafeBufferPointer { starts in
                if plan.linearLight {
                    LinearLight.resampleRow(input, format: plan.format, starts: starts, weights: weights, taps: taps, width: outWidth, into: mid)
                    return
                }
                switch plan.format {
                case .rgb8:
                    imago_resample_row_rgb(input, plan.sourceWidth * 3, starts.baseAddress, weights.baseAddress, taps, outWidth, mid)
                case .rgba8:
                    imago_resample_row_rgba(input, starts.baseAddress, weights.baseAddress, taps, outWidth, mid)
                case .gray8, .grayAlpha8:
                    let alpha = plan.format.hasAlpha ? channels - 1 : -1
                    var out = 0, weight = 0
                    mid.update(repeating: 0, count: rowFloats)
                    for x in 0..<outWidth {
                        var source = starts[x] * channels
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

    @inline(__always)
    static func clampToByte(_ value: Float) -> UInt8 {
        UInt8(min(255, max(0, value + 0.5)))
    }
}
