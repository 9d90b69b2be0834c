import Imago

/// Up to 256 colours for an image, chosen by median cut over a histogram
/// of 5-bit-per-channel colours, and the index of every such colour: an
/// image is mapped through one table lookup per pixel, with no dithering.
///
/// GIF frames (``Alpha-swift.enum/cutOff``, at most 255 colours) leave
/// index 255 for transparent pixels (alpha below 128) and count only the
/// others. Quantized PNGs with translucency (``Alpha-swift.enum/kept``)
/// make alpha a fourth channel of eight levels (0 and 255 each a level of
/// their own), split before any colour, so opaque and fully transparent
/// pixels stay so while the palette has room for every level; every
/// colour's red, green and blue are averaged weighted by alpha.
struct Palette {
    /// What the palette does with alpha.
    enum Alpha {
        /// Pixels with alpha below 128 are left out (they take
        /// ``Palette/transparentIndex``); every colour is opaque.
        case cutOff
        /// Alpha is quantized with the colours; every pixel has a colour.
        case kept
    }

    /// One colour of the palette, straight (not premultiplied) RGBA.
    struct Color: Equatable {
        var red: UInt8, green: UInt8, blue: UInt8, alpha: UInt8
    }

    /// The colours, at most the `maximumColors` asked for.
    private(set) var colors: [Color] = []
    /// For each key (``Layout``), its index in ``colors``.
    private var lookup: [UInt8]
    private let layout: Layout

    /// The index left for transparent pixels by ``Alpha-swift.enum/cutOff``.
    static let transparentIndex: UInt8 = 255

    /// A palette of at most `maximumColors` (1 to 256) colours for `rgba`
    /// (RGBA8 rows of `width` pixels, `bytesPerRow` bytes apart).
    init(rgba pixels: [UInt8], width: Int, height: Int, bytesPerRow: Int, maximumColors: Int = 255, alpha: Alpha = .cutOff) {
        layout = alpha == .cutOff ? .rgb : .rgba
        lookup = [UInt8](repeating: 0, count: layout.keyCount)
        let channels = layout.channels
        var histogram = [UInt32](repeating: 0, count: layout.keyCount)
        // Each key's sums of its pixels' channels (by alpha: red times alpha, ...,
        // and alpha), so a box's colour is their true average.
        var sums = [UInt64](repeating: 0, count: channels * layout.keyCount)
        pixels.withUnsafeBufferPointer { input in
            for row in 0..<height {
                var at = row * bytesPerRow
                for _ in 0..<width {
                    let (red, green, blue, opacity) = (input[at], input[at + 1], input[at + 2], input[at + 3])
                    switch alpha {
                    case .cutOff where opacity >= 128:
                        let key = Self.key(red, green, blue)
                        histogram[key] &+= 1
                        sums[3 * key] += UInt64(red)
                        sums[3 * key + 1] += UInt64(green)
                        sums[3 * key + 2] += UInt64(blue)
                    case .cutOff:
                        break
                    case .kept:
                        let key = Self.key(red, green, blue, opacity)
                        let weight = UInt64(opacity)
                        histogram[key] &+= 1
                        sums[4 * key] += UInt64(red) * weight
                        sums[4 * key + 1] += UInt64(green) * weight
                        sums[4 * key + 2] += UInt64(blue) * weight
                        sums[4 * key + 3] += weight
                    }
                    at += 4
                }
            }
        }
        let layout = self.layout
        var keys = histogram.indices.filter { histogram[$0] > 0 }.map { UInt32($0) }
        if keys.isEmpty { keys = [0] }
        var boxes = [Box(keys: keys, layout: layout, histogram: histogram)]
        // Split the box with the widest channel range (weighted by pixels)
        // until there are enough or nothing splits.
        while boxes.count < min(max(maximumColors, 1), 256) {
            var best = -1, bestScore = 0
            for (index, box) in boxes.enumerated() where box.keys.count > 1 {
                let score = box.range * Int(min(box.weight, 1 << 20))
                if score > bestScore { (best, bestScore) = (index, score) }
            }
            guard best >= 0 else { break }
            let (low, high) = boxes[best].split(layout: layout, histogram: histogram)
            boxes[best] = low
            boxes.append(high)
        }
        for (index, box) in boxes.enumerated() {
            colors.append(box.average(layout: layout, histogram: histogram, sums: sums))
            for key in box.keys { lookup[Int(key)] = UInt8(index) }
        }
        // Colours that no counted pixel had keep index 0: only pixels left
        // out (which never look them up) have them.
    }

    /// The index of the colour nearest `red`, `green`, `blue` (``Alpha-swift.enum/cutOff``).
    @inline(__always)
    func index(_ red: UInt8, _ green: UInt8, _ blue: UInt8) -> UInt8 {
        lookup[Self.key(red, green, blue)]
    }

    /// The index of the colour nearest `red`, `green`, `blue`, `alpha` (``Alpha-swift.enum/kept``).
    @inline(__always)
    func index(_ red: UInt8, _ green: UInt8, _ blue: UInt8, _ alpha: UInt8) -> UInt8 {
        lookup[Self.key(red, green, blue, alpha)]
    }

    /// A colour's key without alpha: `r5 << 10 | g5 << 5 | b5`.
    @inline(__always)
    private static func key(_ red: UInt8, _ green: UInt8, _ blue: UInt8) -> Int {
        Int(red >> 3) << 10 | Int(green >> 3) << 5 | Int(blue >> 3)
    }

