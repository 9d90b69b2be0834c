/// Three passes of a box filter each way, along the rows then down the
/// columns, each output the rounded mean of the `2 * radius + 1` values
/// around it (positions outside the image take the edge's value): close to
/// a Gaussian of σ ≈ √(r(r+1)). ``Image/blurred(radius:)`` and the sharpen
/// behind ``Image/sharpened(sigma:amount:threshold:)`` use it.
///
/// Each pass is a running sum, so the cost does not grow with the radius.
/// The row pass copies each row once with its edges repeated, so the sum
/// needs no clamping; the column pass keeps one running sum per byte of a
/// row and moves down the rows, so it reads memory in order (a column walk
/// misses the cache on every row). The mean's division is a multiplication
/// by a 32-bit reciprocal, exact for every sum of a window up to 4,095
/// wide (`BoxBlurTests` checks); wider ones divide. Two buffers serve all six passes.
package struct BoxBlur {
    let width: Int
    let height: Int
    let channels: Int
    let radius: Int

    /// The width of the window, `2 * radius + 1`.
    var window: Int { 2 * radius + 1 }

    /// `(sum + window / 2) / window`, by `reciprocal` (by `window` itself when that is 0).
    @inline(__always)
    package static func mean(_ sum: Int, half: Int, reciprocal: Int, window: Int) -> UInt8 {
        reciprocal != 0 ? UInt8(truncatingIfNeeded: ((sum + half) &* reciprocal) >> 32) : UInt8(truncatingIfNeeded: (sum + half) / window)
    }

    /// The 32-bit reciprocal that ``mean(_:half:reciprocal:window:)``
    /// multiplies by: exact while 255 * window² < 2^32, so for windows up
    /// to 4,095; 0 (divide) beyond.
    package static func reciprocal(of window: Int) -> Int { window < 4096 ? (1 << 32) / window + 1 : 0 }

    /// `pixels` (`width * height * channels` bytes, packed) blurred.
    /// Stops early under a ``WorkDeadline`` that passes (the rest is then
    /// unfinished; ``WorkDeadline/run(_:)`` throws it away).
    func applied(to pixels: [UInt8]) -> [UInt8] {
        let count = width * height * channels
        var first = pixels
        var second = [UInt8](repeating: 0, count: count)
        let deadline = WorkDeadline.current
        first.withUnsafeMutableBufferPointer { a in
            second.withUnsafeMutableBufferPointer { b in
                for _ in 0..<3 {
                    rows(from: a.baseAddress!, to: b.baseAddress!, deadline: deadline)
                    columns(from: b.baseAddress!, to: a.baseAddress!, deadline: deadline)
                }
            }
        }
        return first
    }

    /// One pass along every row.
    private func rows(from source: UnsafePointer<UInt8>, to target: UnsafeMutablePointer<UInt8>, deadline: WorkDeadline?) {
        let stride = width * channels, window = self.window
        let half = window / 2, reciprocal = Self.reciprocal(of: window)
        // A row with `radius` copies of its first and last pixel on either side.
        let padded = UnsafeMutablePointer<UInt8>.allocate(capacity: (width + 2 * radius + 1) * channels)
        defer { padded.deallocate() }
        for row in 0..<height {
            if deadline?.hasPassed == true { return }
            let line = source + row * stride, out = target + row * stride
            for index in 0..<radius {
                (padded + index * channels).update(from: line, count: channels)
                (padded + (radius + width + index) * channels).update(from: line + (width - 1) * channels, count: channels)
            }
            (padded + (radius + width + radius) * channels).update(from: line + (width - 1) * channels, count: channels)
            (padded + radius * channels).update(from: line, count: stride)
            switch channels {
            case 4: Self.slide4(padded, out, width: width, window: window, half: half, reciprocal: reciprocal)
            case 3: Self.slide3(padded, out, width: width, window: window, half: half, reciprocal: reciprocal)
            default: Self.slide(padded, out, width: width, channels: channels, window: window, half: half, reciprocal: reciprocal)
            }
        }
    }

    /// A running sum along a padded row of 4-byte pixels.
    @inline(__always)
    private static func slide4(_ padded: UnsafePointer<UInt8>, _ out: UnsafeMutablePointer<UInt8>, width: Int, window: Int,
                               half: Int, reciprocal: Int) {
        var (s0, s1, s2, s3) = (0, 0, 0, 0)
        for index in 0..<window {
            let p = padded + index * 4
            s0 += Int(p[0]); s1 += Int(p[1]); s2 += Int(p[2]); s3 += Int(p[3])
        }
        for x in 0..<width {
            let o = out + x * 4, entering = padded + (x + window) * 4, leaving = padded + x * 4
            o[0] = mean(s0, half: half, reciprocal: reciprocal, window: window)
            o[1] = mean(s1, half: half, reciprocal: reciprocal, window: window)
            o[2] = mean(s2, half: half, reciprocal: reciprocal, window: window)
            o[3] = mean(s3, half: half, reciprocal: reciprocal, window: window)
            s0 += Int(entering[0]) - Int(leaving[0]); s1 += Int(entering[1]) - Int(leaving[1])
            s2 += Int(entering[2]) - Int(leaving[2]); s3 += Int(entering[3]) - Int(leaving[3])
        }
    }

    /// A running sum along a padded row of 3-byte pixels.
    @inline(__always)
    private static func slide3(_ padded: UnsafePointer<UInt8>, _ out: UnsafeMutablePointer<UInt8>, width: Int, window: Int,
                               half: Int, reciprocal: Int) {
        var (s0, s1, s2) = (0, 0, 0)
        for index in 0..<window {
            let p = padded + index * 3
            s0 += Int(p[0]); s1 += Int(p[1]); s2 += Int(p[2])
        }
        for x in 0..<width {
            let o = out + x * 3, entering = padded + (x + window) * 3, leaving = padded + x * 3
            o[0] = mean(s0, half: half, reciprocal: reciprocal, window: window)
            o[1] = mean(s1, half: half, reciprocal: reciprocal, window: window)
            o[2] = mean(s2, half: half, reciprocal: reciprocal, window: window)
            s0 += Int(entering[0]) - Int(leaving[0]); s1 += Int(entering[1]) - Int(leaving[1]); s2 += Int(entering[2]) - Int(leaving[2])
        }
    }

    /// A running sum along a padded row, one channel at a time (gray, gray and alpha).
    private static func slide(_ padded: UnsafePointer<UInt8>, _ out: UnsafeMutablePointer<UInt8>, width: Int, channels: Int,
                              window: Int, half: Int, reciprocal: Int) {
        for channel in 0..<channels {
            var sum = 0
            for index in 0..<window { sum += Int(padded[index * channels + channel]) }
            for x in 0..<width {
                out[x * channels + channel] = mean(sum, half: half, reciprocal: reciprocal, window: window)
                sum += Int(padded[(x + window) * channels + channel]) - Int(padded[x * channels + channel])
            }
        }
    }

    /// One pass down every column: a running sum per byte of a row, moved down the rows.
    private func columns(from source: UnsafePointer<UInt8>, to target: UnsafeMutablePointer<UInt8>, deadline: WorkDeadline?) {
        let stride = width * channels, window = self.window
        let half = window / 2, reciprocal = Self.reciprocal(of: window)
        let sums = UnsafeMutablePointer<Int32>.allocate(capacity: stride)
        defer { sums.deallocate() }
        sums.initialize(repeating: 0, count: stride)
        for position in -radius...radius {
            let line = source + min(max(position, 0), height - 1) * stride
            for index in 0..<stride { sums[index] &+= Int32(line[index]) }
        }
        for row in 0..<height {
            if deadline?.hasPassed == true { return }
            let out = target + row * stride
            let entering = source + min(row + radius + 1, height - 1) * stride
            let leaving = source + max(row - radius, 0) * stride
            if reciprocal != 0 {
                // 32 x 32 -> 64-bit products, which the vector unit does a row at a time.
                let r = UInt64(reciprocal), h = UInt32(half)
                for index in 0..<stride {
                    let sum = sums[index]
                    out[index] = UInt8(truncatingIfNeeded: (UInt64(UInt32(bitPattern: sum) &+ h) &* r) >> 32)
                    sums[index] = sum &+ Int32(entering[index]) &- Int32(leaving[index])
                }
            } else {
                for index in 0..<stride {
                    let sum = sums[index]
                    out[index] = UInt8(truncatingIfNeeded: (Int(sum) + half) / window)
                    sums[index] = sum &+ Int32(entering[index]) &- Int32(leaving[index])
                }
            }
        }
    }
}
