import Foundation

/// An ICC colour profile: the colour space an image's pixel values are in.
///
/// Decoders read the profile a file embeds (a JPEG's `APP2` segments, a
/// PNG's `iCCP` chunk, a WebP's `ICCP` chunk; `ImagoCodecs` also turns a
/// PNG's `gAMA` and `cHRM` chunks into one). By default they convert the
/// pixels to sRGB and the image carries no profile; with
/// ``ImageDecodingOptions/colorManagement`` set to
/// ``ImageDecodingOptions/ColorManagement/keepOriginal`` the pixels stay as
/// stored and ``Image/colorProfile`` holds the profile, which encoders embed.
/// An image without a profile is sRGB.
public struct ColorProfile: Sendable, Hashable {
    /// The profile's bytes, as an ICC file holds them.
    public let data: Data

    /// Wraps the bytes of an ICC profile. They are checked only when used.
    public init(data: Data) {
        self.data = data
    }

    /// The colour space the header declares (bytes 16 to 19), such as
    /// `"RGB"`, `"GRAY"` or `"CMYK"`, trailing spaces removed; `nil` when the
    /// data is too short to be a profile.
    public var colorSpace: String? {
        guard data.count >= 128 else { return nil }
        let start = data.startIndex + 16
        let characters = data[start..<start + 4].map { Character(Unicode.Scalar($0)) }
        return String(characters).trimmingCharacters(in: .whitespaces)
    }
}

extension ColorProfile: CustomStringConvertible {
    public var description: String {
        "ColorProfile(\(colorSpace ?? "?"), \(data.count) bytes)"
    }
}
