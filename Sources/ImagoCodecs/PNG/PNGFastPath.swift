import CDeflate
import CSpng
import Foundation
import Imago

/// The common PNGs decoded without libspng's inflate and unfilter: ISA-L's
/// igzip inflates the image data straight from its chunks
/// (``InflateStream``), and ``PNGUnfilter`` undoes the filters.
///
/// It takes only 8-bit RGB and RGBA images, not interlaced, whose image
/// data is one run of `IDAT` chunks followed by an empty `IEND` chunk that
/// ends the file, and whose output needs no conversion. libspng has already
/// read and checked every chunk before the image data. Anything else, and
/// any failure (a checksum, a stream that is too short or too long or
/// followed by more bytes, an unknown filter) returns `nil`, and libspng
/// decodes the same bytes. So the fast path never accepts a file libspng
/// rejects or rejects one it accepts; it is only faster when it says yes.
///
/// A thumbnail is made a row at a time, as the rows are inflated, so its
/// memory is the thumbnail plus 256 KiB of the source's rows (one row, when
/// a row is longer).
enum PNGFastPath {
    /// About how many bytes of filtered rows a thumbnail decode inflates at
    /// once. A PNG thumbnail decodes about a tenth faster than with one row
    /// at a time (igzip runs its fastest loop with room to write), and the
    /// batch still fits a core's L2 cache.
    static let batchBytes = 256 << 10

    /// Decodes `data`, to `plan`'s size when given, or returns `nil` to let
    /// libspng decode it.
    ///
    /// - Parameter format: The format libspng would produce: `.rgb8` for
    ///   colour type 2 without `tRNS`, `.rgba8` for colour type 6.
    /// - Parameter maximumChunkLength: The longest chunk read; a file with
    ///   a longer one is left to libspng (the decode's
    ///   ``PNGChunkLimits/chunkSize``).
    /// - Parameter batchBytes: For a thumbnail, about how many bytes of
    ///   rows are inflated at once (at least one row); tests lower it.
    static func decode(_ data: Data, header: spng_ihdr, format: PixelFormat, plan: ResamplingPlan?,
                       maximumChunkLength: Int = PNGChunkLimits.standard.chunkSize, batchBytes: Int = batchBytes) -> Image? {
        let colorType: UInt8
        switch format {
        case .rgb8: colorType = 2
        case .rgba8: colorType = 6
        case .gray8, .grayAlpha8: return nil
        }
        guard header.bit_depth == 8, header.interlace_method == 0, header.color_type == colorType else { return nil }
        let width = Int(header.width), height = Int(header.height)
        return data.withUnsafeBytes { bytes -> Image? in
            guard let chunks = imageDataChunks(in: bytes, maximumChunkLength: maximumChunkLength) else { return nil }
            var stream = InflateStream(chunks: chunks)
            let bytesPerPixel = format.bytesPerPixel
            let rowBytes = width * bytesPerPixel
            if let plan {
                // The filtered rows (each a filter byte and a row), inflated a batch at a time.
                let stride = rowBytes + 1
                let batch = max(1, min(height, batchBytes / stride))
                let rows = UnsafeMutablePointer<UInt8>.allocate(capacity: batch * stride)
                defer { rows.deallocate() }
                return thumbnail(plan: plan) { row in
                    let slot = row % batch
                    if slot == 0, !stream.read(into: rows, count: min(batch, height - row) * stride) { return nil }
                    return UnsafePointer(rows + slot * stride)
                }
                .flatMap { stream.finish() ? $0 : nil }
            }
            let filteredCount = height * (rowBytes + 1)
            var decoded = false
            let pixels = [UInt8](pixelCapacity: filteredCount) { buffer, count in
                count = 0
                let base = buffer.baseAddress!
                guard stream.read(into: base, count: filteredCount), stream.finish() else { return }
                // In place: row y moves up by y + 1 bytes as its filter byte is dropped.
                for row in 0..<height {
                    let source = base + row * (rowBytes + 1)
                    let destination = base + row * rowBytes
                    let previous = row > 0 ? UnsafePointer(destination - rowBytes) : nil
                    guard PNGUnfilter.unfilter(source[0], source: source + 1, destination: destination, previous: previous,
                                               count: rowBytes, bytesPerPixel: bytesPerPixel) else { return }
                }
                count = height * rowBytes
                decoded = true
            }
            return decoded ? Image(width: width, height: height, pixelFormat: format, pixels: pixels) : nil
        }
    }

