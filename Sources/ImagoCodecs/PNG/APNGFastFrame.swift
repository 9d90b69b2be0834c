import CImagoKernels
import Foundation

/// An APNG frame of 8-bit RGBA, not interlaced, decoded without libspng, as
/// ``PNGFastPath`` decodes a still PNG: ISA-L's igzip inflates the frame's
/// `IDAT` or `fdAT` payloads where they lie in the file, and
/// ``PNGUnfilter`` undoes the filters, straight into the canvas when the
/// frame replaces what is under it.
///
/// The whole frame is inflated and checked before the canvas is touched:
/// a stream that is damaged, too short, too long or followed by more
/// bytes, or a filter type that is not one of PNG's five, makes it return
/// `false` with the canvas as it was, and libspng decodes the frame and
/// decides the outcome. So the pixels are always those libspng gives.
final class APNGFastFrame {
    /// The frame's filtered rows, reused from frame to frame.
    private var filtered: UnsafeMutablePointer<UInt8>
    private var capacity: Int

    init() {
        capacity = 0
        filtered = .allocate(capacity: 0)
    }

    deinit {
        filtered.deallocate()
    }

    /// Whether frames of the file whose `IHDR` payload is `header` can be
    /// decoded here: a bit depth of 8, colour type 6, no interlacing.
    static func accepts(header: [UInt8]) -> Bool {
        header.count == 13 && header[8] == 8 && header[9] == 6 && header[12] == 0
    }

    /// Decodes `frame` from `data` and draws it on `canvas` (RGBA8,
    /// `canvasWidth` pixels a row): replacing the pixels under it (`blend`
    /// 0) or composited over them (`blend` 1). `false`, with the canvas
    /// untouched, when libspng must decode the frame.
    func draw(_ frame: APNG.Frame, from data: Data, on canvas: UnsafeMutablePointer<UInt8>, canvasWidth: Int, blend: UInt8) -> Bool {
        let rowBytes = frame.width * 4
        let (height, count) = (frame.height, frame.height * (rowBytes + 1))
        if capacity < count {
            filtered.deallocate()
            filtered = .allocate(capacity: count)
            capacity = count
        }
        let filtered = filtered
        let inflated = data.withUnsafeBytes { bytes in
            var stream = InflateStream(chunks: frame.data.map { UnsafeRawBufferPointer(rebasing: bytes[$0]) })
            return stream.read(into: filtered, count: count) && stream.finish()
        }
        guard inflated, (0..<height).allSatisfy({ filtered[$0 * (rowBytes + 1)] <= 4 }) else { return false }
        let canvasRowBytes = canvasWidth * 4
        let origin = canvas + frame.y * canvasRowBytes + frame.x * 4
        for row in 0..<height {
            let source = filtered + row * (rowBytes + 1)
            if blend == 0 {
                // Straight into the canvas; the row above, just written, is the frame's previous row.
                let destination = origin + row * canvasRowBytes
                _ = PNGUnfilter.unfilter(source[0], source: source + 1, destination: destination,
                                         previous: row > 0 ? UnsafePointer(destination - canvasRowBytes) : nil,
                                         count: rowBytes, bytesPerPixel: 4)
            } else {
                // In place, each row moving up by its filter byte and those above, then blended.
                let destination = filtered + row * rowBytes
                _ = PNGUnfilter.unfilter(source[0], source: source + 1, destination: destination,
                                         previous: row > 0 ? UnsafePointer(destination - rowBytes) : nil,
                                         count: rowBytes, bytesPerPixel: 4)
                imago_apng_blend_over_row(destination, origin + row * canvasRowBytes, frame.width)
            }
        }
        return true
    }
}
