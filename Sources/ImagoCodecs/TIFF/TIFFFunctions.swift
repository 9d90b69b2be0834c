import CTiff
import Foundation
import Imago

extension CodecFunctions where State == TIFFState {
    /// The production table for TIFF, over libtiff, read from memory
    /// (`TIFFClientOpen`, no temporary file): the first page (directory)
    /// of the file.
    ///
    /// `open` reads the first directory's fields: size, samples, bit
    /// depth, photometric interpretation, alpha (extra samples),
    /// orientation and ICC profile, and asks libtiff whether it can turn
    /// the image into RGBA (`TIFFRGBAImageOK`), so an image it cannot is
    /// refused from its header. No pixels are decoded; ``CodecDecoder``
    /// checks the size against ``ImageDecodingOptions/maximumPixelCount``
    /// first, and no single allocation inside libtiff may exceed 16 bytes
    /// for each pixel the limit allows.
    ///
    /// `makeImage` reads 8-bit RGB, RGBA and gray (with or without
    /// unassociated alpha) strips as they are stored, to `.rgb8`, `.rgba8`,
    /// `.gray8` or `.grayAlpha8`, and strips of the same layouts with 9 to
    /// 32 bits a sample (integers scaled over their range, 32-bit floats
    /// over 0 to 1; libtiff's RGBA reader refuses 12 and 32 bits) likewise;
    /// anything else (tiles, palettes, CMYK, YCbCr, 1 to 4 bits,
    /// associated alpha) goes through
    /// libtiff's RGBA conversion (`TIFFReadRGBAImageOriented`) and comes
    /// out as `.rgb8` or `.rgba8` with straight alpha (`.gray8` for a gray
    /// image without alpha). The TIFF orientation is applied, as browsers
    /// and imgproxy apply it. A page that ends early is an error.
    ///
    /// libtiff's errors and warnings are collected for the call, never
    /// printed; errors are ``CodecError`` values with `library == "libtiff"`
    /// and libtiff's first message.
    ///
    /// ```swift
    /// let decoder = CodecDecoder(format: .tiff, functions: .tiff)
    /// let image = try decoder.decode(data)
    /// ```
    public static var tiff: CodecFunctions<TIFFState> {
        CodecFunctions(
            open: { data, options in
                let state = try TIFFState(reading: data, options: options)
                var opened = OpenedImage(width: state.width, height: state.height, state: state, colorProfile: state.colorProfile)
                opened.orientation = state.orientation
                return opened
            },
            makeImage: { opened, _, options in
                try opened.state.decode(options: options).applying(opened.state.orientation)
            }
        )
    }
}

/// What the TIFF table's `open` read from the first directory, kept with
/// the data for its `makeImage`.
///
/// Only `CodecFunctions.tiff` makes one.
public struct TIFFState: Sendable {
    /// The encoded file.
    let data: Data
    /// The stored width.
    let width: Int
    /// The stored height.
    let height: Int
    /// The orientation the `Orientation` field gives (1 to 8), applied after decoding.
    let orientation: ImageOrientation
    /// The raw value of the `Orientation` field, asked of libtiff's RGBA
    /// reader so that it leaves the rows as stored.
    let storedOrientation: UInt16
    /// The ICC profile the file embeds.
    let colorProfile: ColorProfile?
    /// The pixel format the stored samples map to directly, for 8-bit
    /// strips of RGB or gray samples; `nil` for the RGBA path.
    let directFormat: PixelFormat?
    /// How samples of 9 to 32 bits map to 8, for strips of RGB or gray
    /// samples that libtiff's RGBA reader does not take (12 or 32 bits, floats).
    let wideSamples: WideSamples?
    /// Whether the image has alpha (an extra sample that is alpha).
    let hasAlpha: Bool
    /// Whether the image is gray (one colour sample).
    let isGray: Bool

    /// The largest embedded colour profile read (larger ones are ignored).
    static let maximumProfileBytes = 4 << 20

    /// The largest single allocation libtiff may make for `options`: 16
    /// bytes for each pixel the limit allows (four 32-bit samples), and 1 MB more.
    static func maximumAllocation(_ options: ImageDecodingOptions) -> Int {
        let (bytes, overflow) = options.maximumPixelCount.multipliedReportingOverflow(by: 16)
        return overflow ? Int.max / 2 : min(Int.max / 2, bytes + (1 << 20))
    }

