#if Server
import Foundation
import Imago

extension Image {
    /// The image with `mark` (any pixel format) drawn over it as
    /// `placement` says, as imgproxy draws watermarks: fitted into
    /// ``ProcessingOptions/Watermark/scale`` times the image's size when
    /// that is set (never larger than the image), then placed at its gravity
    /// with offsets (it may hang over the edges), or tiled from the centre
    /// with the offsets as the space between tiles; composited `over` in
    /// sRGB with its alpha times `opacity`. The result keeps the image's
    /// alpha or lack of it. Still images only: the first frame.
    ///
    /// - Parameter dpr: What pixel offsets are multiplied by.
    func watermarked(with mark: Image, placement: ProcessingOptions.Watermark, opacity: Double, dpr: Double) -> Image {
        guard opacity > 0, width > 0, height > 0 else { return self }
        var stamp = mark.converted(to: .rgba8)
        if placement.scale > 0 {
            // Fitted into the box, enlarged if need be; a box beyond the
            // image (a scale above 1) is the image, so nothing larger than
            // the result is ever made.
            let boxWidth = max(1, min(width, ResizePlan.scaledToEven(Double(width), placement.scale)))
            let boxHeight = max(1, min(height, ResizePlan.scaledToEven(Double(height), placement.scale)))
            let factor = min(Double(boxWidth) / Double(stamp.width), Double(boxHeight) / Double(stamp.height))
            let fitted = (max(1, Int((Double(stamp.width) * factor).rounded())), max(1, Int((Double(stamp.height) * factor).rounded())))
            if fitted != (stamp.width, stamp.height) { stamp = stamp.resized(width: fitted.0, height: fitted.1) }
        }
        func pixels(_ value: Double, _ side: Int) -> Int {
            abs(value) >= 1 ? ResizePlan.scaledToEven(value, dpr) : ResizePlan.scaledToEven(Double(side), value)
        }
        if placement.tiles {
            // The tile is the mark with the offsets as a transparent margin
            // split around it; an odd number of tiles each way, centred.
            let gapX = min(width, max(0, pixels(placement.offset.x, width)))
            let gapY = min(height, max(0, pixels(placement.offset.y, height)))
            let tileWidth = stamp.width + gapX, tileHeight = stamp.height + gapY
            func count(_ side: Int, _ tile: Int) -> Int {
                let needed = (side + tile - 1) / tile
                return needed % 2 == 0 ? needed + 1 : needed
            }
            let originX = gapX / 2 - (count(width, tileWidth) * tileWidth - width) / 2
            let originY = gapY / 2 - (count(height, tileHeight) * tileHeight - height) / 2
            // The tiles do not overlap: drawn once as a layer the size of
            // the image, then composited once, the work is the image's
            // pixels whatever the number of tiles.
            let layer = Self.tiledLayer(of: stamp, width: width, height: height, origin: (originX, originY),
                                        tileSize: (tileWidth, tileHeight))
            var result = self.withAlphaForCompositing()
            result.composite(layer, x: 0, y: 0, opacity: opacity)
            return result.keepingMetadata(of: self)
        }
        var origin = ResizePlan.position(
            outerWidth: width, outerHeight: height, innerWidth: stamp.width, innerHeight: stamp.height,
            gravity: placement.gravity, offset: placement.offset, dpr: dpr, allowsOverflow: true
        )
        origin.x = max(-stamp.width + 1, min(origin.x, width - 1))
        origin.y = max(-stamp.height + 1, min(origin.y, height - 1))
        var result = self.withAlphaForCompositing()
        result.composite(stamp, x: origin.x, y: origin.y, opacity: opacity)
        return result.keepingMetadata(of: self)
    }

