import Foundation

/// Little-endian bytes of an integer, `count` of them.
func littleEndian(_ value: Int, _ count: Int) -> [UInt8] {
    (0..<count).map { UInt8(truncatingIfNeeded: value >> ($0 * 8)) }
}

/// A BMP made byte by byte, for the variants Imago's encoder does not
/// write: every header size, bit depth, mask and compression.
struct BMPBuilder {
    var width: Int
    /// Negative for a top-down file.
    var height: Int
    var bitCount: Int
    /// 0 `BI_RGB`, 1 RLE8, 2 RLE4, 3 `BI_BITFIELDS`, 6 `BI_ALPHABITFIELDS`.
    var compression = 0
    /// 12 (core), 40 (info), 56 (V3), 108 (V4) or 124 (V5).
    var headerSize = 40
    /// RGB entries.
    var palette: [[UInt8]] = []
    /// The header's palette size; the palette's count when `nil`.
    var colorsUsed: Int?
    /// Colour masks: after a 40-byte header, or inside a larger one.
    var masks: [UInt32]?
    /// The pixel data as stored (rows padded, or run-length codes).
    var pixels: [UInt8]
    /// An ICC profile for a V5 header (`PROFILE_EMBEDDED`), placed after the pixels.
    var profile: [UInt8]?

    /// The DIB alone: header, masks, palette, pixels (what an icon holds, with `height` doubled).
    var dib: [UInt8] {
        var out: [UInt8]
        if headerSize == 12 {
            out = littleEndian(12, 4) + littleEndian(width, 2) + littleEndian(height, 2) + littleEndian(1, 2) + littleEndian(bitCount, 2)
        } else {
            out = littleEndian(headerSize, 4) + littleEndian(width, 4) + littleEndian(height, 4) + littleEndian(1, 2) + littleEndian(bitCount, 2)
            out += littleEndian(compression, 4) + littleEndian(pixels.count, 4) + littleEndian(2835, 4) + littleEndian(2835, 4)
            out += littleEndian(colorsUsed ?? palette.count, 4) + littleEndian(0, 4)
            if headerSize > 40 {
                let inHeader = (masks ?? []) + [UInt32](repeating: 0, count: 4 - (masks?.count ?? 0))
                for mask in inHeader.prefix(headerSize >= 56 ? 4 : 3) { out += littleEndian(Int(mask), 4) }
                if headerSize >= 108 {
                    out += littleEndian(profile == nil ? 0x7352_4742 : 0x4D42_4544, 4) + [UInt8](repeating: 0, count: 48)
                }
                if headerSize >= 124 {
                    let profileOffset = headerSize + paletteBytes.count + pixels.count
                    out += littleEndian(4, 4) + littleEndian(profile == nil ? 0 : profileOffset, 4) + littleEndian(profile?.count ?? 0, 4) + littleEndian(0, 4)
                }
                out += [UInt8](repeating: 0, count: max(0, headerSize - out.count))
            } else if let masks {
                for mask in masks { out += littleEndian(Int(mask), 4) }
            }
        }
        return out + paletteBytes + pixels + (profile ?? [])
    }

    private var paletteBytes: [UInt8] {
        palette.flatMap { headerSize == 12 ? [$0[2], $0[1], $0[0]] : [$0[2], $0[1], $0[0], 0] }
    }

    /// The whole file: the 14-byte file header, then the DIB.
    var data: Data {
        let dib = self.dib
        let pixelOffset = 14 + dib.count - pixels.count - (profile?.count ?? 0)
        return Data([0x42, 0x4D] + littleEndian(14 + dib.count, 4) + [0, 0, 0, 0] + littleEndian(pixelOffset, 4) + dib)
    }

    /// Rows of bytes, each padded to 4 bytes, in the order given.
    static func rows(_ rows: [[UInt8]]) -> [UInt8] {
        rows.flatMap { $0 + [UInt8](repeating: 0, count: (4 - $0.count % 4) % 4) }
    }
}

/// An icon made byte by byte: a directory of entries, each a PNG or a DIB.
struct ICOBuilder {
    struct Entry {
        var width: Int
        var height: Int
        var bitCount: Int
        var bytes: [UInt8]
    }

    var entries: [Entry]

