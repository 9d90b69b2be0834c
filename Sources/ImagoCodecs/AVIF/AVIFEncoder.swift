import CHeif
import Foundation
import Imago

/// Encodes the first frame of an ``Image`` as AVIF with libheif and libaom.
///
/// Images are converted to RGB or RGBA first (gray is expanded); alpha is
/// kept when the image has an alpha channel that is not fully opaque.
/// Lossy output is YUV 4:2:0; lossless output is 4:4:4 with lossless
/// alpha. An image's ``Image/colorProfile`` is embedded (a `colr` box of
/// type `prof`); otherwise the file says sRGB (an `nclx` box).
///
/// AV1 encoding is slow next to JPEG and WebP: tens of milliseconds for a
/// small thumbnail, seconds for a photo at full size. ``speed`` trades
/// size for time. The encoder runs on the calling thread.
///
/// Lossy images are encoded as libavif (Pillow's AVIF plugin) encodes
/// them: libaom's all-intra mode, 4:2:0, the quantizer
/// `((100 - quality) * 63 + 50) / 100`, one tile, one thread; two of
/// libaom's tools are switched off: intra block copy (with it, flat
/// graphics and text took five times as long, for files no smaller) and
/// rectangular partitions (without them a photo takes 0.6 times as long;
/// at equal SSIM its file is up to 17% larger than with them, still no
/// larger than Pillow's). At the same SSIM as Pillow's files, Imago's are
/// about their size or smaller and take 0.6 to 0.75 times Pillow's time
/// on photos, a quarter on flat graphics
/// (`Benchmarks/avif-encoders.md`). Equal SSIM is not equal `quality`:
/// Pillow's libavif 1.4 tunes libaom for perception (`tune=iq`) and
/// spends more bytes at the same quantizer; Imago's 62 matches its 60 on
/// a photo.
///
/// Safe to use from several threads at once; each call is independent.
///
/// ```swift
/// let data = try AVIFEncoder(quality: 60).encode(image)
/// ```
public struct AVIFEncoder: ImageEncoding {
    /// Always ``ImageFormat/avif``.
    public var format: ImageFormat { .avif }

    /// The quality used when none is given: 60. The image server and
    /// `imago fetch` use it too (``ImageEncoders/defaultQuality(for:)``).
    public static let defaultQuality = 60

    /// The lossy quality, from 0 (smallest) to 100 (best); clamped.
    /// Ignored when ``lossless`` is set.
    public var quality: Int

    /// Whether to encode losslessly (4:4:4, every pixel kept).
    public var lossless: Bool

    /// libaom's speed, from 0 (slowest, smallest) to 9 (fastest); values
    /// outside ``speedRange`` are clamped to it. Default ``defaultSpeed``,
    /// libheif's and Pillow's. libaom 3.6 (Debian 12) loses detail at 7 and
    /// above: at low and middle qualities a file needs 1.3 to 8 times the
    /// bytes for the same SSIM. imgproxy's `IMGPROXY_AVIF_SPEED`.
    public var speed: Int

    /// The speeds libaom takes: 0 to 9.
    public static let speedRange = 0...9

    /// The speed used when none is given: 6.
    public static let defaultSpeed = 6

    /// Creates an encoder.
    ///
    /// - Parameters:
    ///   - quality: The lossy quality, 0...100; default ``defaultQuality``.
    ///   - lossless: Whether to encode losslessly; default `false`.
    ///   - speed: libaom's speed, 0...9 (clamped); default ``defaultSpeed``.
    public init(quality: Int = AVIFEncoder.defaultQuality, lossless: Bool = false, speed: Int = AVIFEncoder.defaultSpeed) {
        self.quality = quality
        self.lossless = lossless
        self.speed = speed
    }

    /// Encodes the first frame of `image`.
    ///
    /// - Throws: ``ImageEncodingError`` with code
    ///   ``ImageEncodingError/Code/encodingFailed`` (the ``CodecError`` from
    ///   libheif as `underlying`) when libheif or libaom fails.
    public func encode(_ image: Image) throws -> Data {
        try encode(image, exif: nil)
    }

    /// Encodes the first frame of `image`, with `exif` (a TIFF structure)
    /// as the file's `Exif` item when given.
    package func encode(_ image: Image, exif: Data?) throws -> Data {
        do {
            return try encodeWithLibheif(image, exif: exif)
        } catch let error as CodecError {
            throw ImageEncodingError(.encodingFailed, format: .avif, message: "\(error)", underlying: error)
        }
    }

    private func encodeWithLibheif(_ image: Image, exif: Data?) throws -> Data {
        try HEIFWriter.encode(image, compression: heif_compression_AV1, exif: exif, storesRGBAsIs: lossless) { encoder in
            try HEIFFailure.check(heif_encoder_set_lossy_quality(encoder, Int32(min(max(quality, 0), 100))))
            try HEIFFailure.check(heif_encoder_set_lossless(encoder, lossless ? 1 : 0))
            try HEIFFailure.check(heif_encoder_set_parameter_integer(encoder, "speed", Int32(Self.speedRange.clamping(speed))))
            try HEIFFailure.check(heif_encoder_set_parameter_integer(encoder, "threads", 1))
            if lossless {
                try HEIFFailure.check(heif_encoder_set_parameter_string(encoder, "chroma", "444"))
                try HEIFFailure.check(heif_encoder_set_parameter_boolean(encoder, "lossless-alpha", 1))
            } else {
                // libheif hands "aom:" parameters to aom_codec_set_option. A libheif
                // or libaom without them encodes as before: the result is not checked.
                for option in Self.lossyAOMOptions {
                    _ = heif_encoder_set_parameter(encoder, option.name, option.value)
                }
            }
        }
    }

    /// libaom's tools switched off for lossy images: intra block copy and
    /// rectangular partitions (measured in `Benchmarks/avif-encoders.md`).
    static let lossyAOMOptions: [(name: String, value: String)] = [
        ("aom:enable-intrabc", "0"), ("aom:enable-rect-partitions", "0"),
    ]
}
