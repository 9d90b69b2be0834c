import CDeflate
import CISAL
import CZlib
import CImagoKernels
import Foundation
import Imago

/// Encodes the first frame of an image as PNG.
///
/// Every ``PixelFormat`` maps to a PNG colour type directly (RGBA, RGB,
/// gray with alpha, gray), 8 bits per sample, except an RGB or RGBA image
/// of at most 256 colours, which is written indexed (a palette, and `tRNS`
/// for RGBA): the same pixels decoded, a third or a quarter of the bytes to
/// compress. An image's ``Image/colorProfile`` is embedded (`iCCP`).
///
/// Each row gets the filter whose output has the smallest sum of absolute
/// values (as libpng and Pillow choose; all five filters in one vectorised
/// pass), and the rows are compressed whole by the ``Compression`` chosen.
///
/// ``interlaced`` writes Adam7's seven passes (a browser shows a coarse
/// image early); ``paletteColors`` writes an indexed PNG of at most that
/// many colours, quantized by median cut as the GIF encoder's palettes are.
///
/// ```swift
/// let small = try PNGEncoder(interlaced: true, paletteColors: 64).encode(image)
/// ```
public struct PNGEncoder: ImageEncoding {
    /// How hard to compress: a choice of speed against size.
    public enum Compression: String, Sendable, Hashable, CaseIterable {
        /// ISA-L's igzip at level 1: several times faster than `default`,
        /// files a few percent larger on photos and up to twice as large on
        /// flat graphics.
        case fast
        /// zlib's run-length deflate (`Z_RLE`), unless libdeflate at level 6
        /// makes a sixteenth of the rows, in eight bands, over 2% smaller:
        /// run-length on photos (filtered photos are noise around zero, where
        /// short matches cost more than they save: files about the size of
        /// Pillow's, in half of libdeflate 6's time), libdeflate on
        /// screenshots, text and gradients (a repeated string is a match). At
        /// least as fast as pyvips' default (which writes no filters, files
        /// 1.5 to 3 times larger); `Benchmarks/png.md` has the numbers.
        case `default`
        /// The smallest of `default`'s choice, libdeflate's level 9 and
        /// zlib's level 9 with `Z_FILTERED` (as libpng and Pillow compress
        /// filtered rows): never larger than `default`, a few percent smaller
        /// on photos and flat graphics, in several times its time.
        case best
    }

    /// How hard to compress. Default: ``Compression/default``.
    public var compression: Compression
    /// Whether to mark an image with no profile of its own as sRGB (an
    /// `sRGB` chunk, 13 bytes). Default: `false`.
    public var embedsSRGBProfile: Bool

    /// Whether to write the image interlaced (Adam7, `IHDR`'s interlace
    /// method 1): larger files, shown coarse first while they load.
    /// Default: `false`. imgproxy's `IMGPROXY_PNG_INTERLACED`.
    public var interlaced: Bool
    /// At most how many colours to write: `nil` (the default) keeps every
    /// colour (truecolour, or indexed when the image has at most 256);
    /// 2 to 256 writes an indexed PNG (colour type 3) of at most that many,
    /// quantized by median cut with no dithering when the image has more,
    /// its alpha kept in a `tRNS` chunk, at 1 bit a pixel for 2 colours, 2
    /// for up to 4, 4 for up to 16, else 8 (as imgproxy chooses). Values
    /// outside ``paletteColorsRange`` are clamped to it. imgproxy's
    /// `IMGPROXY_PNG_QUANTIZE` with `IMGPROXY_PNG_QUANTIZATION_COLORS`.
    public var paletteColors: Int?

    /// The palette sizes ``paletteColors`` takes: 2 to 256.
    public static let paletteColorsRange = 2...256

    /// Creates a PNG encoder.
    public init(compression: Compression = .default, embedsSRGBProfile: Bool = false, interlaced: Bool = false,
                paletteColors: Int? = nil) {
        self.compression = compression
        self.embedsSRGBProfile = embedsSRGBProfile
        self.interlaced = interlaced
        self.paletteColors = paletteColors
    }

