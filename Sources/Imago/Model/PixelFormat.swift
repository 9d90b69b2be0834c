/// The layout of one pixel in an ``Image``: its channels, in order, one byte each.
public enum PixelFormat: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// Red, green, blue and alpha, not premultiplied.
    case rgba8
    /// Red, green and blue, opaque.
    case rgb8
    /// Luminance with alpha, not premultiplied.
    case grayAlpha8
    /// Luminance, opaque.
    case gray8

    /// The number of bytes one pixel takes.
    public var bytesPerPixel: Int {
        switch self {
        case .rgba8: 4
        case .rgb8: 3
        case .grayAlpha8: 2
        case .gray8: 1
        }
    }

    /// Whether the format carries an alpha channel.
    public var hasAlpha: Bool { self == .rgba8 || self == .grayAlpha8 }

    /// Whether the pixels are gray (``gray8`` or ``grayAlpha8``) rather than colour.
    public var isGray: Bool { self == .gray8 || self == .grayAlpha8 }

    public var description: String { rawValue }
}
