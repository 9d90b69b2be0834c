import Imago

/// Up to 255 colours for a GIF frame, chosen by median cut over a
/// histogram of 5-bit-per-channel colours, and the index of every such
/// colour: a frame is mapped through one table lookup per pixel. Index 255
/// is left for transparent pixels (alpha below 128).
struct Palette {
    /// The colours, RGB, at most 255 of them.
    private(set) var colors: [(red: UInt8, green: UInt8, blue: UInt8)] = []
    /// For each 15-bit colour (`r5 << 10 | g5 << 5 | b5`), its index in ``colors``.
    private var lookup = [UInt8](repeating: 0, count: 1 << 15)

    /// The index left for transparent pixels.
    static let transparentIndex: UInt8 = 255

    /// A palette for the opaque pixels of `rgba` (RGBA8 rows of `width` pixels).
    init(rgba pixels: [UInt8], width: Int, height: Int, bytesPerRow: Int) {
        var histogram = [UInt32](repeating: 0, count: 1 << 15)
        // The 8-bit sums of each bin's pixels, so a box's colour is their true average.
        var sums = [UInt64](repeating: 0, count: 3 << 15)
        pixels.withUnsafeBufferPointer { input in
            for row in 0..<height {
                var at = row * bytesPerRow
                for _ in 0..<width {
                    if input[at + 3] >= 128 {
                        let key = Self.key(input[at], input[at + 1], input[at + 2])
                        histogram[key] &+= 1
                        sums[3 * key] += UInt64(input[at])
                        sums[3 * key + 1] += UInt64(input[at + 1])
                        sums[3 * key + 2] += UInt64(input[at + 2])
                    }
                    at += 4
                }
            }
        }
        var boxes = [Box(keys: histogram.indices.filter { histogram[$0] > 0 }.map { UInt16($0) })]
        if boxes[0].keys.isEmpty { boxes[0].keys = [0] }
        // Split the box with the widest channel range (weighted by pixels) until 255 or nothing splits.
        while boxes.count < 255 {
            var best = -1, bestScore = 0
            for (index, box) in boxes.enumerated() where box.keys.count > 1 {
                let score = box.widestRange.range * Int(min(box.weight(histogram), 1 << 20))
                if score > bestScore { (best, bestScore) = (index, score) }
            }
            guard best >= 0 else { break }
            let (low, high) = boxes[best].split(histogram)
            boxes[best] = low
            boxes.append(high)
        }
        for (index, box) in boxes.enumerated() {
            colors.append(box.average(histogram, sums: sums))
            for key in box.keys { lookup[Int(key)] = UInt8(index) }
        }
        // Colours that no opaque pixel had keep index 0: only transparent
        // pixels (which never look them up) have them.
    }

    /// The index of the colour nearest `red`, `green`, `blue`.
    @inline(__always)
    func index(_ red: UInt8, _ green: UInt8, _ blue: UInt8) -> UInt8 {
        lookup[Self.key(red, green, blue)]
    }

    @inline(__always)
    private static func key(_ red: UInt8, _ green: UInt8, _ blue: UInt8) -> Int {
        Int(red >> 3) << 10 | Int(green >> 3) << 5 | Int(blue >> 3)
    }

    /// The 15-bit colours in one part of the median cut.
    private struct Box {
        var keys: [UInt16]

        /// The channel (0 red, 1 green, 2 blue) whose values spread widest, and that spread.
        var widestRange: (channel: Int, range: Int) {
            var low = [31, 31, 31], high = [0, 0, 0]
            for key in keys {
                for channel in 0..<3 {
                    let value = Int(key >> (10 - 5 * channel)) & 31
                    low[channel] = min(low[channel], value)
                    high[channel] = max(high[channel], value)
                }
            }
            let ranges = (0..<3).map { high[$0] - low[$0] }
            let channel = ranges.firstIndex(of: ranges.max()!)!
            return (channel, ranges[channel])
        }

        func weight(_ histogram: [UInt32]) -> UInt64 {
            keys.reduce(0) { $0 + UInt64(histogram[Int($1)]) }
        }

        /// The box cut at the weighted median of its widest channel.
        func split(_ histogram: [UInt32]) -> (Box, Box) {
            let channel = widestRange.channel
            let shift = UInt16(10 - 5 * channel)
            let sorted = keys.sorted { ($0 >> shift) & 31 < ($1 >> shift) & 31 }
            let half = weight(histogram) / 2
            var running: UInt64 = 0
            var cut = 1
            for (index, key) in sorted.enumerated() {
                running += UInt64(histogram[Int(key)])
                if running >= half { cut = min(max(1, index + 1), sorted.count - 1); break }
            }
            return (Box(keys: Array(sorted[..<cut])), Box(keys: Array(sorted[cut...])))
        }

        /// The average colour of the box's pixels; the middle of its first bin when it has none.
        func average(_ histogram: [UInt32], sums: [UInt64]) -> (red: UInt8, green: UInt8, blue: UInt8) {
            var total: [UInt64] = [0, 0, 0], count: UInt64 = 0
            for key in keys {
                for channel in 0..<3 { total[channel] += sums[3 * Int(key) + channel] }
                count += UInt64(histogram[Int(key)])
            }
            guard count > 0 else {
                let key = Int(keys[0])
                return (UInt8((key >> 10) * 8 + 4), UInt8((key >> 5 & 31) * 8 + 4), UInt8((key & 31) * 8 + 4))
            }
            let value = total.map { UInt8(min(255, ($0 + count / 2) / count)) }
            return (value[0], value[1], value[2])
        }
    }
}
