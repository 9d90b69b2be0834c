import CSpng
import Foundation
import Imago

/// Encodes the first frame of an image as PNG, over libspng.
///
/// Every ``PixelFormat`` maps to a PNG colour type directly (RGBA, RGB,
/// gray with alpha, gray), 8 bits per sample. An image's
/// ``Image/colorProfile`` is embedded (`iCCP`).
public struct PNGEncoder: ImageEncoding {
    /// The zlib compression level, 0 (none, fastest) to 9 (smallest). Default: 6.
    public var compressionLevel: Int
    /// Whether to mark an image with no profile of its own as sRGB (an
    /// `sRGB` chunk, 13 bytes). Default: `false`.
    public var embedsSRGBProfile: Bool

    /// Creates a PNG encoder.
    public init(compressionLevel: Int = 6, embedsSRGBProfile: Bool = false) {
        self.compressionLevel = compressionLevel
        self.embedsSRGBProfile = embedsSRGBProfile
    }

    public var format: ImageFormat { .png }

    public func encode(_ image: Image) throws -> Data {
        guard (0...9).contains(compressionLevel) else {
            throw ImageEncodingError(.unsupportedImage, format: .png, message: "compression level \(compressionLevel) is outside 0...9")
        }
        guard image.width <= Int(UInt32.max), image.height <= Int(UInt32.max) else {
            throw ImageEncodingError(.unsupportedImage, format: .png, message: "the image is too large for PNG")
        }
        let packed = image.converted(to: image.pixelFormat)
        let colorType: spng_color_type = switch image.pixelFormat {
        case .rgba8: SPNG_COLOR_TYPE_TRUECOLOR_ALPHA
        case .rgb8: SPNG_COLOR_TYPE_TRUECOLOR
        case .grayAlpha8: SPNG_COLOR_TYPE_GRAYSCALE_ALPHA
        case .gray8: SPNG_COLOR_TYPE_GRAYSCALE
        }
        do {
            return try Self.encode(packed.pixels, width: image.width, height: image.height, colorType: colorType, level: compressionLevel,
                                   profile: image.colorProfile, markSRGB: embedsSRGBProfile)
        } catch let error as CodecError {
            throw ImageEncodingError(.encodingFailed, format: .png, message: error.message, underlying: error)
        }
    }

    private static func encode(
        _ pixels: [UInt8], width: Int, height: Int, colorType: spng_color_type, level: Int, profile: ColorProfile?, markSRGB: Bool
    ) throws -> Data {
        // libspng may keep a pointer to the profile until the context is
        // freed: the copy outlives the context (defers run in reverse order).
        let profileBytes = UnsafeMutableBufferPointer<CChar>.allocate(capacity: max(1, profile?.data.count ?? 0))
        defer { profileBytes.deallocate() }
        guard let context = spng_ctx_new(Int32(SPNG_CTX_ENCODER.rawValue)) else {
            throw CodecError.libspng(Int32(SPNG_EMEM.rawValue), detail: "could not allocate an encoder context")
        }
        defer { spng_ctx_free(context) }
        try SpngContext.check(spng_set_option(context, SPNG_ENCODE_TO_BUFFER, 1))
        try SpngContext.check(spng_set_option(context, SPNG_IMG_COMPRESSION_LEVEL, Int32(level)))
        var header = spng_ihdr()
        header.width = UInt32(width)
        header.height = UInt32(height)
        header.bit_depth = 8
        header.color_type = UInt8(colorType.rawValue)
        try SpngContext.check(spng_set_ihdr(context, &header))
        if let profile {
            var iccp = spng_iccp()
            withUnsafeMutableBytes(of: &iccp.profile_name) { name in
                for (index, byte) in "ICC profile".utf8.enumerated() { name[index] = byte }
            }
            _ = profile.data.withUnsafeBytes { raw in raw.copyBytes(to: UnsafeMutableRawBufferPointer(profileBytes)) }
            iccp.profile_len = profile.data.count
            iccp.profile = profileBytes.baseAddress
            try SpngContext.check(spng_set_iccp(context, &iccp))
        } else if markSRGB {
            try SpngContext.check(spng_set_srgb(context, 0))   // perceptual intent
        }
        try pixels.withUnsafeBytes { raw in
            try SpngContext.check(spng_encode_image(context, raw.baseAddress, raw.count, Int32(SPNG_FMT_PNG.rawValue), Int32(SPNG_ENCODE_FINALIZE.rawValue)))
        }
        var length = 0
        var status: Int32 = 0
        guard let buffer = spng_get_png_buffer(context, &length, &status) else {
            try SpngContext.check(status)
            throw CodecError.libspng(Int32(SPNG_EINTERNAL.rawValue), detail: "the encoder returned no data")
        }
        defer { free(buffer) }
        return Data(bytes: buffer, count: length)
    }
}
