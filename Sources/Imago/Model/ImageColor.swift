/// A colour with 8-bit sRGB channels and alpha: the background of a canvas,
/// a trim reference, the fill of padding.
///
/// Named `ImageColor` rather than `Color` so that a SwiftUI file that imports
/// Imago keeps its `Color` unambiguous.
///
/// ```swift
/// let square = photo.extended(toWidth: 1200, height: 1200, background: .white)
/// let brand = ImageColor(red: 0x1e, green: 0x90, blue: 0xff)
/// ```
public struct ImageColor: Sendable, Hashable, CustomStringConvertible {
    /// The red channel, 0 to 255.
    public var red: UInt8
    /// The green channel, 0 to 255.
    public var green: UInt8
    /// The blue channel, 0 to 255.
    public var blue: UInt8
    /// The alpha channel: 0 is transparent, 255 opaque.
    public var alpha: UInt8

    /// Creates a colour; opaque unless `alpha` says otherwise.
    public init(red: UInt8, green: UInt8, blue: UInt8, alpha: UInt8 = 255) {
        self.red = red
        self.green = green
        self.blue = blue
        self.alpha = alpha
    }

    /// Opaque white.
    public static let white = ImageColor(red: 255, green: 255, blue: 255)
    /// Opaque black.
    public static let black = ImageColor(red: 0, green: 0, blue: 0)
    /// Transparent black: a canvas of this colour adds an alpha channel.
    public static let clear = ImageColor(red: 0, green: 0, blue: 0, alpha: 0)

    /// Whether red, green and blue are equal (a gray image stays gray on it).
    public var isGray: Bool { red == green && green == blue }

    /// Whether the colour is fully opaque.
    public var isOpaque: Bool { alpha == 255 }

    /// `#rrggbbaa`, in lowercase hex.
    public var description: String {
        "#" + [red, green, blue, alpha].lowercaseHex
    }

    /// The channels in `format`'s order: gray formats take red (callers
    /// check ``isGray`` first); formats without alpha drop it.
    func channels(for format: PixelFormat) -> [UInt8] {
        switch format {
        case .gray8: [red]
        case .grayAlpha8: [red, alpha]
        case .rgb8: [red, green, blue]
        case .rgba8: [red, green, blue, alpha]
        }
    }
}
