import CWebP
import Foundation
import Imago

/// Encodes the first frame of an ``Image`` as WebP, lossy or lossless, with libwebp.
///
/// `.rgba8` and `.rgb8` images are passed to libwebp as they are (their
/// ``Image/bytesPerRow`` is respected); `.grayAlpha8` and `.gray8` images
/// are expanded to RGBA and RGB first. The output has alpha only when the
/// input has an alpha channel that is not fully opaque.
///
/// Lossless output keeps every pixel, except that libwebp may change the
/// red, green and blue of fully transparent pixels (alpha 0) to compress better.
///
/// ``preset`` and ``effort`` are libwebp's `WebPConfigPreset` and
/// `method`; at their defaults (``Preset/default``, 4) the output is what
/// libwebp's one-call `WebPEncodeRGBA` and `WebPEncodeLosslessRGBA` write.
///
/// Safe to use from several threads at once; each call is independent.
///
/// ```swift
/// let data = try WebPEncoder(quality: 90).encode(image)
/// let exact = try WebPEncoder(lossless: true).encode(image)
/// let drawing = try WebPEncoder(quality: 75, preset: .drawing, effort: 6).encode(image)
/// ```
public struct WebPEncoder: ImageEncoding {
    /// libwebp's presets (`WebPPreset`): settings of its lossy encoder
    /// (spatial noise shaping, filter strength and sharpness, segments)
    /// tuned for a kind of image. Lossless output is the same under every
    /// preset. The raw values are imgproxy's names for them
    /// (`IMGPROXY_WEBP_PRESET`).
    public enum Preset: String, Sendable, Hashable, CaseIterable {
        /// libwebp's defaults, what `WebPEncodeRGBA` uses.
        case `default`
        /// A digital picture, like a portrait or an inside shot.
        case picture
        /// An outdoor photograph, with natural lighting.
        case photo
        /// A hand or line drawing, with high-contrast details.
        case drawing
        /// A small, colourful image.
        case icon
        /// Text-like images.
        case text

        /// libwebp's value.
        var libwebp: WebPPreset {
            switch self {
            case .default: WEBP_PRESET_DEFAULT
            case .picture: WEBP_PRESET_PICTURE
            case .photo: WEBP_PRESET_PHOTO
            case .drawing: WEBP_PRESET_DRAWING
            case .icon: WEBP_PRESET_ICON
            case .text: WEBP_PRESET_TEXT
            }
        }
    }

    /// The largest width or height libwebp can encode: 16,383 pixels.
    public static let maximumDimension = Int(WEBP_MAX_DIMENSION)

    /// Always ``ImageFormat/webp``.
    public var format: ImageFormat { .webp }

    /// The quality used when none is given: 80. The image server and
    /// `imago fetch` use it too (``ImageEncoders/defaultQuality(for:)``).
    public static let defaultQuality = 80

    /// The lossy quality, from 0 (smallest) to 100 (best). Values outside
    /// that range are clamped; NaN counts as ``defaultQuality``. Ignored when
    /// ``lossless`` is set.
    public var quality: Float

    /// Whether to encode losslessly (VP8L) instead of lossy (VP8).
    public var lossless: Bool

    /// Whether to embed the sRGB profile when the image has no profile of
    /// its own (its pixels are sRGB). Default: `false`. An image's
    /// ``Image/colorProfile`` is always embedded (an `ICCP` chunk).
    public var embedsSRGBProfile: Bool

    /// The preset the lossy encoder starts from. Default:
    /// ``Preset/default``. imgproxy's `IMGPROXY_WEBP_PRESET`.
    public var preset: Preset

    /// libwebp's `method`, from 0 (fastest) to 6 (slowest, smallest);
    /// values outside ``effortRange`` are clamped to it. Default
    /// ``defaultEffort``. imgproxy's `IMGPROXY_WEBP_EFFORT` (which takes 1
    /// to 6).
    public var effort: Int

    /// The efforts libwebp takes: 0 to 6.
    public static let effortRange = 0...6

    /// The effort used when none is given: 4, libwebp's and imgproxy's default.
    public static let defaultEffort = 4

    /// Creates an encoder.
    ///
    /// - Parameters:
    ///   - quality: The lossy quality, 0...100; default ``defaultQuality``.
    ///   - lossless: Whether to encode losslessly; default `false`.
    ///   - embedsSRGBProfile: Whether to tag an image without a profile as sRGB; default `false`.
    ///   - preset: libwebp's preset for lossy output; default ``Preset/default``.
    ///   - effort: libwebp's method, 0...6 (clamped); default ``defaultEffort``.
    public init(quality: Float = Float(WebPEncoder.defaultQuality), lossless: Bool = false, embedsSRGBProfile: Bool = false,
                preset: Preset = .default, effort: Int = WebPEncoder.defaultEffort) {
        self.quality = quality
        self.lossless = lossless
        self.embedsSRGBProfile = embedsSRGBProfile
        self.preset = preset
        self.effort = effort
    }

