/// PNG's five scanline filters undone, for samples of 8 bits.
///
/// Each row of a PNG's image data starts with a filter type; the other
/// bytes hold differences from a prediction made of the pixel to the left
/// (`a`), the one above (`b`) and the one above and to the left (`c`).
/// These functions add the prediction back. Sub, Average and Paeth depend
/// on the pixel just produced, so they walk pixel by pixel; Paeth, the
/// costliest and the most common in photos, works on all channels of a
/// pixel at once.
enum PNGUnfilter {
    /// Writes the unfiltered row to `destination`.
    ///
    /// - Parameters:
    ///   - filter: The row's filter type, 0 to 4.
    ///   - source: The filtered bytes, `count` of them.
    ///   - destination: Where the row goes: another buffer, or the same one
    ///     starting at least one byte before `source` (an in-place pass that
    ///     drops each row's filter byte), never at or after it. Three-byte
    ///     pixels are written four bytes at a time, the last one excepted, so
    ///     the byte after each of the others is overwritten before its own
    ///     pixel is written.
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
        case (1, _), (4, nil):   // Paeth with no row above predicts from the left only.
            sub(source, destination, count: count, bytesPerPixel: bytesPerPixel)
        case (2, let previous?):
            up(source, destination, previous, count: count)
        case (3, _):
            average(source, destination, previous, count: count, bytesPerPixel: bytesPerPixel)
        case (4, let previous?):
            if bytesPerPixel == 3 {
                paeth(source, destination, previous, count: count, pixel: 3)
            } else {
                paeth(source, destination, previous, count: count, pixel: 4)
            }
        default:
            return false
        }
        return true
    }

    private static func sub(_ source: UnsafePointer<UInt8>, _ destination: UnsafeMutablePointer<UInt8>, count: Int, bytesPerPixel: Int) {
        for i in 0..<min(bytesPerPixel, count) { destination[i] = source[i] }
        var i = bytesPerPixel
        while i < count {
            destination[i] = source[i] &+ destination[i - bytesPerPixel]
            i += 1
        }
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

    private static func average(
        _ source: UnsafePointer<UInt8>, _ destination: UnsafeMutablePointer<UInt8>, _ previous: UnsafePointer<UInt8>?,
        count: Int, bytesPerPixel: Int
    ) {
        guard let previous else {
            for i in 0..<min(bytesPerPixel, count) { destination[i] = source[i] }
            var i = bytesPerPixel
            while i < count {
                destination[i] = source[i] &+ destination[i - bytesPerPixel] >> 1
                i += 1
            }
            return
        }
        for i in 0..<min(bytesPerPixel, count) { destination[i] = source[i] &+ previous[i] >> 1 }
        var i = bytesPerPixel
        while i < count {
            let mean = UInt8(truncatingIfNeeded: (UInt16(destination[i - bytesPerPixel]) + UInt16(previous[i])) >> 1)
            destination[i] = source[i] &+ mean
            i += 1
        }
    }

    /// Paeth for 3- or 4-byte pixels, a pixel per step in 16-bit lanes.
    @inline(__always)
    private static func paeth(
        _ source: UnsafePointer<UInt8>, _ destination: UnsafeMutablePointer<UInt8>, _ previous: UnsafePointer<UInt8>,
        count: Int, pixel: Int
    ) {
        var left = SIMD4<Int16>(repeating: 0), upperLeft = SIMD4<Int16>(repeating: 0)
        var i = 0
        // Every pixel but the last is read and written four bytes at a time.
        while i + pixel < count {
            let above = load(previous + i), filtered = load(source + i)
            let value = filtered &+ predict(left: left, above: above, upperLeft: upperLeft)
            UnsafeMutableRawPointer(destination + i).storeBytes(of: SIMD4<UInt8>(truncatingIfNeeded: value), as: SIMD4<UInt8>.self)
            left = value & 0xFF
            upperLeft = above
            i += pixel
        }
        while i < count {   // the last pixel, a byte at a time
            let a = i >= pixel ? Int(destination[i - pixel]) : 0
            let b = Int(previous[i]), c = i >= pixel ? Int(previous[i - pixel]) : 0
            let distanceLeft = abs(b - c), distanceAbove = abs(a - c), distanceUpperLeft = abs(a + b - 2 * c)
            let predicted = distanceLeft <= distanceAbove && distanceLeft <= distanceUpperLeft ? a : distanceAbove <= distanceUpperLeft ? b : c
            destination[i] = source[i] &+ UInt8(predicted)
            i += 1
        }
    }

    /// The Paeth predictor of each lane: whichever of `left`, `above` and
    /// `upperLeft` is nearest to `left + above - upperLeft`, ties in that order.
    @inline(__always)
    private static func predict(left: SIMD4<Int16>, above: SIMD4<Int16>, upperLeft: SIMD4<Int16>) -> SIMD4<Int16> {
        let distanceLeft = magnitude(above &- upperLeft)
        let distanceAbove = magnitude(left &- upperLeft)
        let distanceUpperLeft = magnitude(left &+ above &- upperLeft &- upperLeft)
        var predicted = upperLeft
        predicted.replace(with: above, where: distanceAbove .<= distanceUpperLeft)
        predicted.replace(with: left, where: (distanceLeft .<= distanceAbove) .& (distanceLeft .<= distanceUpperLeft))
        return predicted
    }

    @inline(__always)
    private static func magnitude(_ value: SIMD4<Int16>) -> SIMD4<Int16> {
        pointwiseMax(value, 0 &- value)
    }

    @inline(__always)
    private static func load(_ pointer: UnsafePointer<UInt8>) -> SIMD4<Int16> {
        SIMD4<Int16>(truncatingIfNeeded: UnsafeRawPointer(pointer).loadUnaligned(as: SIMD4<UInt8>.self))
    }
}
