import CWebP
import Foundation
import Imago

/// EXIF as the image server keeps it (`strip_metadata`, `keep_copyright`):
/// read from a JPEG, PNG or WebP file as its TIFF structure, cut down, and
/// written into a JPEG, PNG or WebP output. Every offset read is
/// bounds-checked; malformed EXIF reads as none.
package enum ExifMetadata {
    /// The EXIF TIFF structure of `data`: a JPEG's first `APP1 Exif`
    /// segment, a PNG's `eXIf` chunk, a WebP's `EXIF` chunk (without any
    /// `Exif\0\0` prefix); `nil` when there is none, or for other formats.
    package static func tiff(in data: Data) -> Data? {
        // The formats' own metadata readers find the EXIF, with no copy of the file.
        let found: Data? = switch ImageFormat(sniffing: data) {
        case .jpeg?: JPEGMetadata(reading: data).exifRange.map { data[data.startIndex + $0.lowerBound..<data.startIndex + $0.upperBound] }
        case .png?: try? SpngContext.withContext(data) { $0.exif() }
        case .webp?: WebPMetadata(reading: data).exifRange.map { data[data.startIndex + $0.lowerBound..<data.startIndex + $0.upperBound] }
        default: nil
        }
        guard var tiff = found else { return nil }
        if tiff.starts(with: exifPrefix) { tiff = tiff.dropFirst(6) }
        return TIFFStructure(tiff) == nil ? nil : Data(tiff)
    }

    /// `tiff` with IFD0's orientation set to 1 ("up"): the server writes the
    /// pixels upright, so the source's orientation would turn them again.
    package static func upright(_ tiff: Data) -> Data {
        guard let structure = TIFFStructure(tiff), let entry = structure.entries.first(where: { $0.tag == 0x0112 }) else { return tiff }
        var bytes = [UInt8](tiff)
        let value = structure.littleEndian ? [UInt8(1), 0] : [0, UInt8(1)]
        bytes.replaceSubrange(entry.offset + 8..<entry.offset + 10, with: value)
        return Data(bytes)
    }

    /// A new TIFF structure with IFD0's `Artist` (0x013B) and `Copyright`
    /// (0x8298) alone, as imgproxy's `keep_copyright` keeps them; `nil`
    /// when `tiff` has neither.
    package static func copyright(in tiff: Data) -> Data? {
        guard let structure = TIFFStructure(tiff) else { return nil }
        let kept: [(tag: UInt16, value: [UInt8])] = ([0x013B, 0x8298] as [UInt16]).compactMap { tag -> (tag: UInt16, value: [UInt8])? in
            guard let entry = structure.entries.first(where: { $0.tag == tag && $0.type == 2 }),
                  let value = structure.bytes(of: entry), !value.isEmpty else { return nil }
            return (tag, value)
        }
        guard !kept.isEmpty else { return nil }
        // Little-endian: header, IFD0 (count, 12-byte entries, next IFD 0), then values over 4 bytes.
        var output: [UInt8] = [0x49, 0x49, 0x2A, 0x00, 8, 0, 0, 0]
        output += le16(UInt16(kept.count))
        var dataOffset = 8 + 2 + 12 * kept.count + 4
        var values: [UInt8] = []
        for item in kept {
            output += le16(item.tag) + le16(2) + le32(UInt32(item.value.count))
            if item.value.count <= 4 {
                output += item.value + [UInt8](repeating: 0, count: 4 - item.value.count)
            } else {
                output += le32(UInt32(dataOffset))
                values += item.value
                if item.value.count % 2 == 1 { values.append(0) }
                dataOffset = 8 + 2 + 12 * kept.count + 4 + values.count
            }
        }
        output += le32(0) + values
        return Data(output)
    }

    /// `encoded` (a JPEG, PNG or WebP file) with `tiff` as its EXIF: an
    /// `APP1` segment after `SOI` and any `APP0`, an `eXIf` chunk after
    /// `IHDR`, an `EXIF` chunk (the extended format's flag set); other
    /// formats unchanged.
    package static func inserting(_ tiff: Data, into encoded: Data, format: ImageFormat) -> Data {
        switch format {
        case .jpeg: insertingJPEG(tiff, into: encoded)
        case .png: insertingPNG(tiff, into: encoded)
        case .webp: insertingWebP(tiff, into: encoded)
        default: encoded
        }
    }

    // MARK: Reading

    private static let exifPrefix: [UInt8] = [0x45, 0x78, 0x69, 0x66, 0, 0]

    // MARK: Writing

    private static func insertingJPEG(_ tiff: Data, into jpeg: Data) -> Data {
        let payload = exifPrefix + [UInt8](tiff)
        guard payload.count + 2 <= 65_535, jpeg.count >= 4 else { return jpeg }
        let insertAt = EmbeddedProfile.metadataIndex(inJPEG: jpeg)
        let length = payload.count + 2
        var result = Data(jpeg[jpeg.startIndex..<insertAt])
        result.append(contentsOf: [0xFF, 0xE1, UInt8(length >> 8), UInt8(length & 0xFF)] + payload)
        result.append(jpeg[insertAt...])
        return result
    }

    private static func insertingPNG(_ tiff: Data, into png: Data) -> Data {
        let bytes = [UInt8](png)
        guard bytes.count >= 33 else { return png }
        // After the signature and IHDR (8 + 25 bytes).
        var result = Array(bytes[0..<33])
        APNG.append(chunk: Array("eXIf".utf8), [UInt8](tiff), to: &result)
        result += bytes[33...]
        return Data(result)
    }

    private static func insertingWebP(_ tiff: Data, into webp: Data) -> Data {
        var bytes = [UInt8](webp)
        guard bytes.count >= 20 else { return webp }
        if String(decoding: bytes[12..<16], as: UTF8.self) != "VP8X" {
            var features = WebPBitstreamFeatures()
            let status = bytes.withUnsafeBufferPointer { WebPGetFeatures($0.baseAddress, $0.count, &features) }
            guard status == VP8_STATUS_OK else { return webp }
            let payload = EmbeddedProfile.vp8xPayload(flags: 0, width: Int(features.width), height: Int(features.height),
                                                      hasAlpha: features.has_alpha != 0)
            bytes = Array(bytes[0..<12]) + Array("VP8X".utf8) + le32(10) + payload + bytes[12...]
        }
        bytes[20] |= 0x08   // the EXIF flag
        bytes += Array("EXIF".utf8) + le32(UInt32(tiff.count)) + [UInt8](tiff) + (tiff.count % 2 == 1 ? [0] : [])
        let riffSize = le32(UInt32(bytes.count - 8))
        bytes.replaceSubrange(4..<8, with: riffSize)
        return Data(bytes)
    }

    private static func le16(_ value: UInt16) -> [UInt8] { [UInt8(value & 0xFF), UInt8(value >> 8)] }
    private static func le32(_ value: UInt32) -> [UInt8] {
        [UInt8(value & 0xFF), UInt8((value >> 8) & 0xFF), UInt8((value >> 16) & 0xFF), UInt8(value >> 24)]
    }
}

