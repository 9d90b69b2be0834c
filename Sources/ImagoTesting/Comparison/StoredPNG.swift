import Foundation
import Imago

/// A PNG writer with no compression (deflate's stored blocks), so that
/// ImagoTesting needs no codec to save a failed comparison's images: the
/// files are larger than a compressor's, and read everywhere.
enum StoredPNG {
    /// The PNG file of `image`'s first frame (8-bit gray, gray and alpha, RGB or RGBA).
    static func encode(_ image: Image) -> Data {
        let packed = image.converted(to: image.pixelFormat)
        let colorType: UInt8 = switch packed.pixelFormat {
        case .gray8: 0
        case .rgb8: 2
        case .grayAlpha8: 4
        case .rgba8: 6
        }
        let rowBytes = packed.width * packed.pixelFormat.bytesPerPixel
        var raw = [UInt8]()
        raw.reserveCapacity((rowBytes + 1) * packed.height)
        packed.frames[0].pixels.withUnsafeBufferPointer { pixels in
            for y in 0..<packed.height {
                raw.append(0)  // filter: none
                raw += pixels[(y * rowBytes)..<((y + 1) * rowBytes)]
            }
        }
        var header = [UInt8]()
        header += bigEndian(UInt32(packed.width)) + bigEndian(UInt32(packed.height))
        header += [8, colorType, 0, 0, 0]
        var file = Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])
        file += chunk("IHDR", header)
        file += chunk("IDAT", zlibStored(raw))
        file += chunk("IEND", [])
        return file
    }

    /// Writes `image` as a PNG file at `url`, whole or not at all.
    static func write(_ image: Image, to url: URL) throws {
        try encode(image).write(to: url, options: .atomic)
    }

    private static func chunk(_ type: String, _ body: [UInt8]) -> Data {
        let typed = Array(type.utf8) + body
        return Data(bigEndian(UInt32(body.count)) + typed + bigEndian(crc32(typed)))
    }

    /// A zlib stream of stored deflate blocks (at most 65,535 bytes each).
    private static func zlibStored(_ bytes: [UInt8]) -> [UInt8] {
        var out: [UInt8] = [0x78, 0x01]
        var start = 0
        repeat {
            let length = min(65_535, bytes.count - start)
            let last: UInt8 = start + length == bytes.count ? 1 : 0
            out += [last, UInt8(length & 0xFF), UInt8(length >> 8), UInt8(~length & 0xFF), UInt8((~length >> 8) & 0xFF)]
            out += bytes[start..<(start + length)]
            start += length
        } while start < bytes.count
        return out + bigEndian(adler32(bytes))
    }

    private static func bigEndian(_ value: UInt32) -> [UInt8] {
        [UInt8(value >> 24), UInt8((value >> 16) & 0xFF), UInt8((value >> 8) & 0xFF), UInt8(value & 0xFF)]
    }

    private static let crcTable: [UInt32] = (0..<256).map { index in
        var value = UInt32(index)
        for _ in 0..<8 { value = value & 1 == 1 ? 0xEDB8_8320 ^ (value >> 1) : value >> 1 }
        return value
    }

    private static func crc32(_ bytes: [UInt8]) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes { crc = crcTable[Int((crc ^ UInt32(byte)) & 0xFF)] ^ (crc >> 8) }
        return ~crc
    }

    private static func adler32(_ bytes: [UInt8]) -> UInt32 {
        var (a, b): (UInt32, UInt32) = (1, 0)
        for byte in bytes {
            a = (a + UInt32(byte)) % 65_521
            b = (b + a) % 65_521
        }
        return b << 16 | a
    }
}