    /// A transparent RGBA `width` x `height` layer with `stamp` (RGBA)
    /// drawn every `tileSize` from `origin`: each of the stamp's rows is
    /// laid out once across the width, then copied to every other row it
    /// falls on.
    private static func tiledLayer(of stamp: Image, width: Int, height: Int, origin: (x: Int, y: Int),
                                   tileSize: (width: Int, height: Int)) -> Image {
        let rowBytes = width * 4
        var pixels = [UInt8](repeating: 0, count: rowBytes * height)
        // The columns of the layer each stamp column lands on, as (layer x, stamp x) runs.
        var runs: [(to: Int, from: Int, count: Int)] = []
        var x = origin.x
        while x < width {
            let first = max(0, -x), last = min(stamp.width, width - x)
            if first < last { runs.append((x + first, first, last - first)) }
            x += tileSize.width
        }
        let deadline = WorkDeadline.current
        // The layer row where each stamp row was first drawn, to copy from after.
        var drawn = [Int](repeating: -1, count: stamp.height)
        stamp.pixels.withUnsafeBufferPointer { input in
            pixels.withUnsafeMutableBufferPointer { output in
                let layer = output.baseAddress!
                for row in stride(from: max(0, origin.y), to: height, by: 1) {
                    if deadline?.hasPassed == true { break }
                    let within = (row - origin.y) % tileSize.height
                    guard within < stamp.height else { continue }
                    let target = layer + row * rowBytes
                    if drawn[within] >= 0 {
                        target.update(from: layer + drawn[within] * rowBytes, count: rowBytes)
                    } else {
                        let from = input.baseAddress! + within * stamp.bytesPerRow
                        for run in runs { (target + run.to * 4).update(from: from + run.from * 4, count: run.count * 4) }
                        drawn[within] = row
                    }
                }
            }
        }
        return Image(width: width, height: height, pixelFormat: .rgba8, pixels: pixels)
    }

    /// The image as RGBA, or RGB when it has no alpha: what a mark is composited onto.
    private func withAlphaForCompositing() -> Image {
        var image = converted(to: pixelFormat.hasAlpha ? .rgba8 : .rgb8)
        if image.frames.count > 1 {
            image = Image(width: width, height: height, pixelFormat: image.pixelFormat, bytesPerRow: image.bytesPerRow, pixels: image.pixels)
        }
        image.colorProfile = colorProfile
        image.isPartial = isPartial
        return image
    }

    /// `self`, with the metadata of `original`.
    private func keepingMetadata(of original: Image) -> Image {
        var image = self
        image.colorProfile = original.colorProfile
        image.isPartial = original.isPartial
        return image
    }

    /// Draws `mark` (RGBA) at `x`, `y` with Porter-Duff `over`, its alpha
    /// times `opacity`; the parts outside the image are cut. `self` is RGB
    /// or RGBA.
    private mutating func composite(_ mark: Image, x: Int, y: Int, opacity: Double) {
        let firstColumn = max(0, -x), lastColumn = min(mark.width, width - x)
        let firstRow = max(0, -y), lastRow = min(mark.height, height - y)
        guard firstColumn < lastColumn, firstRow < lastRow else { return }
        let bpp = pixelFormat.bytesPerPixel
        let hasAlpha = bpp == 4
        // The mark's alpha times the opacity, in 0...255 * 255.
        let scale = UInt32((opacity * 255).rounded())
        let rowStride = bytesPerRow
        let markStride = mark.bytesPerRow
        var pixels = self.pixels
        let deadline = WorkDeadline.current
        mark.pixels.withUnsafeBufferPointer { input in
            pixels.withUnsafeMutableBufferPointer { output in
                for row in firstRow..<lastRow {
                    if deadline?.hasPassed == true { break }
                    var from = row * markStride + firstColumn * 4
                    var to = (row + y) * rowStride + (firstColumn + x) * bpp
                    for _ in firstColumn..<lastColumn {
                        let markAlpha = UInt32(input[from + 3]) * scale  // 0...65025
                        if markAlpha > 0 {
                            if hasAlpha {
                                // out_a = m_a + b_a (1 - m_a); out_c = (m_c m_a + b_c b_a (1 - m_a)) / out_a.
                                let backAlpha = UInt32(output[to + 3]) * 255  // 0...65025
                                let backPart = backAlpha * (65025 - markAlpha) / 65025
                                let outAlpha = markAlpha + backPart
                                for channel in 0..<3 {
                                    let value = (UInt64(input[from + channel]) * UInt64(markAlpha)
                                        + UInt64(output[to + channel]) * UInt64(backPart) + UInt64(outAlpha / 2)) / UInt64(outAlpha)
                                    output[to + channel] = UInt8(min(255, value))
                                }
                                output[to + 3] = UInt8((outAlpha + 127) / 255)
                            } else {
                                for channel in 0..<3 {
                                    let value = UInt32(input[from + channel]) * markAlpha + UInt32(output[to + channel]) * (65025 - markAlpha)
                                    output[to + channel] = UInt8((value + 32512) / 65025)
                                }
                            }
                        }
                        from += 4
                        to += bpp
                    }
                }
            }
        }
        self = Image(width: width, height: height, pixelFormat: pixelFormat, bytesPerRow: bytesPerRow, pixels: pixels)
    }
}
#endif