/// The header and IFD0 entries of a TIFF structure (EXIF's container).
struct TIFFStructure {
    /// One 12-byte IFD entry, at `offset` in the structure.
    struct Entry {
        let tag: UInt16
        let type: UInt16
        let count: Int
        let offset: Int
    }

    let bytes: [UInt8]
    let littleEndian: Bool
    let entries: [Entry]

    /// Parses the header and IFD0; `nil` when either is malformed.
    init?(_ data: Data) {
        let bytes = [UInt8](data)
        guard bytes.count >= 8 else { return nil }
        switch (bytes[0], bytes[1]) {
        case (0x49, 0x49): littleEndian = true
        case (0x4D, 0x4D): littleEndian = false
        default: return nil
        }
        self.bytes = bytes
        guard Self.u16(bytes, 2, littleEndian) == 42, let ifd = Self.u32(bytes, 4, littleEndian),
              let count = Self.u16(bytes, ifd, littleEndian), ifd + 2 + count * 12 <= bytes.count else { return nil }
        var entries: [Entry] = []
        for index in 0..<count {
            let at = ifd + 2 + index * 12
            entries.append(Entry(tag: UInt16(Self.u16(bytes, at, littleEndian)!), type: UInt16(Self.u16(bytes, at + 2, littleEndian)!),
                                 count: Self.u32(bytes, at + 4, littleEndian)!, offset: at))
        }
        self.entries = entries
    }

    /// The value bytes of an ASCII or byte entry (inline up to 4 bytes),
    /// without trailing NULs; `nil` when they lie outside the structure.
    func bytes(of entry: Entry) -> [UInt8]? {
        guard entry.count >= 0, entry.count <= bytes.count else { return nil }
        let start = entry.count <= 4 ? entry.offset + 8 : Self.u32(bytes, entry.offset + 8, littleEndian) ?? -1
        guard start >= 0, start + entry.count <= bytes.count else { return nil }
        var value = Array(bytes[start..<start + entry.count])
        while value.last == 0 { value.removeLast() }
        // Written back with one terminating NUL.
        return value.isEmpty ? [] : value + [0]
    }

    private static func u16(_ bytes: [UInt8], _ at: Int, _ little: Bool) -> Int? {
        guard at >= 0, at + 2 <= bytes.count else { return nil }
        return little ? Int(bytes[at]) | Int(bytes[at + 1]) << 8 : Int(bytes[at]) << 8 | Int(bytes[at + 1])
    }

    private static func u32(_ bytes: [UInt8], _ at: Int, _ little: Bool) -> Int? {
        guard at >= 0, at + 4 <= bytes.count else { return nil }
        let b = (Int(bytes[at]), Int(bytes[at + 1]), Int(bytes[at + 2]), Int(bytes[at + 3]))
        return little ? b.0 | b.1 << 8 | b.2 << 16 | b.3 << 24 : b.0 << 24 | b.1 << 16 | b.2 << 8 | b.3
    }
}
