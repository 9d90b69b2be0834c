import Foundation
import Imago

/// The header of a device-independent bitmap (DIB), what a BMP file holds
/// after its 14-byte file header and what an icon holds for each of its
/// BMP images: the size, the bit depth, the compression, the colour masks,
/// the palette and an embedded colour profile, every field checked against
/// the data before anything is allocated.
///
/// Header sizes: 12 (`BITMAPCOREHEADER`, OS/2 1.x), 16 to 64
/// (`BITMAPINFOHEADER` is 40, its V2 and V3 52 and 56, OS/2 2.x up to
/// 64), 108 (`BITMAPV4HEADER`) and 124 (`BITMAPV5HEADER`). Bit depths 1,
/// 2, 4 and 8 (a palette), 16 and 32 (colour masks: the defaults, or
/// `BI_BITFIELDS` and `BI_ALPHABITFIELDS`), 24; RLE8 and RLE4. Anything
/// else is refused as ``BitmapFailure/unsupported(_:)``.
struct DIBHeader: Sendable, Hashable {
    /// How the pixel rows are stored.
    enum Compression: Sendable, Hashable {
        /// Rows of pixels, each padded to 4 bytes (`BI_RGB`, and
        /// `BI_BITFIELDS` with its masks).
        case none
        /// 8-bit run-length encoding (`BI_RLE8`).
        case rle8
        /// 4-bit run-length encoding (`BI_RLE4`).
        case rle4
    }

    /// One channel's bits in a 16- or 32-bit pixel.
    struct Channel: Sendable, Hashable {
        /// The channel's bits in the pixel; 0 when the pixel has none.
        let mask: UInt32
        /// How far the bits are from the pixel's lowest bit.
        let shift: Int
        /// How many bits the channel has.
        let bits: Int

        /// A channel with no bits.
        static let empty = Channel()

        private init() {
            (mask, shift, bits) = (0, 0, 0)
        }

        /// Reads `mask`, which must be one run of bits within `bitCount` bits.
        init(mask: UInt32, bitCount: Int) throws {
            guard bitCount >= 32 || mask >> UInt32(bitCount) == 0 else {
                throw BitmapFailure.invalid("the colour mask \(String(mask, radix: 16)) has bits beyond the \(bitCount)-bit pixel")
            }
            self.mask = mask
            shift = mask == 0 ? 0 : mask.trailingZeroBitCount
            bits = mask.nonzeroBitCount
            let run = UInt64(mask) >> UInt64(shift)
            guard run & (run + 1) == 0 else {
                throw BitmapFailure.invalid("the colour mask \(String(mask, radix: 16)) is not one run of bits")
            }
        }

        /// The 256 values (or fewer: one per value of `bits`) scaled to 8 bits.
        var scale: [UInt8] {
            guard bits > 0 else { return [0] }
            let levels = min(bits, 8)
            let maximum = (1 << levels) - 1
            return (0...maximum).map { UInt8(($0 * 255 + maximum / 2) / maximum) }
        }
    }

    /// The masks of a 16- or 32-bit image.
    struct Masks: Sendable, Hashable {
        let red: Channel
        let green: Channel
        let blue: Channel
        /// The alpha channel; its mask is 0 when the pixels have none.
        let alpha: Channel
    }

    /// The width in pixels, at least 1.
    let width: Int
    /// The number of rows, at least 1 (for an icon, the XOR mask's: half
    /// the header's height).
    let height: Int
    /// Whether the first stored row is the top one (a negative height);
    /// BMPs are stored bottom-up otherwise.
    let isTopDown: Bool
    /// Bits per pixel: 1, 2, 4, 8, 16, 24 or 32.
    let bitCount: Int
    /// How the rows are stored.
    let compression: Compression
    /// The channels of a 16- or 32-bit image; `nil` for the others.
    let masks: Masks?
    /// The palette of an image of 8 bits or fewer, as RGB triples, padded
    /// with black to `1 << bitCount` entries (an index past the file's
    /// palette is black, as Pillow shows it); empty for the others.
    let palette: [UInt8]
    /// The colour profile a V5 header embeds; `nil` for sRGB.
    let colorProfile: ColorProfile?
    /// The offset, from the start of the data, just past the header, its
    /// masks and its palette: where an icon's pixels start.
    let end: Int

    /// The header's sizes Imago reads.
    static func isKnownSize(_ size: Int) -> Bool {
        size == 12 || (16...64).contains(size) || size == 108 || size == 124
    }

    /// The largest embedded colour profile read (larger ones are ignored).
    static let maximumProfileBytes = 4 << 20

