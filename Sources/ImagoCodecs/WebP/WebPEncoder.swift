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
/// Safe to use from several threads at once; each call is independent.
///
/// ```swift
/// let data = try WebPEncoder(quality: 90).encode(image)
/// let exact = try WebPEncoder(lossless: true).encode(image)
/// ```
public struct WebPEncoder: ImageEncoding {
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

    /// Creates an encoder.
    ///
    /// - Parameters:
    ///   - quality: The lossy quality, 0...100; default ``defaultQuality``.
    ///   - lossless: Whether to encode losslessly; default `false`.
    ///   - embedsSRGBProfile: Whether to tag an image without a profile as sRGB; default `false`.
    public init(quality: Float = Float(WebPEncoder.defaultQuality), lossless: Bool = false, embedsSRGBProfile: Bool = false) {
        self.quality = quality
        self.lossless = lossless
        self.embedsSRGBProfile = embedsSRGBProfile
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
        let width = Int32(image.width), height = Int32(image.height)
        let quality = quality.isNaN ? Float(Self.defaultQuality) : min(max(quality, 0), 100)

        var output: UnsafeMutablePointer<UInt8>?
        defer { WebPFree(output) }
        let size = pixels.withUnsafeBufferPointer { buffer in
            let input = buffer.baseAddress
            return switch (hasAlpha, lossless) {
            case (true, true): WebPEncodeLosslessRGBA(input, width, height, stride, &output)
            case (false, true): WebPEncodeLosslessRGB(input, width, height, stride, &output)
            case (true, false): WebPEncodeRGBA(input, width, height, stride, quality, &output)
            case (false, false): WebPEncodeRGB(input, width, height, stride, quality, &output)
            }
        }
        guard size > 0, let output else {
            let failure = CodecError(.encodingFailed)
            throw ImageEncodingError(.encodingFailed, format: .webp, message: "\(failure)", underlying: failure)
        }
        let encoded = Data(bytes: output, count: size)
        guard let profile = EmbeddedProfile.profile(for: image, embedsSRGB: embedsSRGBProfile) else { return encoded }
        return EmbeddedProfile.inserting(profile, intoWebP: encoded, width: image.width, height: image.height, hasAlpha: hasAlpha)
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