    /// The bits a palette index takes for a palette of `colors` entries, as
    /// imgproxy chooses them: 1 up to 2 colours, 2 up to 4, 4 up to 16, else 8.
    static func bitDepth(forColors colors: Int) -> Int {
        colors <= 2 ? 1 : colors <= 4 ? 2 : colors <= 16 ? 4 : 8
    }

    public var format: ImageFormat { .png }

    /// The eight bytes every PNG file starts with.
    static let signature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]

    public func encode(_ image: Image) throws -> Data {
        try encode(image, allowsPalette: true)
    }

    /// Encodes the first frame of `image`; without `allowsPalette`, in its
    /// own pixel format even when it has few colours (an icon's PNG image,
    /// kept 32-bit RGBA, the layout icon readers expect).
    func encode(_ image: Image, allowsPalette: Bool) throws -> Data {
        let encoded = try Self.imageData(of: image, compression: compression, allowsPalette: allowsPalette, interlaced: interlaced,
                                         paletteColors: allowsPalette ? paletteColors : nil)
        let compressed = encoded.data
        var png = Self.signature
        png.reserveCapacity(compressed.count + compressed.count / (1 << 20) * 12 + (image.colorProfile?.data.count ?? 0) + 1200)
        APNG.append(chunk: Array("IHDR".utf8), encoded.header, to: &png)
        if let profile = image.colorProfile {
            // The name, a zero, compression method 0, the zlib-compressed profile.
            let body = Array("ICC profile".utf8) + [0, 0] + (try Self.deflate(Array(profile.data), level: 6))
            APNG.append(chunk: Array("iCCP".utf8), body, to: &png)
        } else if embedsSRGBProfile {
            APNG.append(chunk: Array("sRGB".utf8), [0], to: &png)   // perceptual intent
        }
        if let palette = encoded.palette {
            APNG.append(chunk: Array("PLTE".utf8), palette.colors, to: &png)
            if !palette.alphas.isEmpty { APNG.append(chunk: Array("tRNS".utf8), palette.alphas, to: &png) }
        }
        // IDAT chunks of at most 1 MiB, so no chunk approaches PNG's 2^31 - 1 limit.
        var offset = 0
        repeat {
            let end = min(compressed.count, offset + (1 << 20))
            APNG.append(chunk: Array("IDAT".utf8), compressed[offset..<end], to: &png)
            offset = end
        } while offset < compressed.count
        APNG.append(chunk: Array("IEND".utf8), [], to: &png)
        return Data(png)
    }

    /// An image's pixels as PNG writes them: the `IHDR` chunk's body, the
    /// palette of an indexed image (`PLTE`'s body, and `tRNS`'s, empty when
    /// every entry is opaque), and the image data (the filtered rows as one
    /// zlib stream), what a PNG's `IDAT` chunks, or an APNG frame's, hold.
    struct EncodedImageData {
        var header: [UInt8]
        var palette: (colors: [UInt8], alphas: [UInt8])?
        var data: [UInt8]
    }

    /// The first frame of `image` as PNG image data. With `allowsPalette`,
    /// an RGB or RGBA image of at most 256 colours (at most `paletteColors`
    /// when given) is written as indexed colour (colour type 3): a third or
    /// a quarter of the bytes to filter and compress, the same pixels
    /// decoded (RGBA ones keep a `tRNS` chunk, so they decode with alpha).
    /// With `paletteColors` (clamped to ``paletteColorsRange``), any image
    /// of more colours, gray too, is quantized to that many, and indices
    /// are packed to ``bitDepth(forColors:)`` bits. `interlaced` writes
    /// Adam7's passes. APNG frames, which share one header, pass
    /// `allowsPalette` `false` and neither of the others.
    static func imageData(of image: Image, compression: Compression, allowsPalette: Bool, interlaced: Bool = false,
                          paletteColors: Int? = nil) throws -> EncodedImageData {
        guard image.width <= Int(Int32.max), image.height <= Int(Int32.max), image.width > 0, image.height > 0 else {
            throw ImageEncodingError(.unsupportedImage, format: .png, message: "\(image.width)x\(image.height) is not a PNG size")
        }
        let maximumColors = allowsPalette ? paletteColors.map(paletteColorsRange.clamping) : nil
        // Quantized gray goes through the palette as RGB.
        let image = maximumColors == nil || image.pixelFormat.bytesPerPixel >= 3
            ? image : image.firstFrame.converted(to: image.pixelFormat.hasAlpha ? .rgba8 : .rgb8)
        var colorType: UInt8 = switch image.pixelFormat {
        case .rgba8: 6
        case .rgb8: 2
        case .grayAlpha8: 4
        case .gray8: 0
        }
        let bytesPerPixel = image.pixelFormat.bytesPerPixel
        let (pixelCount, pixelOverflow) = image.width.multipliedReportingOverflow(by: image.height)
        let (filteredCount, overflow) = (image.width * bytesPerPixel + 1).multipliedReportingOverflow(by: image.height)
        guard !overflow, !pixelOverflow, filteredCount < Int.max / 2 else {
            throw ImageEncodingError(.unsupportedImage, format: .png, message: "the image is too large for PNG")
        }
        let pixels = image.pixels
        // An image of few colours as palette indices, one byte a pixel; nil
        // for any other, which a photo shows within its first few hundred pixels.
        var palette: (colors: [UInt8], alphas: [UInt8])?
        var indices: [UInt8] = []
        if allowsPalette, bytesPerPixel >= 3 {
            var entries = [UInt8](repeating: 0, count: 1024)
            var count: Int32 = -1
            indices = [UInt8](unsafeUninitializedCapacity: pixelCount) { buffer, initialized in
                count = pixels.withUnsafeBufferPointer { source in
                    imago_png_palette(source.baseAddress, image.bytesPerRow, image.width, image.height, bytesPerPixel,
                                      buffer.baseAddress, &entries)
                }
                initialized = count > 0 ? pixelCount : 0
            }
            if count > 0, Int(count) <= maximumColors ?? 256 {
                palette = paletteChunks(entries: entries, count: Int(count), hasAlpha: bytesPerPixel == 4)
            } else if let maximumColors {
                (palette, indices) = quantized(image, maximumColors: maximumColors)
            } else {
                indices = []
            }
            if palette != nil { colorType = 3 }
        }
        let bitDepth = palette != nil ? maximumColors.map(bitDepth(forColors:)) ?? 8 : 8
        let bitsPerPixel = palette == nil ? 8 * bytesPerPixel : bitDepth
        let filtered = palette == nil
            ? pixels.withUnsafeBufferPointer { filteredRows($0, stride: image.bytesPerRow, width: image.width, height: image.height,
                                                            bitsPerPixel: bitsPerPixel, interlaced: interlaced) }
            : indices.withUnsafeBufferPointer { filteredRows($0, stride: image.width, width: image.width, height: image.height,
                                                             bitsPerPixel: bitsPerPixel, interlaced: interlaced) }
        let header = bigEndian(UInt32(image.width)) + bigEndian(UInt32(image.height))
            + [UInt8(bitDepth), colorType, 0, 0, interlaced ? 1 : 0]
        let rowBytes = (image.width * bitsPerPixel + 7) / 8
        return EncodedImageData(header: header, palette: palette,
                                data: try zlib(filtered, rowLength: rowBytes + 1, compression: compression))
    }

    /// `PLTE`'s body and `tRNS`'s for `count` entries of `entries` (4 bytes
    /// each, red, green, blue, alpha, those below full alpha first). An
    /// image with alpha lists at least one in `tRNS`, so it decodes with
    /// alpha as it was.
    private static func paletteChunks(entries: [UInt8], count: Int, hasAlpha: Bool) -> (colors: [UInt8], alphas: [UInt8]) {
        var colors: [UInt8] = []
        colors.reserveCapacity(3 * count)
        for entry in 0..<count { colors += entries[(4 * entry)..<(4 * entry + 3)] }
        let translucent = (0..<count).prefix { entries[4 * $0 + 3] != 255 }.count
        let alphaCount = hasAlpha ? max(translucent, 1) : 0
        return (colors, (0..<alphaCount).map { entries[4 * $0 + 3] })
    }

    /// The first frame of `image` (RGB or RGBA) in at most `maximumColors`
    /// colours, chosen by the GIF encoder's median cut (``Palette``), alpha
    /// with them when any pixel is not opaque: the palette's chunks, and
    /// each pixel's entry, one byte a pixel.
    private static func quantized(_ image: Image, maximumColors: Int) -> (palette: (colors: [UInt8], alphas: [UInt8]), indices: [UInt8]) {
        let rgba = image.pixelFormat == .rgba8 ? image.firstFrame : image.firstFrame.converted(to: .rgba8)
        let keepsAlpha = !image.isOpaque
        let quantizer = Palette(rgba: rgba.pixels, width: rgba.width, height: rgba.height, bytesPerRow: rgba.bytesPerRow,
                                maximumColors: maximumColors, alpha: keepsAlpha ? .kept : .cutOff)
        // The entries below full alpha first, as `tRNS` wants them.
        let colors = quantizer.colors
        let order = colors.indices.filter { colors[$0].alpha != 255 } + colors.indices.filter { colors[$0].alpha == 255 }
        var remap = [UInt8](repeating: 0, count: 256)
        var entries: [UInt8] = []
        entries.reserveCapacity(4 * order.count)
        for (position, entry) in order.enumerated() {
            remap[entry] = UInt8(position)
            entries += [colors[entry].red, colors[entry].green, colors[entry].blue, colors[entry].alpha]
        }
        let (width, height, bytesPerRow) = (rgba.width, rgba.height, rgba.bytesPerRow)
        let indices = [UInt8](unsafeUninitializedCapacity: width * height) { buffer, initialized in
            rgba.pixels.withUnsafeBufferPointer { pixels in
                for row in 0..<height {
                    var at = row * bytesPerRow
                    for column in 0..<width {
                        let (red, green, blue, alpha) = (pixels[at], pixels[at + 1], pixels[at + 2], pixels[at + 3])
                        let entry = keepsAlpha ? quantizer.index(red, green, blue, alpha) : quantizer.index(red, green, blue)
                        buffer[row * width + column] = remap[Int(entry)]
                        at += 4
                    }
                }
            }
            initialized = width * height
        }
        return (paletteChunks(entries: entries, count: order.count, hasAlpha: image.pixelFormat.hasAlpha), indices)
    }

    /// Adam7's seven passes: the first pixel of each and the steps between its pixels.
    private static let adam7: [(x: Int, y: Int, dx: Int, dy: Int)] = [
        (0, 0, 8, 8), (4, 0, 8, 8), (0, 4, 4, 8), (2, 0, 4, 4), (0, 2, 2, 4), (1, 0, 2, 2), (0, 1, 1, 2),
    ]

    /// One pass over an image: its first pixel, its steps, its size, and
    /// the bytes of one of its rows.
    private struct Pass {
        var x: Int, y: Int, dx: Int, dy: Int
        var width: Int, height: Int, rowBytes: Int
    }

    /// The filtered rows (`imago_png_filter_rows`) of an image of
    /// `bitsPerPixel` bits a pixel, its rows `stride` bytes apart in
    /// `samples`: whole bytes a pixel for 8 bits and more, one byte a
    /// palette index for fewer, packed here. Interlaced, each of Adam7's
    /// passes that has pixels, one after the other, each filtered alone.
    private static func filteredRows(_ samples: UnsafeBufferPointer<UInt8>, stride: Int, width: Int, height: Int,
                                     bitsPerPixel: Int, interlaced: Bool) -> [UInt8] {
        let passes = (interlaced ? adam7 : [(0, 0, 1, 1)]).compactMap { pass -> Pass? in
            let passWidth = width > pass.x ? (width - pass.x + pass.dx - 1) / pass.dx : 0
            let passHeight = height > pass.y ? (height - pass.y + pass.dy - 1) / pass.dy : 0
            guard passWidth > 0, passHeight > 0 else { return nil }
            return Pass(x: pass.x, y: pass.y, dx: pass.dx, dy: pass.dy, width: passWidth, height: passHeight,
                        rowBytes: (passWidth * bitsPerPixel + 7) / 8)
        }
        let filterBytesPerPixel = max(1, bitsPerPixel / 8)
        let total = passes.reduce(0) { $0 + ($1.rowBytes + 1) * $1.height }
        // Filtered straight from the rows where they can be (any row padding
        // skipped), into memory that is written before it is read.
        let scratch = UnsafeMutablePointer<UInt8>.allocate(capacity: 5 * ((width * bitsPerPixel + 7) / 8))
        defer { scratch.deallocate() }
        return [UInt8](unsafeUninitializedCapacity: total) { buffer, count in
            var output = buffer.baseAddress!
            for pass in passes {
                if pass.dx == 1, pass.dy == 1, bitsPerPixel >= 8 {   // the whole image, whole bytes a pixel
                    imago_png_filter_rows(samples.baseAddress, stride, pass.rowBytes, pass.height, filterBytesPerPixel, output, scratch)
                } else {
                    let rows = gathered(samples, stride: stride, bitsPerPixel: bitsPerPixel, pass: pass)
                    rows.withUnsafeBufferPointer { rows in
                        imago_png_filter_rows(rows.baseAddress, pass.rowBytes, pass.rowBytes, pass.height, filterBytesPerPixel, output, scratch)
                    }
                }
                output += (pass.rowBytes + 1) * pass.height
            }
            count = total
        }
    }

    /// One pass's pixels as rows of its `rowBytes`, indices under 8 bits
    /// packed (the leftmost pixel in the high bits, as PNG packs them).
    private static func gathered(_ samples: UnsafeBufferPointer<UInt8>, stride: Int, bitsPerPixel: Int, pass: Pass) -> [UInt8] {
        var rows = [UInt8](repeating: 0, count: pass.rowBytes * pass.height)
        rows.withUnsafeMutableBufferPointer { rows in
            let bytesPerPixel = bitsPerPixel / 8, perByte = 8 / bitsPerPixel
            for row in 0..<pass.height {
                let source = samples.baseAddress! + (pass.y + row * pass.dy) * stride
                let destination = rows.baseAddress! + row * pass.rowBytes
                for column in 0..<pass.width {
                    let x = pass.x + column * pass.dx
                    if bytesPerPixel > 0 {
                        (destination + column * bytesPerPixel).update(from: source + x * bytesPerPixel, count: bytesPerPixel)
                    } else {
                        destination[column / perByte] |= source[x] << (8 - bitsPerPixel * (column % perByte + 1))
                    }
                }
            }
        }
        return rows
    }

    /// Filtered rows of `rowLength` bytes as a zlib stream, compressed as
    /// `compression` says.
    static func zlib(_ input: [UInt8], rowLength: Int, compression: Compression) throws -> [UInt8] {
        switch compression {
        case .fast:
            return try isal(input)
        case .default:
            return try runLengthWins(input, rowLength: rowLength) ? try zlibRunLength(input) : try deflate(input, level: 6)
        case .best:
            // The smallest of default's choice, libdeflate's level 9 and
            // zlib's level 9 for filtered data (the choice of libpng and
            // Pillow, short matches left as literals).
            var smallest = try zlib(input, rowLength: rowLength, compression: .default)
            for candidate in [try deflate(input, level: 9), try zlibFiltered(input)] where candidate.count < smallest.count {
                smallest = candidate
            }
            return smallest
        }
    }

    /// Whether zlib's run-length deflate (Z_RLE: runs of a byte, no other
    /// matches) makes `input` at most 2% larger than libdeflate's level 6, as
    /// compressing eight bands of rows evenly spread through it says, a
    /// sixteenth of it (all of it when it is under 256 KiB). Filtered photos
    /// are mostly noise around zero, where libdeflate's short matches cost
    /// more than they save and take twice the time; screenshots, text and
    /// gradients repeat longer strings, which only libdeflate finds.
    static func runLengthWins(_ input: [UInt8], rowLength: Int) throws -> Bool {
        let sample: [UInt8]
        if input.count < 256 << 10 {
            sample = input
        } else {
            let rows = input.count / rowLength, bands = 8
            let bandRows = max(1, min(rows / bands, (input.count / 16 / bands + rowLength - 1) / rowLength))
            var bytes: [UInt8] = []
            bytes.reserveCapacity(bands * bandRows * rowLength)
            for band in 0..<bands {
                let first = (rows - bandRows) * band / (bands - 1)
                bytes += input[(first * rowLength)..<((first + bandRows) * rowLength)]
            }
            sample = bytes
        }
        // Up to 2% larger: half the time is worth that much (photo-12mp:
        // 0.5% larger, 350 instead of 700 ms); text is several times larger.
        return try zlibRunLength(sample).count * 50 <= (try deflate(sample, level: 6)).count * 51
    }

    /// `input` as a zlib stream by zlib at level 6 with Z_RLE.
    static func zlibRunLength(_ input: [UInt8]) throws -> [UInt8] {
        try zlibStream(input, level: 6, strategy: Z_RLE)
    }

    /// `input` as a zlib stream by zlib at level 9 with Z_FILTERED.
    static func zlibFiltered(_ input: [UInt8]) throws -> [UInt8] {
        try zlibStream(input, level: 9, strategy: Z_FILTERED)
    }

    /// `input` as a zlib stream by zlib in one call.
    private static func zlibStream(_ input: [UInt8], level: Int32, strategy: Int32) throws -> [UInt8] {
        let bound = imago_zlib_bound(input.count)
        let output = [UInt8](unsafeUninitializedCapacity: bound) { destination, count in
            count = input.withUnsafeBufferPointer { source in
                imago_zlib_compress(source.baseAddress, source.count, destination.baseAddress, destination.count, level, strategy)
            }
        }
        guard !output.isEmpty else {
            throw ImageEncodingError(.encodingFailed, format: .png, message: "zlib could not compress the image")
        }
        return output
    }

    /// `input` as a zlib stream by libdeflate at `level`.
    static func deflate(_ input: [UInt8], level: Int32) throws -> [UInt8] {
        guard let compressor = libdeflate_alloc_compressor(level) else {
            throw ImageEncodingError(.encodingFailed, format: .png, message: "libdeflate could not allocate a compressor")
        }
        defer { libdeflate_free_compressor(compressor) }
        let bound = libdeflate_zlib_compress_bound(compressor, input.count)
        let output = [UInt8](unsafeUninitializedCapacity: bound) { destination, count in
            count = input.withUnsafeBytes { source in
                libdeflate_zlib_compress(compressor, source.baseAddress, source.count, destination.baseAddress, destination.count)
            }
        }
        guard !output.isEmpty else {
            throw ImageEncodingError(.encodingFailed, format: .png, message: "libdeflate could not compress the image")
        }
        return output
    }

    /// `input` as a zlib stream by ISA-L's igzip at level 1, in one call.
    private static func isal(_ input: [UInt8]) throws -> [UInt8] {
        var stream = isal_zstream()
        isal_deflate_stateless_init(&stream)
        let levelBufferSize = Int(imago_isal_level1_buffer_size())
        let levelBuffer = UnsafeMutablePointer<UInt8>.allocate(capacity: levelBufferSize)
        defer { levelBuffer.deallocate() }
        // Stored blocks at worst: 5 bytes per 64 KiB and the zlib header and checksum.
        let capacity = input.count + input.count / 16_000 * 5 + 1024
        guard capacity <= UInt32.max else {
            throw ImageEncodingError(.unsupportedImage, format: .png, message: "the image is too large for one ISA-L stream")
        }
        var status: Int32 = 0
        let output = [UInt8](unsafeUninitializedCapacity: capacity) { destination, count in
            status = input.withUnsafeBufferPointer { source in
                stream.level = 1
                stream.level_buf = levelBuffer
                stream.level_buf_size = UInt32(levelBufferSize)
                stream.gzip_flag = UInt16(IGZIP_ZLIB)
                stream.next_in = UnsafeMutablePointer(mutating: source.baseAddress)
                stream.avail_in = UInt32(source.count)
                stream.next_out = destination.baseAddress
                stream.avail_out = UInt32(destination.count)
                stream.end_of_stream = 1
                stream.flush = UInt16(NO_FLUSH)
                return isal_deflate_stateless(&stream)
            }
            count = status == COMP_OK ? Int(stream.total_out) : 0
        }
        guard status == COMP_OK else {
            throw ImageEncodingError(.encodingFailed, format: .png, message: "ISA-L could not compress the image (\(status))")
        }
        return output
    }
}

extension PNGEncoder {
    /// `value`'s four bytes, most significant first, as PNG writes numbers.
    static func bigEndian(_ value: UInt32) -> [UInt8] {
        [UInt8(value >> 24), UInt8(truncatingIfNeeded: value >> 16), UInt8(truncatingIfNeeded: value >> 8), UInt8(truncatingIfNeeded: value)]
    }
}