    /// `effort` within ``effortRange``.
    static func clampedEffort(_ effort: Int) -> Int32 {
        Int32(effortRange.clamping(effort))
    }

    /// `quality` within 0...100, NaN as ``defaultQuality``.
    static func clampedQuality(_ quality: Float) -> Float {
        quality.isNaN ? Float(defaultQuality) : min(max(quality, 0), 100)
    }

    /// Encodes the first frame of `image`.
    ///
    /// - Throws: ``ImageEncodingError`` with code
    ///   ``ImageEncodingError/Code/unsupportedImage`` when a side exceeds
    ///   ``maximumDimension``, or ``ImageEncodingError/Code/encodingFailed``
    ///   (the ``CodecError`` from libwebp as `underlying`) when libwebp fails.
    public func encode(_ image: Image) throws -> Data {
        guard image.width <= Self.maximumDimension, image.height <= Self.maximumDimension else {
            throw ImageEncodingError(
                .unsupportedImage, format: .webp,
                message: "\(image.width)x\(image.height) exceeds WebP's limit of \(Self.maximumDimension) pixels per side"
            )
        }
        let (pixels, hasAlpha, bytesPerRow) = Self.rgbPixels(of: image)
        guard let stride = Int32(exactly: bytesPerRow) else {
            throw ImageEncodingError(.unsupportedImage, format: .webp, message: "a row of \(bytesPerRow) bytes is too long for libwebp")
        }
        // What libwebp's one-call functions do (its `Encode`), with the
        // preset and the method chosen: lossless at its quality 70, from ARGB.
        var config = WebPConfig()
        var picture = WebPPicture()
        guard WebPConfigPreset(&config, preset.libwebp, lossless ? 70 : Self.clampedQuality(quality)) != 0,
              WebPPictureInit(&picture) != 0 else {
            throw Self.libwebpFailure
        }
        defer { WebPPictureFree(&picture) }
        config.lossless = lossless ? 1 : 0
        config.method = Self.clampedEffort(effort)
        picture.use_argb = lossless ? 1 : 0
        picture.width = Int32(image.width)
        picture.height = Int32(image.height)
        var writer = WebPMemoryWriter()
        WebPMemoryWriterInit(&writer)
        defer { WebPMemoryWriterClear(&writer) }
        let encoded = withUnsafeMutablePointer(to: &writer) { writer in
            picture.writer = WebPMemoryWrite
            picture.custom_ptr = UnsafeMutableRawPointer(writer)
            let imported = pixels.withUnsafeBufferPointer { buffer in
                hasAlpha ? WebPPictureImportRGBA(&picture, buffer.baseAddress, stride) : WebPPictureImportRGB(&picture, buffer.baseAddress, stride)
            }
            return imported != 0 && WebPEncode(&config, &picture) != 0
        }
        guard encoded, writer.size > 0, let output = writer.mem else {
            throw Self.libwebpFailure
        }
        let data = Data(bytes: output, count: writer.size)
        guard let profile = EmbeddedProfile.profile(for: image, embedsSRGB: embedsSRGBProfile) else { return data }
        return EmbeddedProfile.inserting(profile, intoWebP: data, width: image.width, height: image.height, hasAlpha: hasAlpha)
    }

    /// The error for a failure libwebp does not explain.
    private static var libwebpFailure: ImageEncodingError {
        let failure = CodecError(.encodingFailed)
        return ImageEncodingError(.encodingFailed, format: .webp, message: "\(failure)", underlying: failure)
    }

    /// The first frame's pixels as RGB or RGBA, with their row stride:
    /// unchanged for `.rgb8` and `.rgba8`, expanded from gray otherwise.
    private static func rgbPixels(of image: Image) -> (pixels: [UInt8], hasAlpha: Bool, bytesPerRow: Int) {
        let source = image.frames[0].pixels
        switch image.pixelFormat {
        case .rgba8:
            return (source, true, image.bytesPerRow)
        case .rgb8:
            return (source, false, image.bytesPerRow)
        case .gray8, .grayAlpha8:
            let hasAlpha = image.pixelFormat == .grayAlpha8
            let inputBytesPerPixel = image.pixelFormat.bytesPerPixel
            let outputBytesPerPixel = hasAlpha ? 4 : 3
            let bytesPerRow = image.width * outputBytesPerPixel
            var expanded = [UInt8]()
            expanded.reserveCapacity(bytesPerRow * image.height)
            for y in 0..<image.height {
                let row = y * image.bytesPerRow
                for x in 0..<image.width {
                    let gray = source[row + x * inputBytesPerPixel]
                    expanded.append(gray)
                    expanded.append(gray)
                    expanded.append(gray)
                    if hasAlpha { expanded.append(source[row + x * inputBytesPerPixel + 1]) }
                }
            }
            return (expanded, hasAlpha, bytesPerRow)
        }
    }
}
