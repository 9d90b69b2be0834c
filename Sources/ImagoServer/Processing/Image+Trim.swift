#if Server
import Imago

extension Image {
    /// The image with its border of background cut away, as imgproxy's
    /// `trim` (libvips' `find_trim`): a pixel is background when, after a
    /// 3x3 median filter, no channel differs from the background by more
    /// than `threshold`. The background is `background`, or the top-left
    /// pixel; transparent pixels count as magenta, as in imgproxy (so
    /// `FF00FF` trims transparency). `equalHorizontal` cuts the same from
    /// the left and the right (the smaller of the two), `equalVertical`
    /// from the top and the bottom. An image that is all background is
    /// returned whole. Still images only: the first frame.
    func trimmed(threshold: Double, background: ProcessingOptions.Color?, equalHorizontal: Bool, equalVertical: Bool) -> Image {
        let magenta = ProcessingOptions.Color(red: 255, green: 0, blue: 255)
        let solid = (pixelFormat.hasAlpha ? flattened(onto: magenta) : self).converted(to: .rgb8)
        let pixels = solid.pixels
        let (width, height) = (solid.width, solid.height)
        let reference: [Int] = background.map { [Int($0.red), Int($0.green), Int($0.blue)] }
            ?? [Int(pixels[0]), Int(pixels[1]), Int(pixels[2])]

        let threshold = Int(threshold.rounded(.down))
        let deadline = WorkDeadline.current
        /// Whether the median-filtered pixel at x, y stands out from the
        /// background: a channel's median of the 3x3 window is beyond the
        /// threshold exactly when at least 5 of its 9 values are beyond it
        /// on the same side, so no window is sorted.
        var calls = 0
        func standsOut(_ x: Int, _ y: Int) -> Bool {
            // Past the deadline every pixel stands out: the scans end at once.
            calls &+= 1
            if calls & 4095 == 0, deadline?.hasPassed == true { return true }
            for channel in 0..<3 {
                let low = reference[channel] - threshold, high = reference[channel] + threshold
                var above = 0, below = 0
                for dy in -1...1 {
                    let row = Swift.min(Swift.max(y + dy, 0), height - 1)
                    for dx in -1...1 {
                        let column = Swift.min(Swift.max(x + dx, 0), width - 1)
                        let value = Int(pixels[(row * width + column) * 3 + channel])
                        if value > high { above += 1 } else if value < low { below += 1 }
                    }
                }
                if above >= 5 || below >= 5 { return true }
            }
            return false
        }

        // Scan inward from each side; the work is the border's size, not the image's.
        guard let top = (0..<height).first(where: { y in (0..<width).contains { standsOut($0, y) } }) else { return self }
        let bottom = (top..<height).reversed().first { y in (0..<width).contains { standsOut($0, y) } } ?? top
        let left = (0..<width).first { x in (top...bottom).contains { standsOut(x, $0) } } ?? 0
        let right = (left..<width).reversed().first { x in (top...bottom).contains { standsOut(x, $0) } } ?? left
        var (x0, x1, y0, y1) = (left, right, top, bottom)
        if equalHorizontal {
            let cut = Swift.min(x0, width - 1 - x1)
            (x0, x1) = (cut, width - 1 - cut)
        }
        if equalVertical {
            let cut = Swift.min(y0, height - 1 - y1)
            (y0, y1) = (cut, height - 1 - cut)
        }
        guard x0 > 0 || y0 > 0 || x1 < width - 1 || y1 < height - 1 else { return self }
        return cropped(x: x0, y: y0, width: x1 - x0 + 1, height: y1 - y0 + 1)
    }
}
#endif
