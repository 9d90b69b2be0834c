import Foundation

/// A TIFF structure, EXIF's container: its header and the entries of one
/// image file directory (IFD0 unless another is asked for). Every offset
/// read is bounds-checked; a malformed structure reads as `nil`.
package struct TIFFStructure {
    /// One 12-byte IFD entry, at `offset` in the structure.
    package struct Entry {
        package let tag: UInt16
        package let type: UInt16
        package let count: Int
        package let offset: Int
    }

    package let bytes: [UInt8]
    package let littleEndian: Bool
    package let entries: [Entry]

    /// Parses the header and IFD0.
    package init?(_ data: Data) {
        let bytes = [UInt8](data)
        guard bytes.count >= 8 else { return nil }
        let little: Bool
        switch (bytes[0], bytes[1]) {
        case (0x49, 0x49): little = true
        case (0x4D, 0x4D): little = false
        default: return nil
        }
        guard Self.u16(bytes, 2, little) == 42, let ifd = Self.u32(bytes, 4, little) else { return nil }
        self.init(bytes: bytes, littleEndian: little, ifdAt: ifd)
    }

    private init?(bytes: [UInt8], littleEndian: Bool, ifdAt ifd: Int) {
        guard let count = Self.u16(bytes, ifd, littleEndian), ifd + 2 + count * 12 <= bytes.count else { return nil }
        self.bytes = bytes
        self.littleEndian = littleEndian
        entries = (0..<count).map { index in
            let at = ifd + 2 + index * 12
            return Entry(tag: UInt16(Self.u16(bytes, at, littleEndian)!), type: UInt16(Self.u16(bytes, at + 2, littleEndian)!),
                         count: Self.u32(bytes, at + 4, littleEndian)!, offset: at)
        }
    }

    /// The directory at `offset` of the same structure (the Exif IFD that
    /// tag 0x8769 points to); `nil` when malformed or IFD0 itself.
    package func ifd(at offset: Int) -> TIFFStructure? {
        guard offset >= 8 else { return nil }
        return TIFFStructure(bytes: bytes, littleEndian: littleEndian, ifdAt: offset)
    }

    /// The first entry with `tag`.
    package func entry(_ tag: UInt16) -> Entry? { entries.first { $0.tag == tag } }

    /// The value of a SHORT or LONG entry with one value.
    package func integer(_ entry: Entry) -> Int? {
        guard entry.count == 1 else { return nil }
        switch entry.type {
        case 3: return Self.u16(bytes, entry.offset + 8, littleEndian)
        case 4: return Self.u32(bytes, entry.offset + 8, littleEndian)
        default: return nil
        }
    }

    /// The value bytes of an ASCII or byte entry (inline up to 4 bytes),
    /// without trailing NULs; `nil` when they lie outside the structure.
    package func value(of entry: Entry) -> [UInt8]? {
        guard entry.count >= 0, entry.count <= bytes.count else { return nil }
        let start = entry.count <= 4 ? entry.offset + 8 : Self.u32(bytes, entry.offset + 8, littleEndian) ?? -1
        guard start >= 0, start + entry.count <= bytes.count else { return nil }
        var value = Array(bytes[start..<start + entry.count])
        while value.last == 0 { value.removeLast() }
        return value
    }

    /// An ASCII entry's text, trimmed; `nil` when empty or not ASCII/UTF-8.
    package func string(of entry: Entry) -> String? {
        guard entry.type == 2, let value = value(of: entry),
              let text = String(bytes: value, encoding: .utf8)?.trimmingCharacters(in: .whitespaces), !text.isEmpty else { return nil }
        return text
    }

    /// The structure with IFD0's orientation set to 1 ("up").
    package func withOrientationUp() -> Data {
        guard let entry = entry(0x0112), entry.type == 3 else { return Data(bytes) }
        var copy = bytes
        copy.replaceSubrange(entry.offset + 8..<entry.offset + 10, with: littleEndian ? [1, 0] : [0, 1])
        return Data(copy)
    }

    /// A new structure with IFD0's `Artist` (0x013B) and `Copyright`
    /// (0x8298) alone, as imgproxy's `keep_copyright` keeps them; `nil`
    /// when there is neither.
    package func copyrightOnly() -> Data? {
        let kept: [(tag: UInt16, value: [UInt8])] = ([0x013B, 0x8298] as [UInt16]).compactMap { tag -> (tag: UInt16, value: [UInt8])? in
            guard let entry = entries.first(where: { $0.tag == tag && $0.type == 2 }),
                  let value = value(of: entry), !value.isEmpty else { return nil }
            return (tag, value + [0])   // written back with one terminating NUL
        }
        guard !kept.isEmpty else { return nil }
        // Little-endian: header, IFD0 (count, 12-byte entries, next IFD 0), then values over 4 bytes.
        var output: [UInt8] = [0x49, 0x49, 0x2A, 0x00, 8, 0, 0, 0]
        output += Self.le16(UInt16(kept.count))
        let valuesStart = 8 + 2 + 12 * kept.count + 4
        var values: [UInt8] = []
        for item in kept {
            output += Self.le16(item.tag) + Self.le16(2) + Self.le32(UInt32(item.value.count))
            if item.value.count <= 4 {
                output += item.value + [UInt8](repeating: 0, count: 4 - item.value.count)
            } else {
                output += Self.le32(UInt32(valuesStart + values.count))
                values += item.value
                if item.value.count % 2 == 1 { values.append(0) }
            }
        }
        output += Self.le32(0) + values
        return Data(output)
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

    static func le16(_ value: UInt16) -> [UInt8] { [UInt8(value & 0xFF), UInt8(value >> 8)] }

    static func le32(_ value: UInt32) -> [UInt8] {
        [UInt8(value & 0xFF), UInt8((value >> 8) & 0xFF), UInt8((value >> 16) & 0xFF), UInt8(value >> 24)]
    }
}
