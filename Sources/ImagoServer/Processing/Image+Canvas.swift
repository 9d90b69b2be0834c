#if Server
import Imago

extension Image {
    /// The image placed at `x`, `y` on a `width` x `height` canvas of
    /// `background` (transparent when `nil`: the result then has alpha);
    /// whatever falls outside the canvas is cut. Still images only: the
    /// first frame.
    func placed(onWidth width: Int, height: Int, x: Int, y: Int, background: ProcessingOptions.Color?) -> Image {
        let format: PixelFormat = switch (pixelFormat, background) {
        case (.gray8, nil), (.grayAlpha8, nil): .grayAlpha8
        case (_, nil): .rgba8
        case (.gray8, let color?) where color.isGray: .gray8
        case (.grayAlpha8, let color?) where color.isGray: .grayAlpha8
        case (.rgb8, _), (.gray8, _): .rgb8
        default: .rgba8
        }
        let source = converted(to: format)
        let bpp = format.bytesPerPixel
        let fill: [UInt8] = switch (format, background) {
        case (.gray8, let color?): [color.red]
        case (.grayAlpha8, let color?): [color.red, 255]
        case (.rgb8, let color?): [color.red, color.green, color.blue]
        case (.rgba8, let color?): [color.red, color.green, color.blue, 255]
        default: [UInt8](repeating: 0, count: bpp)
        }
        let rowStride = width * bpp
        // One row of the fill, repeated (zeros need no pass of their own).
        var pixels = fill.allSatisfy { $0 == 0 }
            ? [UInt8](repeating: 0, count: rowStride * height)
            : Array(repeatElement(Array(repeatElement(fill, count: width).joined()), count: height).joined())
        // The rows and columns of the image that land on the canvas.
        let firstColumn = max(0, -x), lastColumn = min(source.width, width - x)
        let firstRow = max(0, -y), lastRow = min(source.height, height - y)
        if firstColumn < lastColumn && firstRow < lastRow {
            let rowBytes = (lastColumn - firstColumn) * bpp
            source.pixels.withUnsafeBufferPointer { input in
                pixels.withUnsafeMutableBufferPointer { output in
                    for row in firstRow..<lastRow {
                        let from = row * source.bytesPerRow + firstColumn * bpp
                        let to = (row + y) * rowStride + (firstColumn + x) * bpp
                        output.baseAddress!.advanced(by: to).update(from: input.baseAddress!.advanced(by: from), count: rowBytes)
                    }
                }
            }
        }
        var result = Image(width: width, height: height, pixelFormat: format, pixels: pixels)
        result.colorProfile = format.isGray == pixelFormat.isGray ? colorProfile : nil
        result.isPartial = isPartial
        return result
    }

    /// The image composited over an opaque `background`, without alpha;
    /// `self` when it has no alpha. Still images only: the first frame.
    func flattened(onto background: ProcessingOptions.Color) -> Image {
        guard pixelFormat.hasAlpha else { return self }
        let gray = pixelFormat == .grayAlpha8 && background.isGray
        let format: PixelFormat = gray ? .gray8 : .rgb8
        let source = converted(to: gray ? .grayAlpha8 : .rgba8)
        let inBPP = source.pixelFormat.bytesPerPixel, outBPP = format.bytesPerPixel
        let back = [background.red, background.green, background.blue]
        var pixels = [UInt8](repeating: 0, count: width * height * outBPP)
        let deadline = WorkDeadline.current
        source.pixels.withUnsafeBufferPointer { input in
            pixels.withUnsafeMutableBufferPointer { output in
                for row in 0..<height {
                    if deadline?.hasPassed == true { break }
                    var from = row * source.bytesPerRow
                    var to = row * width * outBPP
                    for _ in 0..<width {
                        let alpha = UInt32(input[from + inBPP - 1])
                        for channel in 0..<outBPP {
                            let value = UInt32(input[from + channel]) * alpha + UInt32(back[channel]) * (255 - alpha)
                            output[to + channel] = UInt8((value + 127) / 255)
                        }
                        from += inBPP
                        to += outBPP
                    }
                }
            }
        }
        var result = Image(width: width, height: height, pixelFormat: format, pixels: pixels)
        result.colorProfile = colorProfile
        result.isPartial = isPartial
        return result
    }
}

extension ProcessingOptions.Color {
    /// Whether the three channels are equal.
    var isGray: Bool { red == green && green == blue }
}
#endif