    var data: Data {
        var out: [UInt8] = [0, 0, 1, 0] + littleEndian(entries.count, 2)
        var offset = 6 + 16 * entries.count
        for entry in entries {
            out += [UInt8(entry.width & 0xFF), UInt8(entry.height & 0xFF), 0, 0] + littleEndian(1, 2) + littleEndian(entry.bitCount, 2)
            out += littleEndian(entry.bytes.count, 4) + littleEndian(offset, 4)
            offset += entry.bytes.count
        }
        return Data(out + entries.flatMap(\.bytes))
    }

    /// An AND mask: rows of bits (1 transparent), bottom row first, each padded to 4 bytes.
    static func andMask(width: Int, transparent: [[Bool]]) -> [UInt8] {
        BMPBuilder.rows(transparent.reversed().map { row in
            (0..<(width + 7) / 8).map { byte in
                (0..<8).reduce(UInt8(0)) { bits, bit in
                    let x = byte * 8 + bit
                    return x < row.count && row[x] ? bits | UInt8(0x80 >> bit) : bits
                }
            }
        })
    }
}

/// A little-endian TIFF made byte by byte, one uncompressed strip: the
/// layouts libtiff's RGBA path reads (16 bits, palettes, associated
/// alpha, orientations, pages).
struct TIFFBuilder {
    var width: Int
    var height: Int
    var samples: Int
    var bitsPerSample = 8
    /// 0 white is zero, 1 black is zero, 2 RGB, 3 palette.
    var photometric: Int
    /// 1 associated alpha, 2 unassociated.
    var extraSamples: [Int] = []
    /// 1 unsigned, 2 signed, 3 floating point; the field is left out when `nil`.
    var sampleFormat: Int?
    var orientation: Int?
    /// 16-bit red values, then green, then blue.
    var colorMap: [Int]?
    /// The strip, as stored.
    var pixels: [UInt8]
    /// Pages after the first, each a builder of its own.
    var nextPages: [TIFFBuilder] = []

    var data: Data { Data([0x49, 0x49, 42, 0] + littleEndian(8, 4) + directories(at: 8)) }

    /// This page's directory, its values and pixels, then the next pages', from `start`.
    private func directories(at start: Int) -> [UInt8] {
        var entries: [(tag: Int, type: Int, values: [Int])] = [
            (256, 4, [width]), (257, 4, [height]), (258, 3, [Int](repeating: bitsPerSample, count: samples)),
            (259, 3, [1]), (262, 3, [photometric]), (273, 4, [0]), (277, 3, [samples]), (278, 4, [height]), (279, 4, [pixels.count]),
        ]
        if let orientation { entries.append((274, 3, [orientation])) }
        if !extraSamples.isEmpty { entries.append((338, 3, extraSamples)) }
        if let colorMap { entries.append((320, 3, colorMap)) }
        if let sampleFormat { entries.append((339, 3, [Int](repeating: sampleFormat, count: samples))) }
        entries.sort { $0.tag < $1.tag }
        let directorySize = 2 + 12 * entries.count + 4
        var extra: [UInt8] = []
        var directory = littleEndian(entries.count, 2)
        var pixelsAt = 0
        for entry in entries {
            let size = entry.type == 3 ? 2 : 4
            let bytes = entry.values.flatMap { littleEndian($0, size) }
            directory += littleEndian(entry.tag, 2) + littleEndian(entry.type, 2) + littleEndian(entry.values.count, 4)
            if entry.tag == 273 {
                pixelsAt = directory.count
                directory += [0, 0, 0, 0]
            } else if bytes.count <= 4 {
                directory += bytes + [UInt8](repeating: 0, count: 4 - bytes.count)
            } else {
                directory += littleEndian(start + directorySize + extra.count, 4)
                extra += bytes
            }
        }
        let pixelOffset = start + directorySize + extra.count
        directory.replaceSubrange(pixelsAt..<pixelsAt + 4, with: littleEndian(pixelOffset, 4))
        let next = pixelOffset + pixels.count
        directory += littleEndian(nextPages.isEmpty ? 0 : next, 4)
        var out = directory + extra + pixels
        if let page = nextPages.first {
            var rest = page
            rest.nextPages = Array(nextPages.dropFirst())
            out += rest.directories(at: next)
        }
        return out
    }
}
