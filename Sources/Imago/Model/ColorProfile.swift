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

    /// The profile's name, its description tag (`desc`): such as
    /// `"Display P3"` or `"sRGB IEC61966-2.1"`; `nil` when it has none
    /// that can be read. Both the ICC v2 text form and the v4 Unicode form
    /// (its first record) are read.
    public var name: String? {
        let bytes = [UInt8](data)
        func uint32(_ offset: Int) -> Int? {
            guard offset >= 0, offset <= bytes.count - 4 else { return nil }
            // `exactly`: a value past Int.max (on 32-bit platforms) reads as no value.
            return Int(exactly: UInt32(bytes[offset]) << 24 | UInt32(bytes[offset + 1]) << 16 | UInt32(bytes[offset + 2]) << 8 | UInt32(bytes[offset + 3]))
        }
        /// Whether `length` bytes from `offset` lie inside the profile (no sums that could overflow).
        func inside(_ offset: Int, _ length: Int) -> Bool {
            offset >= 0 && length >= 0 && offset <= bytes.count && length <= bytes.count - offset
        }
        guard let count = uint32(128), count <= 1024 else { return nil }
        for entry in 0..<count {
            let at = 132 + entry * 12
            guard let signature = uint32(at), let offset = uint32(at + 4), let size = uint32(at + 8) else { return nil }
            guard signature == 0x6465_7363, size >= 12, inside(offset, size) else { continue }  // "desc"
            let name: String
            switch uint32(offset) {
            case 0x6465_7363:  // "desc": a count, then ASCII ending in NUL
                guard let length = uint32(offset + 8), length > 0, length <= size - 12 else { return nil }
                let text = bytes[(offset + 12)..<(offset + 12 + length)].prefix { $0 != 0 }
                name = String(decoding: text, as: UTF8.self).trimmingCharacters(in: .whitespaces)
            case 0x6D6C_7563:  // "mluc": records of language, length and offset of UTF-16BE text
                guard let records = uint32(offset + 8), records > 0, let length = uint32(offset + 20),
                      let start = uint32(offset + 24), start <= size, length <= size - start else { return nil }
                let units = stride(from: offset + start, to: offset + start + length - 1, by: 2).map { UInt16(bytes[$0]) << 8 | UInt16(bytes[$0 + 1]) }
                name = String(decoding: units, as: UTF16.self).trimmingCharacters(in: CharacterSet(charactersIn: "\0 "))
            default:
                return nil
            }
            // A name is a line of text, not a payload.
            return String(name.prefix(256))
        }
        return nil
    }
}

extension ColorProfile: CustomStringConvertible {
    public var description: String {
        "ColorProfile(\(colorSpace ?? "?"), \(data.count) bytes)"
    }
}
