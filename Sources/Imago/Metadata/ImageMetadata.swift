import Foundation

/// What a file says beside its pixels: its EXIF and its colour profile,
/// as the decoder read them (no second parse of the file), with the EXIF
/// fields people ask for read from it on demand.
///
/// Decoders attach it to the ``Image`` (``Image/metadata``) and to the
/// ``ImageInfo`` of a header read. Encoders write none of it unless asked
/// (``MetadataPolicy``, through ``OutputPolicy/metadata``).
///
/// ```swift
/// let photo = try ImageDecoders.all.decode(data)
/// print(photo.metadata?.camera ?? "", photo.metadata?.dateTimeOriginal ?? "")
/// let decision = OutputPolicy(metadata: .keepCopyright).decision(forSource: .jpeg, hasAlpha: false)
/// let jpeg = try ImageEncoders.encode(photo.resized(toFit: 800, height: 800), as: decision)
/// ```
public struct ImageMetadata: Sendable, Hashable {
    /// The EXIF block as a TIFF structure (from `II` or `MM`), as JPEG's
    /// `APP1`, PNG's `eXIf`, WebP's `EXIF` and HEIF's `Exif` item hold it;
    /// `nil` when the file has none or it is malformed.
    public var exif: Data?
    /// The colour profile the file embeds, whether or not the decoder
    /// converted the pixels from it (``Image/colorProfile`` is set only when
    /// it kept them as they are).
    public var colorProfile: ColorProfile?

    /// Creates metadata; an `exif` that is not a TIFF structure (after an
    /// optional `Exif\0\0`) is dropped.
    public init(exif: Data? = nil, colorProfile: ColorProfile? = nil) {
        var tiff = exif
        if let data = tiff, data.starts(with: [0x45, 0x78, 0x69, 0x66, 0, 0]) { tiff = Data(data.dropFirst(6)) }
        self.exif = tiff.flatMap { TIFFStructure($0) == nil ? nil : Data($0) }
        self.colorProfile = colorProfile
    }

    /// The largest EXIF block a decoder keeps: 1 MiB (a camera writes tens
    /// of kilobytes; a larger block is dropped, so a hostile file cannot
    /// make every decoded copy of it hold megabytes).
    public static let maximumExifBytes = 1 << 20

    /// What a decoder attaches: `nil` when there is nothing, an EXIF block
    /// over ``maximumExifBytes`` left out.
    package static func read(exif: Data?, colorProfile: ColorProfile?) -> ImageMetadata? {
        let metadata = ImageMetadata(exif: exif.flatMap { $0.count <= maximumExifBytes ? $0 : nil }, colorProfile: colorProfile)
        return metadata.isEmpty ? nil : metadata
    }

    /// Whether there is nothing to keep.
    public var isEmpty: Bool { exif == nil && colorProfile == nil }

    // MARK: EXIF fields

    /// The orientation the EXIF declares (tag 0x0112); `nil` when it declares none.
    public var orientation: ImageOrientation? {
        guard let tiff = exifStructure, let entry = tiff.entry(0x0112), let value = tiff.integer(entry) else { return nil }
        return ImageOrientation(rawValue: value)
    }
    /// The camera's maker (`Make`, 0x010F).
    public var make: String? { string(0x010F) }
    /// The camera's model (`Model`, 0x0110).
    public var model: String? { string(0x0110) }
    /// The maker and model, as a photo library shows them ("Canon EOS 5D"),
    /// the model alone when it already names the maker.
    public var camera: String? {
        switch (make, model) {
        case let (make?, model?): model.lowercased().hasPrefix(make.lowercased()) ? model : make + " " + model
        case let (make?, nil): make
        case let (nil, model?): model
        case (nil, nil): nil
        }
    }
    /// The software that wrote the file (`Software`, 0x0131).
    public var software: String? { string(0x0131) }
    /// When the file was last changed (`DateTime`, 0x0132), as stored:
    /// `YYYY:MM:DD HH:MM:SS`, local time.
    public var dateTime: String? { string(0x0132) }
    /// When the picture was taken (`DateTimeOriginal`, 0x9003 in the Exif
    /// IFD), as stored: `YYYY:MM:DD HH:MM:SS`, local time.
    public var dateTimeOriginal: String? {
        guard let tiff = exifStructure, let pointer = tiff.entry(0x8769), let offset = tiff.integer(pointer),
              let exifIFD = tiff.ifd(at: offset) else { return nil }
        return exifIFD.entry(0x9003).flatMap { tiff.string(of: $0) }
    }
    /// The photographer (`Artist`, 0x013B).
    public var artist: String? { string(0x013B) }
    /// The copyright notice (`Copyright`, 0x8298).
    public var copyright: String? { string(0x8298) }

    private var exifStructure: TIFFStructure? { exif.flatMap { TIFFStructure($0) } }

    private func string(_ tag: UInt16) -> String? {
        guard let tiff = exifStructure, let entry = tiff.entry(tag) else { return nil }
        return tiff.string(of: entry)
    }

    // MARK: Writing

    /// The EXIF to write with pixels that are upright, as `policy` keeps it:
    /// all of it with the orientation set to 1 ("up": the decoder has turned
    /// the pixels already), or a new structure with `Artist` and `Copyright`
    /// alone, or none.
    public func exif(keeping policy: MetadataPolicy) -> Data? {
        guard let exif, let tiff = TIFFStructure(exif) else { return nil }
        switch policy {
        case .strip: return nil
        case .keepAll: return tiff.withOrientationUp()
        case .keepCopyright: return tiff.copyrightOnly()
        }
    }
}

/// Which of a source's metadata an encoded result keeps.
public enum MetadataPolicy: String, Sendable, Hashable, CaseIterable {
    /// None: the smallest file, and nothing private (the default, as imgproxy's).
    case strip
    /// `Artist` and `Copyright` only (imgproxy's `keep_copyright`).
    case keepCopyright
    /// All of the EXIF, its orientation set to "up" (imgproxy's `strip_metadata:0`).
    case keepAll
}
