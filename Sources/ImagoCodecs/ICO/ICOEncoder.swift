import Foundation
import Imago

/// Encodes the first frame of an ``Image`` as an icon holding one PNG
/// image (the layout Windows reads since Vista, and browsers for
/// favicons): 32-bit RGBA, at most ``maximumDimension`` pixels a side, as
/// imgproxy writes icons. Resize larger images first.
///
/// ```swift
/// let data = try ICOEncoder().encode(image.resized(toFit: 256, height: 256))
/// ```
public struct ICOEncoder: ImageEncoding {
    /// Always ``ImageFormat/ico``.
    public var format: ImageFormat { .ico }

    /// The longest side an icon's image can have: 256 pixels (the
    /// directory stores a side in one byte, 0 meaning 256).
    public static let maximumDimension = 256

    /// Creates an encoder.
    public init() {}

    /// Encodes the first frame of `image`.
    ///
    /// - Throws: ``ImageEncodingError/Code/unsupportedImage`` for a side
    ///   over ``maximumDimension``; the PNG encoder's errors.
    public func encode(_ image: Image) throws -> Data {
        guard image.width <= Self.maximumDimension, image.height <= Self.maximumDimension else {
            throw ImageEncodingError(.unsupportedImage, format: .ico,
                                     message: "\(image.width)x\(image.height) is larger than an icon's \(Self.maximumDimension)x\(Self.maximumDimension)")
        }
        // The colour profile goes with the pixels (a gray image's gray profile is dropped as it becomes colour).
        let png = try PNGEncoder().encode(image.firstFrame.converted(to: .rgba8), allowsPalette: false)
        // ICONDIR (reserved, type 1, one image), then its ICONDIRENTRY: sides (0 is 256),
        // no palette, reserved, one plane, 32 bits, the PNG's size and offset (22).
        var icon: [UInt8] = [0, 0, 1, 0, 1, 0]
        icon += [UInt8(image.width & 0xFF), UInt8(image.height & 0xFF), 0, 0, 1, 0, 32, 0]
        icon += (0..<4).map { UInt8(truncatingIfNeeded: png.count >> ($0 * 8)) } + [22, 0, 0, 0]
        return Data(icon) + png
    }
}
