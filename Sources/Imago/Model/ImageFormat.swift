import Foundation

/// An encoded image format that Imago recognises by its leading bytes.
///
/// ```swift
/// switch ImageFormat(sniffing: data) {
/// case .jpeg?: print("a JPEG")
/// case nil: print("not an image Imago knows")
/// default: break
/// }
/// ```
public enum ImageFormat: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    case jpeg
    case png
    case gif
    case webp

    /// Recognises the format from the data's magic number.
    ///
    /// Returns `nil` when the bytes begin like none of the known formats
    /// (including empty data). Only the first 12 bytes are read.
    public init?(sniffing data: some DataProtocol) {
        let head = Array(data.prefix(12))
        func starts(with prefix: [UInt8], at offset: Int = 0) -> Bool {
            head.count >= offset + prefix.count && Array(head[offset..<offset + prefix.count]) == prefix
        }
        if starts(with: [0xFF, 0xD8, 0xFF]) {
            self = .jpeg
        } else if starts(with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) {
            self = .png
        } else if starts(with: Array("GIF87a".utf8)) || starts(with: Array("GIF89a".utf8)) {
            self = .gif
        } else if starts(with: Array("RIFF".utf8)) && starts(with: Array("WEBP".utf8), at: 8) {
            self = .webp
        } else {
            return nil
        }
    }

    /// The registered MIME type, such as `image/jpeg`.
    public var mimeType: String { "image/\(rawValue)" }

    /// The usual file extension, without a dot.
    public var fileExtension: String { rawValue == "jpeg" ? "jpg" : rawValue }

    public var description: String { rawValue }
}
