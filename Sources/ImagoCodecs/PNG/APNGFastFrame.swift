import CImagoKernels
import Foundation

/// An APNG frame of 8-bit RGBA, or 8-bit RGB without `tRNS`, not
/// interlaced, decoded without libspng, as ``PNGFastPath`` decodes a still
/// PNG: ISA-L's igzip inflates the frame's `IDAT` or `fdAT` payloads where
/// they lie in the file, and ``PNGUnfilter`` undoes the filters, straight
/// into the canvas when an RGBA frame replaces what is under it.
///
/// The whole frame is inflated and checked before the canvas is touched:
/// a stream that is damaged, too short, too long or followed by more
/// bytes, or a filter type that is not one of PNG's five, makes it return
/// `false` with the canvas as it was, and libspng decodes the frame and
/// decides the outcome. So the pixels are always those libspng gives.
final class APNGFastFrame {
    /// 4 for RGBA, 3 for RGB (every pixel opaque).
    private let bytesPerPixel: Int
    /// The frame's filtered rows, reused from frame to frame.
    private var filtered: UnsafeMutablePointer<UInt8>
    private var capacity: Int

    /// A decoder for the frames of the file whose `IHDR` payload is
    /// `header` and whose `PLTE` and `tRNS` chunks are `paletteChunks`;
    /// `nil` unless they are 8-bit RGBA, or 8-bit RGB without `tRNS`, not
    /// interlaced.
    init?(header: [UInt8], paletteChunks: [UInt8]) {
        guard header.count == 13, header[8] == 8, header[12] == 0 else { return nil }
        switch header[9] {
        case 6: bytesPerPixel = 4
        case 2 where !Self.hasTransparency(paletteChunks): bytesPerPixel = 3
        default: return nil
        }
        capacity = 0
        filtered = .allocate(capacity: 0)
    }

    deinit {
        filtered.deallocate()
    }

    /// Whether `chunks` (whole chunks, one after another) hold a `tRNS`
    /// chunk, or cannot be read as chunks.
    private static func hasTransparency(_ chunks: [UInt8]) -> Bool {
        var offset = 0
        while offset + 12 <= chunks.count {
            let length = Int(chunks[offset]) << 24 | Int(chunks[offset + 1]) << 16 | Int(chunks[offset + 2]) << 8 | Int(chunks[offset + 3])
            if chunks[offset + 4..<offset + 8].elementsEqual("tRNS".utf8) { return true }
            offset += 12 + length
        }
        return offset != chunks.count
    }

    /// Decodes `frame` from `data` and draws it on `canvas` (RGBA8,
    /// `canvasWidth` pixels a row): replacing the pixels under it (`blend`
    /// 0) or composited over them (`blend` 1; an RGB frame is opaque, so
    /// both replace). `false`, with the canvas untouched, when libspng must
    /// decode the frame.
    func draw(_ frame: APNG.Frame, from data: Data, on canvas: UnsafeMutablePointer<UInt8>, canvasWidth: Int, blend: UInt8) -> Bool {
        let bytesPerPixel = bytesPerPixel
        let rowBytes = frame.width * bytesPerPixel
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
            let target = origin + row * canvasRowBytes
            if bytesPerPixel == 4 && blend == 0 {
                // Straight into the canvas; the row above, just written, is the frame's previous row.
                _ = PNGUnfilter.unfilter(source[0], source: source + 1, destination: target,
                                         previous: row > 0 ? UnsafePointer(target - canvasRowBytes) : nil,
                                         count: rowBytes, bytesPerPixel: 4)
                continue
            }
            // In place, each row moving up by its filter byte and those above, then drawn.
            let destination = filtered + row * rowBytes
            _ = PNGUnfilter.unfilter(source[0], source: source + 1, destination: destination,
                                     previous: row > 0 ? UnsafePointer(destination - rowBytes) : nil,
                                     count: rowBytes, bytesPerPixel: bytesPerPixel)
            if bytesPerPixel == 4 {
                imago_apng_blend_over_row(destination, target, frame.width)
            } else {
                for x in 0..<frame.width {
                    (target + 4 * x).update(from: destination + 3 * x, count: 3)
                    target[4 * x + 3] = 255
                }
            }
        }
        return true
    }
}