    /// Reads the header that starts `start` bytes into `data`. For an
    /// icon's image (`isIconImage`), the height counts the XOR and the AND
    /// masks, so the image has half as many rows. A palette has at most as
    /// many entries as fit before `paletteEnd` (a BMP's pixel offset), as
    /// browsers read files whose palettes are shorter than their bit depth.
    ///
    /// - Throws: ``BitmapFailure``.
    init(reading data: Data, at start: Int, isIconImage: Bool = false, paletteEnd: Int? = nil) throws {
        let bytes = LittleEndianBytes(data)
        let size = Int(try bytes.uint32(at: start, "the DIB header's size"))
        guard Self.isKnownSize(size) else { throw BitmapFailure.unsupported("a DIB header of \(size) bytes") }
        guard bytes.count - start >= size else { throw BitmapFailure.truncated("the \(size)-byte DIB header") }
        let width: Int, storedHeight: Int, bitCount: Int, compressionCode: UInt32, colorsUsed: Int
        if size == 12 {
            width = Int(try bytes.uint16(at: start + 4, "the width"))
            storedHeight = Int(try bytes.uint16(at: start + 6, "the height"))
            bitCount = Int(try bytes.uint16(at: start + 10, "the bit count"))
            (compressionCode, colorsUsed) = (0, 0)
        } else {
            width = Int(Int32(bitPattern: try bytes.uint32(at: start + 4, "the width")))
            storedHeight = Int(Int32(bitPattern: try bytes.uint32(at: start + 8, "the height")))
            bitCount = Int(try bytes.uint16(at: start + 14, "the bit count"))
            compressionCode = size >= 20 ? try bytes.uint32(at: start + 16, "the compression") : 0
            colorsUsed = size >= 36 ? Int(try bytes.uint32(at: start + 32, "the palette's size")) : 0
        }
        guard width > 0, storedHeight != 0, storedHeight != Int(Int32.min) else {
            throw BitmapFailure.invalid("a \(width)x\(storedHeight) image")
        }
        guard [1, 2, 4, 8, 16, 24, 32].contains(bitCount) else {
            throw BitmapFailure.unsupported("\(bitCount) bits per pixel")
        }
        let rows = isIconImage ? abs(storedHeight) / 2 : abs(storedHeight)
        guard rows > 0 else { throw BitmapFailure.invalid("an icon image of height \(storedHeight)") }
        (self.width, self.height, isTopDown, self.bitCount) = (width, rows, storedHeight < 0, bitCount)

        // The compression, and the masks: in the header from V2 on, after a 40-byte header otherwise.
        var offset = start + size
        var maskValues: [UInt32]?
        switch compressionCode {
        case 0:
            compression = .none
            if bitCount == 16 { maskValues = [0x7C00, 0x03E0, 0x001F, 0] }
            if bitCount == 32 { maskValues = [0xFF_0000, 0xFF00, 0xFF, 0xFF00_0000] }
        case 1 where bitCount == 8: compression = .rle8
        case 2 where bitCount == 4: compression = .rle4
        case 1, 2: throw BitmapFailure.invalid("run-length encoding \(compressionCode == 1 ? "RLE8" : "RLE4") of \(bitCount)-bit pixels")
        case 3 where size == 64, 4 where size == 64: throw BitmapFailure.unsupported("OS/2 \(compressionCode == 3 ? "Huffman" : "RLE24") compression")
        case 3, 6:
            guard bitCount == 16 || bitCount == 32 else { throw BitmapFailure.invalid("colour masks on \(bitCount)-bit pixels") }
            compression = .none
            let count = compressionCode == 6 ? 4 : 3
            var values: [UInt32] = []
            if size >= 52 {
                for index in 0..<4 where index < 3 || size >= 56 {
                    values.append(try bytes.uint32(at: start + 40 + 4 * index, "the colour masks"))
                }
            } else {
                for index in 0..<count { values.append(try bytes.uint32(at: offset + 4 * index, "the colour masks")) }
                offset += 4 * count
            }
            if values.count < 4 { values.append(0) }
            // Masks that say nothing mean the defaults, as browsers read them.
            if values[0] == 0 && values[1] == 0 && values[2] == 0 {
                values = bitCount == 16 ? [0x7C00, 0x03E0, 0x001F, values[3]] : [0xFF_0000, 0xFF00, 0xFF, values[3]]
            }
            maskValues = values
        case 4: throw BitmapFailure.unsupported("JPEG compression")
        case 5: throw BitmapFailure.unsupported("PNG compression")
        default: throw BitmapFailure.unsupported("compression \(compressionCode)")
        }
        if let maskValues {
            masks = Masks(red: try Channel(mask: maskValues[0], bitCount: bitCount),
                          green: try Channel(mask: maskValues[1], bitCount: bitCount),
                          blue: try Channel(mask: maskValues[2], bitCount: bitCount),
                          alpha: try Channel(mask: maskValues[3], bitCount: bitCount))
        } else {
            masks = nil
        }

        // The palette: BGR triples (OS/2 1.x) or BGRX quads, as many as the header says, at most 1 << bitCount.
        if bitCount <= 8 {
            let entrySize = size == 12 ? 3 : 4
            var entries = colorsUsed == 0 ? 1 << bitCount : min(colorsUsed, 1 << bitCount)
            if let paletteEnd, paletteEnd > offset { entries = min(entries, (paletteEnd - offset) / entrySize) }
            guard bytes.count - offset >= entries * entrySize else { throw BitmapFailure.truncated("the palette of \(entries) colours") }
            var palette = [UInt8](repeating: 0, count: 3 << bitCount)
            for entry in 0..<entries {
                let at = offset + entry * entrySize
                palette[3 * entry] = try bytes.uint8(at: at + 2)
                palette[3 * entry + 1] = try bytes.uint8(at: at + 1)
                palette[3 * entry + 2] = try bytes.uint8(at: at)
            }
            self.palette = palette
            offset += entries * entrySize
        } else {
            palette = []
        }
        end = offset
        colorProfile = size >= 124 ? Self.embeddedProfile(bytes, headerAt: start) : nil
    }

