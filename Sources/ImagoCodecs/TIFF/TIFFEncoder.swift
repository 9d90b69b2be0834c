import CTiff
import Foundation
import Imago

/// Encodes the first frame of an ``Image`` as a TIFF with libtiff, in
/// memory: one page, 8 bits per sample, its pixel format kept (RGB, RGBA,
/// gray, gray and alpha; alpha unassociated), rows in strips of about
/// 256 KB compressed with deflate (Adobe's, with the horizontal
/// predictor) or LZW. An image's ``Image/colorProfile`` is embedded
/// (`ICCProfile`). Images over 4 GB of pixels are written as BigTIFF.
///
/// Safe to use from several threads at once; each call is independent.
///
/// ```swift
/// let data = try TIFFEncoder(compression: .lzw).encode(image)
/// ```
public struct TIFFEncoder: ImageEncoding {
    /// How the strips are compressed.
    public enum Compression: String, Sendable, Hashable, CaseIterable {
        /// Deflate (zlib, compression 8), with the horizontal predictor:
        /// the smaller files.
        case deflate
        /// LZW (compression 5), with the horizontal predictor: what every
        /// TIFF reader since 1992 reads.
        case lzw
    }

    /// Always ``ImageFormat/tiff``.
    public var format: ImageFormat { .tiff }

    /// How the strips are compressed. Default: ``Compression/deflate``.
    public var compression: Compression

    /// Creates an encoder.
    public init(compression: Compression = .deflate) {
        self.compression = compression
    }

    /// Encodes the first frame of `image`.
    ///
    /// - Throws: ``ImageEncodingError``: `unsupportedImage` for a side
    ///   over 2^32 - 1, `encodingFailed` (libtiff's ``CodecError`` as
    ///   `underlying`) when libtiff fails.
    public func encode(_ image: Image) throws -> Data {
        let image = image.firstFrame
        guard let width = UInt32(exactly: image.width), let height = UInt32(exactly: image.height) else {
            throw ImageEncodingError(.unsupportedImage, format: .tiff, message: "\(image.width)x\(image.height) is not a TIFF size")
        }
        let samples = image.pixelFormat.bytesPerPixel
        let rowBytes = image.width * samples
        let (total, overflow) = rowBytes.multipliedReportingOverflow(by: image.height)
        guard !overflow else {
            throw ImageEncodingError(.unsupportedImage, format: .tiff, message: "\(image.width)x\(image.height) is too large")
        }
        let rowsPerStrip = max(1, min(image.height, (256 << 10) / max(rowBytes, 1)))
        do {
            return try TIFFMemory.writing(bigTIFF: total > 0xF000_0000) { handle, stream in
                try TIFFFields.set(handle, TIFFTAG_IMAGEWIDTH, width)
                try TIFFFields.set(handle, TIFFTAG_IMAGELENGTH, height)
                try TIFFFields.set(handle, TIFFTAG_BITSPERSAMPLE, Int32(8))
                try TIFFFields.set(handle, TIFFTAG_SAMPLESPERPIXEL, Int32(samples))
                try TIFFFields.set(handle, TIFFTAG_PHOTOMETRIC, image.pixelFormat.isGray ? PHOTOMETRIC_MINISBLACK : PHOTOMETRIC_RGB)
                try TIFFFields.set(handle, TIFFTAG_PLANARCONFIG, PLANARCONFIG_CONTIG)
                try TIFFFields.set(handle, TIFFTAG_ORIENTATION, ORIENTATION_TOPLEFT)
                try TIFFFields.set(handle, TIFFTAG_COMPRESSION, compression == .deflate ? COMPRESSION_ADOBE_DEFLATE : COMPRESSION_LZW)
                try TIFFFields.set(handle, TIFFTAG_PREDICTOR, PREDICTOR_HORIZONTAL)
                try TIFFFields.set(handle, TIFFTAG_ROWSPERSTRIP, UInt32(rowsPerStrip))
                if image.pixelFormat.hasAlpha {
                    var extra = [UInt16(EXTRASAMPLE_UNASSALPHA)]
                    try extra.withUnsafeMutableBufferPointer { try TIFFFields.set(handle, TIFFTAG_EXTRASAMPLES, Int32(1), $0.baseAddress!) }
                }
                if let profile = image.colorProfile, let count = UInt32(exactly: profile.data.count) {
                    try profile.data.withUnsafeBytes { try TIFFFields.set(handle, TIFFTAG_ICCPROFILE, count, $0.baseAddress!.assumingMemoryBound(to: UInt8.self)) }
                }
                try Self.writeStrips(of: image, rowsPerStrip: rowsPerStrip, to: handle, stream: stream)
            }
        } catch let error as CodecError {
            throw ImageEncodingError(.encodingFailed, format: .tiff, message: "\(error)", underlying: error)
        }
    }

    /// Writes the rows of `image`, `rowsPerStrip` to a strip.
    private static func writeStrips(of image: Image, rowsPerStrip: Int, to handle: OpaquePointer, stream: TIFFStream) throws {
        let rowBytes = image.width * image.pixelFormat.bytesPerPixel
        var strip = [UInt8](repeating: 0, count: rowBytes * rowsPerStrip)
        try image.pixels.withUnsafeBytes { pixels in
            try strip.withUnsafeMutableBytes { strip in
                for (index, first) in stride(from: 0, to: image.height, by: rowsPerStrip).enumerated() {
                    let rows = min(rowsPerStrip, image.height - first)
                    for row in 0..<rows {
                        memcpy(strip.baseAddress! + row * rowBytes, pixels.baseAddress! + (first + row) * image.bytesPerRow, rowBytes)
                    }
                    guard TIFFWriteEncodedStrip(handle, UInt32(index), strip.baseAddress, tmsize_t(rows * rowBytes)) >= 0 else {
                        throw CodecError.libtiff(.call("TIFFWriteEncodedStrip", message: stream.errors.first ?? "strip \(index) was not written"))
                    }
                }
            }
        }
    }
}