    /// Reads the first directory of `data`.
    init(reading data: Data, options: ImageDecodingOptions) throws {
        let fields = try TIFFMemory.reading(data, maximumAllocation: Self.maximumAllocation(options)) { handle, stream in
            guard let width = TIFFFields.get(handle, TIFFTAG_IMAGEWIDTH, defaulted: false, as: UInt32.self),
                  let height = TIFFFields.get(handle, TIFFTAG_IMAGELENGTH, defaulted: false, as: UInt32.self) else {
                throw CodecError.libtiff(.unsupported("the first directory has no image size"))
            }
            let samples = Int(TIFFFields.get(handle, TIFFTAG_SAMPLESPERPIXEL, as: UInt16.self) ?? 1)
            let bits = Int(TIFFFields.get(handle, TIFFTAG_BITSPERSAMPLE, as: UInt16.self) ?? 1)
            let extraCount = TIFFFields.array(handle, TIFFTAG_EXTRASAMPLES, count: UInt16.self)?.1 ?? 0
            // Without the field, libtiff's RGBA reader takes one colour sample as gray and three as RGB; so does Imago.
            let photometric = TIFFFields.get(handle, TIFFTAG_PHOTOMETRIC, defaulted: false, as: UInt16.self).map(Int32.init)
                ?? (samples - extraCount >= 3 ? PHOTOMETRIC_RGB : PHOTOMETRIC_MINISBLACK)
            let planar = Int32(TIFFFields.get(handle, TIFFTAG_PLANARCONFIG, as: UInt16.self) ?? 1)
            let sampleFormat = Int32(TIFFFields.get(handle, TIFFTAG_SAMPLEFORMAT, as: UInt16.self) ?? 1)
            let orientation = TIFFFields.get(handle, TIFFTAG_ORIENTATION, as: UInt16.self) ?? 1
            var extra: [UInt16] = []
            if let (pointer, count) = TIFFFields.array(handle, TIFFTAG_EXTRASAMPLES, count: UInt16.self), count > 0, count < samples {
                extra = Array(UnsafeBufferPointer(start: pointer.assumingMemoryBound(to: UInt16.self), count: count))
            }
            var profile: ColorProfile?
            if let (pointer, count) = TIFFFields.array(handle, TIFFTAG_ICCPROFILE, count: UInt32.self), count > 0, count <= Self.maximumProfileBytes {
                profile = ColorProfile(data: Data(bytes: pointer, count: count))
            }
            let isGray = photometric == PHOTOMETRIC_MINISBLACK || photometric == PHOTOMETRIC_MINISWHITE
            let colorSamples = photometric == PHOTOMETRIC_RGB ? 3 : 1
            // libtiff's RGBA reader takes the first extra sample as alpha, and a fourth RGB sample without an extra-samples field.
            let alphaKind = extra.first.map(Int32.init) ?? (samples > colorSamples && photometric == PHOTOMETRIC_RGB ? EXTRASAMPLE_ASSOCALPHA : -1)
            let hasAlpha = (isGray || photometric == PHOTOMETRIC_RGB) && samples > colorSamples
                && (alphaKind == EXTRASAMPLE_ASSOCALPHA || alphaKind == EXTRASAMPLE_UNASSALPHA)
            // Stored as Imago's pixels: 8-bit unsigned strips of RGB, RGBA, gray or gray and alpha, alpha unassociated.
            var direct: PixelFormat?
            if TIFFIsTiled(handle) == 0, bits == 8, planar == PLANARCONFIG_CONTIG, sampleFormat == SAMPLEFORMAT_UINT,
               photometric == PHOTOMETRIC_RGB || photometric == PHOTOMETRIC_MINISBLACK,
               samples == colorSamples || (samples == colorSamples + 1 && alphaKind == EXTRASAMPLE_UNASSALPHA),
               TIFFScanlineSize(handle) == Int(width) * samples {
                direct = switch (colorSamples, samples > colorSamples) {
                case (3, false): .rgb8
                case (3, true): .rgba8
                case (_, false): .gray8
                default: .grayAlpha8
                }
            }
            // Wider samples (9 to 32 bits, integers or 32-bit floats) of the same layouts, scaled to 8 bits by Imago.
            var wide: WideSamples?
            if direct == nil, TIFFIsTiled(handle) == 0, (9...32).contains(bits), planar == PLANARCONFIG_CONTIG,
               photometric == PHOTOMETRIC_RGB || photometric == PHOTOMETRIC_MINISBLACK,
               samples == colorSamples || (samples == colorSamples + 1 && alphaKind == EXTRASAMPLE_UNASSALPHA),
               sampleFormat == SAMPLEFORMAT_UINT || sampleFormat == SAMPLEFORMAT_INT || (sampleFormat == SAMPLEFORMAT_IEEEFP && bits == 32),
               TIFFScanlineSize(handle) >= (Int(width) * samples * bits + 7) / 8 {
                let format: PixelFormat = switch (colorSamples, samples > colorSamples) {
                case (3, false): .rgb8
                case (3, true): .rgba8
                case (_, false): .gray8
                default: .grayAlpha8
                }
                wide = WideSamples(format: format, bits: bits, isSigned: sampleFormat == SAMPLEFORMAT_INT, isFloat: sampleFormat == SAMPLEFORMAT_IEEEFP)
            }
            if direct == nil && wide == nil {
                var message = [CChar](repeating: 0, count: 1024)
                guard TIFFRGBAImageOK(handle, &message) == 1 else {
                    let text = String(decoding: message.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
                    throw CodecError.libtiff(.unsupported(stream.errors.first ?? (text.isEmpty ? "libtiff cannot read this image as RGBA" : text)))
                }
            }
            return (Int(width), Int(height), orientation, profile, direct, wide, hasAlpha, isGray)
        }
        self.data = data
        (width, height, storedOrientation, colorProfile, directFormat, wideSamples, hasAlpha, isGray) = fields
        orientation = ImageOrientation(rawValue: Int(storedOrientation)) ?? .up
    }

    /// Decodes the first page, as stored (before the orientation).
    func decode(options: ImageDecodingOptions) throws -> Image {
        try TIFFMemory.reading(data, maximumAllocation: Self.maximumAllocation(options)) { handle, stream in
            if let directFormat { return try readStrips(handle, stream: stream, as: directFormat) }
            if let wideSamples { return try readWideStrips(handle, stream: stream, as: wideSamples) }
            return try readRGBA(handle, stream: stream)
        }
    }

    /// The scanlines of an 8-bit RGB(A) or gray (and alpha) image, as stored.
    private func readStrips(_ handle: OpaquePointer, stream: TIFFStream, as format: PixelFormat) throws -> Image {
        let rowBytes = width * format.bytesPerPixel
        var failure: (any Error)?
        let pixels = [UInt8](unsafeUninitializedCapacity: rowBytes * height) { buffer, count in
            for row in 0..<height where TIFFReadScanline(handle, buffer.baseAddress! + row * rowBytes, UInt32(row), 0) != 1 {
                failure = CodecError.libtiff(.call("TIFFReadScanline", message: stream.errors.first ?? "row \(row) could not be read"))
                buffer.baseAddress!.initialize(repeating: 0, count: rowBytes * height)
                break
            }
            count = rowBytes * height
        }
        if let failure { throw failure }
        return Image(width: width, height: height, pixelFormat: format, pixels: pixels)
    }

    /// The scanlines of an RGB(A) or gray (and alpha) image of wide samples, each scaled to 8 bits.
    private func readWideStrips(_ handle: OpaquePointer, stream: TIFFStream, as samples: WideSamples) throws -> Image {
        let channels = samples.format.bytesPerPixel
        var line = [UInt8](repeating: 0, count: Int(TIFFScanlineSize(handle)))
        var pixels = [UInt8](repeating: 0, count: width * height * channels)
        for row in 0..<height {
            guard TIFFReadScanline(handle, &line, UInt32(row), 0) == 1 else {
                throw CodecError.libtiff(.call("TIFFReadScanline", message: stream.errors.first ?? "row \(row) could not be read"))
            }
            line.withUnsafeBytes { line in
                for index in 0..<width * channels { pixels[row * width * channels + index] = samples.sample(index, of: line) }
            }
        }
        return Image(width: width, height: height, pixelFormat: samples.format, pixels: pixels)
    }

    /// The image through libtiff's RGBA reader, rows as stored, alpha made straight.
    private func readRGBA(_ handle: OpaquePointer, stream: TIFFStream) throws -> Image {
        let pixelCount = width * height
        var raster = [UInt32](repeating: 0, count: pixelCount)
        let status = raster.withUnsafeMutableBufferPointer { raster in
            // Asking for the stored orientation leaves the rows as stored; Imago applies the orientation.
            TIFFReadRGBAImageOriented(handle, UInt32(width), UInt32(height), raster.baseAddress, Int32(storedOrientation), 1)
        }
        guard status == 1 else {
            throw CodecError.libtiff(.call("TIFFReadRGBAImageOriented", message: stream.errors.first ?? "the image could not be read"))
        }
        let format: PixelFormat = hasAlpha ? .rgba8 : isGray ? .gray8 : .rgb8
        let channels = format.bytesPerPixel
        let pixels = [UInt8](unsafeUninitializedCapacity: pixelCount * channels) { buffer, count in
            raster.withUnsafeBufferPointer { raster in
                for pixel in 0..<pixelCount {
                    let abgr = raster[pixel]
                    let (red, green, blue, alpha) = (UInt8(abgr & 0xFF), UInt8(abgr >> 8 & 0xFF), UInt8(abgr >> 16 & 0xFF), UInt8(abgr >> 24))
                    switch channels {
                    case 1:
                        buffer[pixel] = red
                    case 3:
                        (buffer[3 * pixel], buffer[3 * pixel + 1], buffer[3 * pixel + 2]) = (red, green, blue)
                    default:
                        // libtiff premultiplies; Imago's pixels are straight.
                        (buffer[4 * pixel], buffer[4 * pixel + 1], buffer[4 * pixel + 2], buffer[4 * pixel + 3]) =
                            (Self.unpremultiplied(red, alpha), Self.unpremultiplied(green, alpha), Self.unpremultiplied(blue, alpha), alpha)
                    }
                }
            }
            count = pixelCount * channels
        }
        return Image(width: width, height: height, pixelFormat: format, pixels: pixels)
    }

    /// `value`, premultiplied by `alpha`, made straight again.
    @inline(__always)
    private static func unpremultiplied(_ value: UInt8, _ alpha: UInt8) -> UInt8 {
        guard alpha != 0 else { return 0 }
        guard alpha != 255 else { return value }
        return UInt8(min(255, (Int(value) * 255 + Int(alpha) / 2) / Int(alpha)))
    }
}

/// Samples of 9 to 32 bits in a scanline (16 and 32 in the machine's byte
/// order, as libtiff gives them; other widths packed, most significant bit
/// first), scaled to 8 bits: unsigned integers over their range, signed
/// ones over their positive range (negative values are 0), 32-bit floats
/// over 0 to 1.
struct WideSamples: Sendable, Hashable {
    /// The pixel format the samples become.
    let format: PixelFormat
    /// Bits per sample, 9 to 32.
    let bits: Int
    let isSigned: Bool
    let isFloat: Bool

    /// Sample `index` of `line`, scaled to 8 bits.
    func sample(_ index: Int, of line: UnsafeRawBufferPointer) -> UInt8 {
        if isFloat {
            let value = Float(bitPattern: line.loadUnaligned(fromByteOffset: 4 * index, as: UInt32.self))
            return value.isNaN ? 0 : UInt8((min(max(value, 0), 1) * 255).rounded())
        }
        var raw: UInt64
        switch bits {
        case 16: raw = UInt64(line.loadUnaligned(fromByteOffset: 2 * index, as: UInt16.self))
        case 32: raw = UInt64(line.loadUnaligned(fromByteOffset: 4 * index, as: UInt32.self))
        default:
            raw = 0
            let first = index * bits
            for bit in first..<first + bits {
                raw = raw << 1 | UInt64(line[bit >> 3] >> (7 - UInt8(bit & 7)) & 1)
            }
        }
        var maximum = (UInt64(1) << UInt64(bits)) - 1
        if isSigned {
            if raw >> UInt64(bits - 1) & 1 == 1 { return 0 }
            maximum >>= 1
        }
        return UInt8((raw * 255 + maximum / 2) / maximum)
    }
}