    /// The profile a V5 header embeds (`PROFILE_EMBEDDED`, at an offset
    /// from the header's start); `nil` for any other colour space, or a
    /// profile that does not fit in the data or is over ``maximumProfileBytes``.
    private static func embeddedProfile(_ bytes: LittleEndianBytes, headerAt start: Int) -> ColorProfile? {
        guard let type = try? bytes.uint32(at: start + 56, ""), type == 0x4D42_4544,   // 'MBED'
              let offset = try? bytes.uint32(at: start + 112, ""), let size = try? bytes.uint32(at: start + 116, ""),
              size > 0, Int(size) <= maximumProfileBytes, Int(offset) <= bytes.count,
              bytes.count - start - Int(offset) >= Int(size) else { return nil }
        return ColorProfile(data: bytes.subdata(start + Int(offset), count: Int(size)))
    }

    /// The bytes of one stored row of pixels, without its padding.
    var rowBytes: Int { (width * bitCount + 7) / 8 }

    /// The distance between stored rows: ``rowBytes`` padded to 4 bytes.
    var rowStride: Int { (width * bitCount + 31) / 32 * 4 }

    /// The bytes the rows of an uncompressed image take: every row padded
    /// but the last, which may end without its padding (as some writers
    /// leave it); `nil` when that is more than `Int` holds.
    var pixelBytes: Int? {
        let (rows, overflow) = rowStride.multipliedReportingOverflow(by: height - 1)
        let (total, overflow2) = rows.addingReportingOverflow(rowBytes)
        return overflow || overflow2 ? nil : total
    }

    /// Checks that `count` bytes from `offset` hold the pixels: every row
    /// of an uncompressed image, or at least one byte of run-length data.
    ///
    /// - Throws: ``BitmapFailure/truncated(_:)``.
    func checkPixels(in count: Int, at offset: Int) throws {
        guard offset >= 0, offset < count else { throw BitmapFailure.truncated("the pixels") }
        guard compression == .none else { return }
        guard let needed = pixelBytes, count - offset >= needed else {
            throw BitmapFailure.truncated("the \(height) rows of \(rowStride) bytes the header declares")
        }
    }
}

/// Little-endian fields read from `Data` (any slice) at offsets from its
/// start, each checked against its end.
struct LittleEndianBytes {
    let data: Data

    init(_ data: Data) { self.data = data }

    /// The number of bytes.
    var count: Int { data.count }

    func uint8(at offset: Int, _ what: String = "a byte") throws -> UInt8 {
        guard offset >= 0, offset < count else { throw BitmapFailure.truncated(what) }
        return data[data.startIndex + offset]
    }

    func uint16(at offset: Int, _ what: String) throws -> UInt16 {
        guard offset >= 0, count - offset >= 2 else { throw BitmapFailure.truncated(what) }
        let at = data.startIndex + offset
        return UInt16(data[at]) | UInt16(data[at + 1]) << 8
    }

    func uint32(at offset: Int, _ what: String) throws -> UInt32 {
        guard offset >= 0, count - offset >= 4 else { throw BitmapFailure.truncated(what) }
        let at = data.startIndex + offset
        return UInt32(data[at]) | UInt32(data[at + 1]) << 8 | UInt32(data[at + 2]) << 16 | UInt32(data[at + 3]) << 24
    }

    /// `count` bytes from `offset`, which the caller has checked, as data of their own.
    func subdata(_ offset: Int, count: Int) -> Data {
        data.subdata(in: data.startIndex + offset..<data.startIndex + offset + count)
    }
}