    /// A colour's key with alpha: `r5 << 13 | g5 << 8 | b5 << 3 | level`,
    /// 0 for every fully transparent pixel.
    @inline(__always)
    private static func key(_ red: UInt8, _ green: UInt8, _ blue: UInt8, _ alpha: UInt8) -> Int {
        alpha == 0 ? 0 : key(red, green, blue) << 3 | Int(alphaLevel(alpha))
    }

    /// Alpha's level: 0 for 0, 7 for 255, 1 to 6 for the values between.
    @inline(__always)
    private static func alphaLevel(_ alpha: UInt8) -> UInt8 {
        switch alpha {
        case 0: 0
        case 255: 7
        default: UInt8(1 + (Int(alpha) - 1) * 6 / 254)
        }
    }

    /// Where each channel lies in a key, and how much a step of it counts
    /// when the widest channel is chosen.
    private struct Layout {
        var shifts: [Int]
        var masks: [Int]
        var rangeWeights: [Int]
        /// The channels a box is cut between two values of, never through
        /// one: alpha's levels.
        var cutsBetweenValues: [Bool]
        var keyCount: Int

        var channels: Int { shifts.count }

        /// Red, green, blue, 5 bits each.
        static let rgb = Layout(shifts: [10, 5, 0], masks: [31, 31, 31], rangeWeights: [1, 1, 1],
                                cutsBetweenValues: [false, false, false], keyCount: 1 << 15)
        /// Red, green, blue, 5 bits each, then alpha's level, 3 bits, a
        /// step of it weighted over a colour's whole range and cut between
        /// levels: a box of two levels is split by alpha before colour (an
        /// error in alpha shows more), and a box of one level keeps 0 or
        /// 255 exactly.
        static let rgba = Layout(shifts: [13, 8, 3, 0], masks: [31, 31, 31, 7], rangeWeights: [1, 1, 1, 32],
                                 cutsBetweenValues: [false, false, false, true], keyCount: 1 << 18)

        @inline(__always)
        func value(_ key: UInt32, _ channel: Int) -> Int {
            Int(key >> UInt32(shifts[channel])) & masks[channel]
        }
    }

    /// The keys in one part of the median cut, with their pixel count and
    /// their widest channel.
    private struct Box {
        var keys: [UInt32]
        /// The channel whose values spread widest (weighted by the
        /// layout's `rangeWeights`), and that spread.
        let channel: Int, range: Int
        /// The pixels the keys count.
        let weight: UInt64

        init(keys: [UInt32], layout: Layout, histogram: [UInt32]) {
            self.keys = keys
            var low = layout.masks, high = [Int](repeating: 0, count: layout.channels)
            for key in keys {
                for channel in 0..<layout.channels {
                    let value = layout.value(key, channel)
                    low[channel] = min(low[channel], value)
                    high[channel] = max(high[channel], value)
                }
            }
            let ranges = (0..<layout.channels).map { (high[$0] - low[$0]) * layout.rangeWeights[$0] }
            let channel = ranges.firstIndex(of: ranges.max()!)!
            (self.channel, range) = (channel, ranges[channel])
            weight = keys.reduce(0) { $0 + UInt64(histogram[Int($1)]) }
        }

        /// The box cut at the weighted median of its widest channel (for a
        /// channel the layout cuts between values, at the change of value
        /// nearest the median).
        func split(layout: Layout, histogram: [UInt32]) -> (Box, Box) {
            let channel = self.channel
            let sorted = keys.sorted { layout.value($0, channel) < layout.value($1, channel) }
            let half = weight / 2
            var running: UInt64 = 0
            var cut = 1
            if layout.cutsBetweenValues[channel] {
                var nearest = UInt64.max
                for index in 1..<sorted.count {
                    running += UInt64(histogram[Int(sorted[index - 1])])
                    let distance = running > half ? running - half : half - running
                    if layout.value(sorted[index - 1], channel) != layout.value(sorted[index], channel), distance < nearest {
                        (cut, nearest) = (index, distance)
                    }
                }
            } else {
                for (index, key) in sorted.enumerated() {
                    running += UInt64(histogram[Int(key)])
                    if running >= half { cut = min(max(1, index + 1), sorted.count - 1); break }
                }
            }
            return (Box(keys: Array(sorted[..<cut]), layout: layout, histogram: histogram),
                    Box(keys: Array(sorted[cut...]), layout: layout, histogram: histogram))
        }

        /// The average colour of the box's pixels (red, green and blue
        /// weighted by alpha when the layout has it); the middle of its first
        /// key when it has none.
        func average(layout: Layout, histogram: [UInt32], sums: [UInt64]) -> Color {
            let channels = layout.channels
            var total = [UInt64](repeating: 0, count: channels), count: UInt64 = 0
            for key in keys {
                for channel in 0..<channels { total[channel] += sums[channels * Int(key) + channel] }
                count += UInt64(histogram[Int(key)])
            }
            guard count > 0 else {
                let middle = (0..<3).map { UInt8(layout.value(keys[0], $0) * 8 + 4) }
                let alpha = channels == 4 ? UInt8(layout.value(keys[0], 3) * 255 / 7) : 255
                return Color(red: middle[0], green: middle[1], blue: middle[2], alpha: alpha)
            }
            if channels == 3 {
                let value = total.map { UInt8(min(255, ($0 + count / 2) / count)) }
                return Color(red: value[0], green: value[1], blue: value[2], alpha: 255)
            }
            let alphaSum = total[3]
            guard alphaSum > 0 else { return Color(red: 0, green: 0, blue: 0, alpha: 0) }
            let value = total[0..<3].map { UInt8(min(255, ($0 + alphaSum / 2) / alphaSum)) }
            return Color(red: value[0], green: value[1], blue: value[2], alpha: UInt8(min(255, (alphaSum + count / 2) / count)))
        }
    }
}
