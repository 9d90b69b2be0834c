import Foundation
import Imago

/// Encodes the first frame of an ``Image`` as an uncompressed BMP, in
/// Swift: 24-bit with a `BITMAPINFOHEADER`, what every reader takes, or,
/// for an image with some pixel that is not opaque, 32-bit with a
/// `BITMAPV5HEADER` whose masks give the fourth byte as alpha (Pillow,
/// browsers and Windows read it as RGBA). Gray images are written as
/// colour. Rows are stored bottom-up, each padded to 4 bytes. An image's
/// ``Image/colorProfile`` is embedded (a V5 header's `PROFILE_EMBEDDED`);
/// an image without one is marked sRGB when it has a V5 header.
///
/// ```swift
/// let data = try BMPEncoder().encode(image)
/// ```
public struct BMPEncoder: ImageEncoding {
    /// Always ``ImageFormat/bmp``.
    public var format: ImageFormat { .bmp }

    /// Creates an encoder.
    public init() {}

    /// Encodes the first frame of `image`.
    ///
    /// - Throws: ``ImageEncodingError/Code/unsupportedImage`` for an image
    ///   whose file would be over 4 GB, BMP's limit.
    public func encode(_ image: Image) throws -> Data {
        let first = image.firstFrame
        let hasAlpha = first.pixelFormat.hasAlpha && !first.isOpaque
        let pixels = first.converted(to: hasAlpha ? .rgba8 : .rgb8)
        let profile = pixels.colorProfile.map { [UInt8]($0.data) }   // a gray image's gray profile is dropped with its grayness
        let headerSize = hasAlpha || profile != nil ? 124 : 40
        let bytesPerPixel = hasAlpha ? 4 : 3
        let stride = (pixels.width * bytesPerPixel + 3) / 4 * 4
        let pixelOffset = 14 + headerSize
        let (pixelBytes, overflow) = stride.multipliedReportingOverflow(by: pixels.height)
        let fileSize = pixelOffset + pixelBytes + (profile?.count ?? 0)
        guard !overflow, fileSize <= Int(UInt32.max), pixels.width <= Int(Int32.max), pixels.height <= Int(Int32.max) else {
            throw ImageEncodingError(.unsupportedImage, format: .bmp, message: "\(image.width)x\(image.height) is too large for BMP's 4 GB")
        }
        // The file header: signature, size, two reserved words, where the pixels start.
        var header: [UInt8] = [0x42, 0x4D] + Self.le32(fileSize) + [0, 0, 0, 0] + Self.le32(pixelOffset)
        // BITMAPINFOHEADER: size, width, height (bottom-up), planes, bits, compression, image size, 72 dpi, palette.
        header += Self.le32(headerSize) + Self.le32(pixels.width) + Self.le32(pixels.height) + [1, 0, UInt8(bytesPerPixel * 8), 0]
        header += Self.le32(hasAlpha ? 3 : 0) + Self.le32(pixelBytes) + Self.le32(2835) + Self.le32(2835) + Self.le32(0) + Self.le32(0)
        if headerSize == 124 {
            // V4: the masks (BGRA in memory), the colour space, its end points and gammas (unused).
            header += hasAlpha ? Self.le32(0xFF_0000) + Self.le32(0xFF00) + Self.le32(0xFF) + Self.le32(0xFF00_0000) : [UInt8](repeating: 0, count: 16)
            header += Self.le32(profile == nil ? 0x7352_4742 : 0x4D42_4544)   // 'sRGB' or 'MBED'
            header += [UInt8](repeating: 0, count: 48)
            // V5: the intent (LCS_GM_IMAGES), the profile's offset from the header and size, a reserved word.
            header += Self.le32(4) + Self.le32(profile == nil ? 0 : headerSize + pixelBytes) + Self.le32(profile?.count ?? 0) + Self.le32(0)
        }
        var file = [UInt8](repeating: 0, count: fileSize)   // the rows' padding stays 0
        file.replaceSubrange(0..<header.count, with: header)
        file.withUnsafeMutableBufferPointer { out in
            pixels.pixels.withUnsafeBufferPointer { source in
                for row in 0..<pixels.height {
                    var at = pixelOffset + (pixels.height - 1 - row) * stride
                    var pixel = row * pixels.bytesPerRow
                    for _ in 0..<pixels.width {
                        (out[at], out[at + 1], out[at + 2]) = (source[pixel + 2], source[pixel + 1], source[pixel])
                        if hasAlpha { out[at + 3] = source[pixel + 3] }
                        at += bytesPerPixel
                        pixel += bytesPerPixel
                    }
                }
            }
        }
        if let profile { file.replaceSubrange(fileSize - profile.count..<fileSize, with: profile) }
        return Data(file)
    }

    /// `value` as four little-endian bytes.
    private static func le32(_ value: Int) -> [UInt8] {
        (0..<4).map { UInt8(truncatingIfNeeded: value >> ($0 * 8)) }
    }
}
