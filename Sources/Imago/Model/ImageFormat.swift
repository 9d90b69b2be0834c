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
    /// JPEG (JFIF or EXIF).
    case jpeg
    /// PNG, including animated PNG (APNG).
    case png
    /// GIF, still or animated.
    case gif
    /// WebP, lossy or lossless, still or animated.
    case webp
    /// AVIF: AV1 images in the HEIF container.
    case avif
    /// HEIC: HEVC images in the HEIF container (the iPhone's photo format).
    case heic
    /// JPEG XL, as a bare codestream or in its ISO container.
    case jxl
    /// BMP: a Windows bitmap (`BM`, then a DIB header).
    case bmp
    /// ICO: a Windows icon, a directory of BMP or PNG images.
    case ico
    /// TIFF, little- or big-endian, classic or BigTIFF (the first page).
    case tiff

    /// Recognises the format from the data's magic number.
    ///
    /// Returns `nil` when the bytes begin like none of the known formats
    /// (including empty data). A JPEG may have up to 1 KB of junk before its
    /// start-of-image marker (`FF D8 FF`), which the JPEG decoder skips, as
    /// browsers and Pillow do. Otherwise only the first 64 bytes are read: for the
    /// HEIF container, the `ftyp` box's major brand (`avif`, `avis`;
    /// `heic`, `heix`, `heim`, `heis`, `hevc`, `hevx`), or for a generic
    /// major brand (`mif1`, `msf1`, `miaf`) its first compatible brand that names
    /// AVIF or HEIC. A BMP is `BM` followed (when the data holds it) by the
    /// size of a DIB header Imago reads; an icon is `00 00 01 00` and a
    /// non-zero image count; a TIFF is `II*\0` or `MM\0*` (or BigTIFF's
    /// `II+\0`, `MM\0+`).
    public init?(sniffing data: some DataProtocol) {
        let head = Array(data.prefix(64))
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
        } else if starts(with: [0xFF, 0x0A]) || starts(with: [0, 0, 0, 0x0C, 0x4A, 0x58, 0x4C, 0x20, 0x0D, 0x0A, 0x87, 0x0A]) {
            self = .jxl
        } else if starts(with: Array("ftyp".utf8), at: 4), let format = Self.heifFormat(ftyp: head) {
            self = format
        } else if starts(with: [0x42, 0x4D]) && Self.isBMPHeader(head) {
            self = .bmp
        } else if starts(with: [0, 0, 1, 0]) && head.count >= 6 && (head[4] != 0 || head[5] != 0) {
            self = .ico
        } else if starts(with: [0x49, 0x49, 0x2A, 0]) || starts(with: [0x4D, 0x4D, 0, 0x2A])
                    || starts(with: [0x49, 0x49, 0x2B, 0]) || starts(with: [0x4D, 0x4D, 0, 0x2B]) {
            self = .tiff
        } else if Self.hasJPEGStart(in: data.prefix(1_027)) {
            self = .jpeg
        } else {
            return nil
        }
    }

    /// Whether `bytes` hold a JPEG start-of-image marker, `FF D8 FF`.
    private static func hasJPEGStart(in bytes: some Collection<UInt8>) -> Bool {
        var previous: (UInt8, UInt8) = (0, 0)
        for byte in bytes {
            if previous == (0xFF, 0xD8) && byte == 0xFF { return true }
            previous = (previous.1, byte)
        }
        return false
    }

    /// Whether `head`, which starts with `BM`, goes on like a BMP: the DIB
    /// header's size at offset 14 is one of the sizes Windows and OS/2 write
    /// (12, 16 to 64, 108 or 124 bytes), or the data ends before it.
    private static func isBMPHeader(_ head: [UInt8]) -> Bool {
        guard head.count >= 18 else { return true }
        let size = Int(head[14]) | Int(head[15]) << 8 | Int(head[16]) << 16 | Int(head[17]) << 24
        return size == 12 || (16...64).contains(size) || size == 108 || size == 124
    }

    /// The format a HEIF `ftyp` box names, from its major brand or, for a
    /// generic major brand, its compatible brands (as far as `head` holds them).
    private static func heifFormat(ftyp head: [UInt8]) -> ImageFormat? {
        func brand(at offset: Int) -> String? {
            guard offset + 4 <= head.count else { return nil }
            return String(decoding: head[offset..<offset + 4], as: UTF8.self)
        }
        func format(of brand: String) -> ImageFormat? {
            switch brand {
            case "avif", "avis": .avif
            case "heic", "heix", "heim", "heis", "hevc", "hevx": .heic
            default: nil
            }
        }
        guard let major = brand(at: 8) else { return nil }
        if let format = format(of: major) { return format }
        guard major == "mif1" || major == "msf1" || major == "miaf" else { return nil }
        // Box size, then "ftyp", major brand, minor version, compatible brands.
        let boxSize = Int(head[0]) << 24 | Int(head[1]) << 16 | Int(head[2]) << 8 | Int(head[3])
        var offset = 16
        while offset + 4 <= min(boxSize, head.count), let compatible = brand(at: offset) {
            if let format = format(of: compatible) { return format }
            offset += 4
        }
        return nil
    }

    /// The MIME type, such as `image/jpeg`: the registered one, or the
    /// one browsers send for icons (`image/x-icon`).
    public var mimeType: String {
        switch self {
        case .ico: "image/x-icon"
        default: "image/\(rawValue)"
        }
    }

    /// Every MIME type the format is known by, ``mimeType`` first: BMP's
    /// `image/x-ms-bmp` and `image/x-bmp`, the icon's registered
    /// `image/vnd.microsoft.icon`.
    public var mimeTypes: [String] {
        switch self {
        case .bmp: [mimeType, "image/x-ms-bmp", "image/x-bmp"]
        case .ico: [mimeType, "image/vnd.microsoft.icon"]
        case .jpeg: [mimeType, "image/pjpeg"]
        default: [mimeType]
        }
    }

    /// The usual file extension, without a dot.
    public var fileExtension: String {
        rawValue == "jpeg" ? "jpg" : rawValue
    }

    /// Every file extension the format is known by, without dots,
    /// ``fileExtension`` first (`jpg`, `jpeg`, `jpe`; `tiff`, `tif`;
    /// `heic`, `heif`).
    public var fileExtensions: [String] {
        switch self {
        case .jpeg: ["jpg", "jpeg", "jpe"]
        case .tiff: ["tiff", "tif"]
        case .heic: ["heic", "heif"]
        default: [fileExtension]
        }
    }

    /// The format a file extension (with or without its dot, any case)
    /// names, such as `.tiff` or `JPG`; `nil` for one Imago does not read.
    public init?(fileExtension: String) {
        let name = (fileExtension.hasPrefix(".") ? String(fileExtension.dropFirst()) : fileExtension).lowercased()
        guard let format = Self.allCases.first(where: { $0.fileExtensions.contains(name) }) else { return nil }
        self = format
    }

    /// The format a MIME type names (any case, parameters ignored), such as
    /// `image/x-icon` or `image/tiff; charset=binary`; `nil` for one Imago
    /// does not read.
    public init?(mimeType: String) {
        let name = mimeType.split(separator: ";", maxSplits: 1).first.map { $0.trimmingCharacters(in: .whitespaces).lowercased() } ?? ""
        guard let format = Self.allCases.first(where: { $0.mimeTypes.contains(name) }) else { return nil }
        self = format
    }

    public var description: String { rawValue }
}
