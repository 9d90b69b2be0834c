import CHeif
import Foundation
import Imago

/// Encodes the first frame of an ``Image`` as HEIC with libheif and x265
/// (Debian's libheif links x265 in; ``isAvailable`` says whether the
/// libheif at hand has an HEVC encoder).
///
/// The image is converted to RGB, or RGBA when it has an alpha channel
/// that is not fully opaque (the alpha becomes an auxiliary image); the
/// colours are coded as YUV 4:2:0 at x265's `medium` preset, on the
/// calling thread (no thread pool of x265's own: callers encode images in
/// parallel already; on two busy cores that is three times faster than
/// the pool). An image's ``Image/colorProfile`` is embedded (a `colr` box
/// of type `prof`). libheif maps `quality` to x265's rate factor as
/// `(100 - quality) / 2`.
///
/// Safe to use from several threads at once; each call is independent.
///
/// libheif 1.15's x265 plugin (Debian 12's) never frees the `x265_param`
/// it allocates for each image: 1,168 bytes leak with every encode (about
/// 1.2 MB for a thousand images), whatever Imago does; a later libheif is
/// needed to stop it.
///
/// ```swift
/// let data = try HEICEncoder(quality: 60).encode(image)
/// ```
public struct HEICEncoder: ImageEncoding {
    /// Always ``ImageFormat/heic``.
    public var format: ImageFormat { .heic }

    /// The quality used when none is given: 60 (x265's rate factor 20),
    /// AVIF's default too. The image server and `imago fetch` use it
    /// (``ImageEncoders/defaultQuality(for:)``).
    public static let defaultQuality = 60

    /// The quality, from 0 (smallest) to 100 (best); clamped.
    public var quality: Int

    /// Creates an encoder.
    ///
    /// - Parameter quality: The quality, 0...100; default ``defaultQuality``.
    public init(quality: Int = HEICEncoder.defaultQuality) {
        self.quality = quality
    }

    /// Whether this process's libheif has an HEVC encoder (x265), which
    /// ``encode(_:)`` needs.
    public static var isAvailable: Bool { heif_have_encoder_for_format(heif_compression_HEVC) != 0 }

    /// Encodes the first frame of `image`.
    ///
    /// - Throws: ``ImageEncodingError`` with code
    ///   ``ImageEncodingError/Code/encodingFailed`` (the ``CodecError`` from
    ///   libheif as `underlying`) when libheif or x265 fails, or libheif has
    ///   no HEVC encoder.
    public func encode(_ image: Image) throws -> Data {
        try encode(image, exif: nil)
    }

    /// Encodes the first frame of `image`, with `exif` (a TIFF structure)
    /// as the file's `Exif` item when given.
    package func encode(_ image: Image, exif: Data?) throws -> Data {
        do {
            return try HEIFWriter.encode(image, compression: heif_compression_HEVC, exif: exif, storesRGBAsIs: false) { encoder in
                try HEIFFailure.check(heif_encoder_set_lossy_quality(encoder, Int32(min(max(quality, 0), 100))))
                try HEIFFailure.check(heif_encoder_set_parameter_string(encoder, "preset", "medium"))
                // libheif hands "x265:" parameters to x265_param_parse; without them x265 uses its pool.
                for option in Self.x265Options {
                    _ = heif_encoder_set_parameter(encoder, option.name, option.value)
                }
            }
        } catch let error as CodecError {
            throw ImageEncodingError(.encodingFailed, format: .heic, message: "\(error)", underlying: error)
        }
    }

    /// x265's options: no thread pool, one frame thread.
    static let x265Options: [(name: String, value: String)] = [("x265:pools", "none"), ("x265:frame-threads", "1")]
}
