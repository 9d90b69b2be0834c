import CDeflate
import CISAL
import CImagoKernels
import Foundation
import Imago

/// Encodes the first frame of an image as PNG.
///
/// Every ``PixelFormat`` maps to a PNG colour type directly (RGBA, RGB,
/// gray with alpha, gray), 8 bits per sample. An image's
/// ``Image/colorProfile`` is embedded (`iCCP`).
///
/// Each row gets the filter whose output has the smallest sum of absolute
/// values (as libpng and Pillow choose, in vectorised C), and the rows are
/// compressed whole by the ``Compression`` chosen: ISA-L's igzip for
/// ``Compression/fast``, libdeflate for the others.
public struct PNGEncoder: ImageEncoding {
    /// How hard to compress: a choice of speed against size.
    public enum Compression: String, Sendable, Hashable, CaseIterable {
        /// ISA-L's igzip at level 1: several times faster than `default`,
        /// files a few percent larger on photos and up to twice as large on
        /// flat graphics.
        case fast
        /// libdeflate at level 6: files about the size of zlib's level 9
        /// at a third of zlib level 6's time.
        case `default`
        /// The smaller of libdeflate's levels 9 and 6: files up to a few
        /// percent smaller than `default`'s, never larger, in 1.3 to 3 times
        /// its time (libdeflate's levels 10 to 12 cost up to 60 times on
        /// screenshots for 1 or 2 percent more).
        case best
    }

    /// How hard to compress. Default: ``Compression/default``.
    public var compression: Compression
    /// Whether to mark an image with no profile of its own as sRGB (an
    /// `sRGB` chunk, 13 bytes). Default: `false`.
    public var embedsSRGBProfile: Bool

    /// Creates a PNG encoder.
    public init(compression: Compression = .default, embedsSRGBProfile: Bool = false) {
        self.compression = compression
        self.embedsSRGBProfile = embedsSRGBProfile
    }

    public var format: ImageFormat { .png }

    public func encode(_ image: Image) throws -> Data {
        let (header, compressed) = try Self.imageData(of: image, compression: compression)
        var png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
        png.reserveCapacity(compressed.count + compressed.count / (1 << 20) * 12 + (image.colorProfile?.data.count ?? 0) + 128)
        APNG.append(chunk: Array("IHDR".utf8), header, to: &png)
        if let profile = image.colorProfile {
            // The name, a zero, compression method 0, the zlib-compressed profile.
            let body = Array("ICC profile".utf8) + [0, 0] + (try Self.zlib(Array(profile.data), compression: .default))
            APNG.append(chunk: Array("iCCP".utf8), body, to: &png)
        } else if embedsSRGBProfile {
            APNG.append(chunk: Array("sRGB".utf8), [0], to: &png)   // perceptual intent
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

    /// The `IHDR` chunk's body and the image data (the filtered rows of the
    /// first frame as one zlib stream) of `image`: what a PNG's `IDAT`
    /// chunks, or an APNG frame's, hold.
    static func imageData(of image: Image, compression: Compression) throws -> (header: [UInt8], data: [UInt8]) {
        guard image.width <= Int(Int32.max), image.height <= Int(Int32.max), image.width > 0, image.height > 0 else {
            throw ImageEncodingError(.unsupportedImage, format: .png, message: "\(image.width)x\(image.height) is not a PNG size")
        }
        let colorType: UInt8 = switch image.pixelFormat {
        case .rgba8: 6
        case .rgb8: 2
        case .grayAlpha8: 4
        case .gray8: 0
        }
        let bytesPerPixel = image.pixelFormat.bytesPerPixel
        let rowBytes = image.width * bytesPerPixel
        let (filteredCount, overflow) = (rowBytes + 1).multipliedReportingOverflow(by: image.height)
        guard !overflow, filteredCount < Int.max / 2 else {
            throw ImageEncodingError(.unsupportedImage, format: .png, message: "the image is too large for PNG")
        }
        // Filtered straight from the first frame's rows (any row padding
        // skipped), into memory that is written before it is read.
        let scratch = UnsafeMutablePointer<UInt8>.allocate(capacity: 5 * rowBytes)
        defer { scratch.deallocate() }
        let pixels = image.pixels
        let filtered = [UInt8](unsafeUninitializedCapacity: filteredCount) { buffer, count in
            pixels.withUnsafeBufferPointer { source in
                imago_png_filter_rows(source.baseAddress, image.bytesPerRow, rowBytes, image.height, bytesPerPixel,
                                      buffer.baseAddress, scratch)
            }
            count = filteredCount
        }
        let header = bigEndian(UInt32(image.width)) + bigEndian(UInt32(image.height)) + [8, colorType, 0, 0, 0]
        return (header, try zlib(filtered, compression: compression))
    }

    /// `input` as a zlib stream, compressed as `compression` says.
    static func zlib(_ input: [UInt8], compression: Compression) throws -> [UInt8] {
        switch compression {
        case .fast:
            return try isal(input)
        case .best:
            // libdeflate's level 9 searches harder, yet loses to level 6 on
            // some flat graphics: the smaller of the two.
            let (harder, lazier) = (try deflate(input, level: 9), try deflate(input, level: 6))
            return harder.count <= lazier.count ? harder : lazier
        case .default:
            return try deflate(input, level: 6)
        }
    }

    /// `input` as a zlib stream by libdeflate at `level`.
    private static func deflate(_ input: [UInt8], level: Int32) throws -> [UInt8] {
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