    /// Unfilters the rows `filteredRow` gives (each a filter byte and one
    /// source row; `nil` when the data runs out) into two alternating rows
    /// that feed the resampler.
    private static func thumbnail(plan: ResamplingPlan, filteredRow: (Int) -> UnsafePointer<UInt8>?) -> Image? {
        let rowBytes = plan.sourceWidth * plan.format.bytesPerPixel
        let rows = UnsafeMutablePointer<UInt8>.allocate(capacity: 2 * rowBytes)
        defer { rows.deallocate() }
        let pixels = try? plan.makePixels { resampler in
            for row in 0..<plan.sourceHeight {
                guard let source = filteredRow(row) else { throw Declined() }
                let destination = rows + (row % 2) * rowBytes
                let previous = row > 0 ? UnsafePointer(rows + ((row + 1) % 2) * rowBytes) : nil
                guard PNGUnfilter.unfilter(source[0], source: source + 1, destination: destination, previous: previous,
                                           count: rowBytes, bytesPerPixel: plan.format.bytesPerPixel) else { throw Declined() }
                resampler.append(row: destination)
            }
        }
        return pixels.map { Image(width: plan.width, height: plan.height, pixelFormat: plan.format, pixels: $0) }
    }

    /// The image data ran out or a row's filter type is not one of PNG's
    /// five: libspng decodes the file and reports the error.
    private struct Declined: Error {}

    /// The payloads of the `IDAT` run, each chunk's CRC checked, or `nil`
    /// unless the run is followed by an empty `IEND` that ends the file
    /// and no chunk is longer than `maximumChunkLength`.
    /// The chunks before the run were checked by libspng.
    static func imageDataChunks(in bytes: UnsafeRawBufferPointer, maximumChunkLength: Int) -> [UnsafeRawBufferPointer]? {
        var offset = 8
        var chunks: [UnsafeRawBufferPointer] = []
        while offset + 12 <= bytes.count {
            let length = Int(bigEndian32(bytes, at: offset))
            guard length <= maximumChunkLength, length <= bytes.count - offset - 12 else { return nil }
            let type = bigEndian32(bytes, at: offset + 4)
            let next = offset + 12 + length
            let isImageData = type == 0x4944_4154   // IDAT
            if isImageData || !chunks.isEmpty {
                let checked = UnsafeRawBufferPointer(rebasing: bytes[offset + 4..<offset + 8 + length])
                guard libdeflate_crc32(0, checked.baseAddress, checked.count) == bigEndian32(bytes, at: offset + 8 + length) else { return nil }
            }
            if isImageData {
                chunks.append(UnsafeRawBufferPointer(rebasing: bytes[offset + 8..<offset + 8 + length]))
            } else if !chunks.isEmpty {
                let isEnd = type == 0x4945_4E44   // IEND
                return isEnd && length == 0 && next == bytes.count ? chunks : nil
            }
            offset = next
        }
        return nil
    }

    /// The big-endian 32-bit number at `offset`.
    static func bigEndian32(_ bytes: UnsafeRawBufferPointer, at offset: Int) -> UInt32 {
        UInt32(bytes[offset]) << 24 | UInt32(bytes[offset + 1]) << 16 | UInt32(bytes[offset + 2]) << 8 | UInt32(bytes[offset + 3])
    }
}
