import CImagoKernels

/// PNG's five scanline filters undone, for samples of 8 bits.
///
/// Each row of a PNG's image data starts with a filter type; the other
/// bytes hold differences from a prediction made of the pixel to the left
/// (`a`), the one above (`b`) and the one above and to the left (`c`).
/// These functions add the prediction back. Up is 16 bytes a step; Sub,
/// Average and Paeth depend on the pixel just produced, so they walk pixel
/// by pixel, all channels of a pixel at once, in a C kernel
/// (`imago_png_unfilter_from_left`, SSE2 where there is SSE2).
enum PNGUnfilter {
    /// Writes the unfiltered row to `destination`.
    ///
    /// - Parameters:
    ///   - filter: The row's filter type, 0 to 4.
    ///   - source: The filtered bytes, `count` of them.
    ///   - destination: Where the row goes: another buffer, or the same one
    ///     starting at least one byte before `source` (an in-place pass that
    ///     drops each row's filter byte), never after it. Every pixel is
    ///     read before it is written, and only its own bytes.
    ///   - previous: The row above, unfiltered; `nil` for the first row.
    ///   - count: The bytes in a row.
    ///   - bytesPerPixel: 3 or 4.
    /// - Returns: `false` for an unknown filter type.
    static func unfilter(
        _ filter: UInt8, source: UnsafePointer<UInt8>, destination: UnsafeMutablePointer<UInt8>,
        previous: UnsafePointer<UInt8>?, count: Int, bytesPerPixel: Int
    ) -> Bool {
        switch (filter, previous) {
        case (0, _), (2, nil):
            UnsafeMutableRawPointer(destination).copyMemory(from: source, byteCount: count)   // may overlap
        case (2, let previous?):
            up(source, destination, previous, count: count)
        default:
            return imago_png_unfilter_from_left(filter, source, destination, previous, count, bytesPerPixel) != 0
        }
        return true
    }

    private static func up(_ source: UnsafePointer<UInt8>, _ destination: UnsafeMutablePointer<UInt8>, _ previous: UnsafePointer<UInt8>, count: Int) {
        var i = 0
        while i + 16 <= count {
            let sum = UnsafeRawPointer(source + i).loadUnaligned(as: SIMD16<UInt8>.self)
                &+ UnsafeRawPointer(previous + i).loadUnaligned(as: SIMD16<UInt8>.self)
            UnsafeMutableRawPointer(destination + i).storeBytes(of: sum, as: SIMD16<UInt8>.self)
            i += 16
        }
        while i < count {
            destination[i] = source[i] &+ previous[i]
            i += 1
        }
    }
}
