import Foundation
import Imago
import ImagoCodecs
import ImagoTesting

/// Sources built to cost far more than their bytes, for the server's
/// hostile tests (in process and against `imago serve`): metadata of
/// megabytes, thousands of JPEG scans, grids of thousands of tiles, SVG
/// filters past any sane budget. Test support only: no product links it.
public enum HostileInputs {
    // MARK: PNG chunks

    /// CRC-32 (ISO-HDLC), for PNG chunks.
    public static func crc32(_ bytes: [UInt8]) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        crcTable.withUnsafeBufferPointer { table in
            for byte in bytes { crc = table[Int((crc ^ UInt32(byte)) & 0xFF)] ^ (crc >> 8) }
        }
        return ~crc
    }

    /// CRC-32's table, a byte at a time (chunks of megabytes are checksummed in debug builds).
    private static let crcTable: [UInt32] = (0..<256).map { index in
        var crc = UInt32(index)
        for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
        return crc
    }

    /// `png` with a chunk of `type` and `payload` put after `IHDR`.
    public static func inserting(_ type: String, _ payload: [UInt8], into png: Data) -> Data {
        let body = Array(type.utf8) + payload
        let crc = crc32(body)
        let chunk = bigEndian(UInt32(payload.count)) + body + bigEndian(crc)
        var bytes = [UInt8](png)
        bytes.insert(contentsOf: chunk, at: 8 + 25)   // the signature, then IHDR (13 bytes of data, 12 of frame)
        return Data(bytes)
    }

    /// Whether a PNG has a chunk of `type`.
    public static func hasChunk(_ type: String, in png: Data) -> Bool {
        let bytes = [UInt8](png), name = Array(type.utf8)
        var offset = 8
        while offset + 8 <= bytes.count {
            let length = Int(bytes[offset]) << 24 | Int(bytes[offset + 1]) << 16 | Int(bytes[offset + 2]) << 8 | Int(bytes[offset + 3])
            if Array(bytes[offset + 4..<offset + 8]) == name { return true }
            offset += 12 + length
        }
        return false
    }

    // MARK: Metadata

    /// A big-endian TIFF (EXIF) block with one tag: `Copyright` of `count` letters.
    public static func exif(copyrightLength count: Int) -> [UInt8] {
        let text = [UInt8](repeating: UInt8(ascii: "c"), count: count - 1) + [0]
        return Array("MM".utf8) + bigEndian(UInt16(42)) + bigEndian(UInt32(8)) + bigEndian(UInt16(1))
            + bigEndian(UInt16(0x8298)) + bigEndian(UInt16(2)) + bigEndian(UInt32(count)) + bigEndian(UInt32(26)) + bigEndian(UInt32(0)) + text
    }

    /// An 8x8 PNG carrying an EXIF `Copyright` of `count` letters (`eXIf`).
    public static func pngWithExif(copyrightLength count: Int) throws -> Data {
        inserting("eXIf", exif(copyrightLength: count), into: try ImageEncoders.png().encode(TestImages.gradient(width: 8, height: 8)))
    }

    /// `profile` padded with zeros to `count` bytes, its size field saying so
    /// (lcms reads its tags and no further): a profile of any size that still converts.
    public static func padded(_ profile: Data, to count: Int) -> Data {
        var bytes = [UInt8](profile) + [UInt8](repeating: 0, count: max(0, count - profile.count))
        bytes.replaceSubrange(0..<4, with: bigEndian(UInt32(bytes.count)))
        return Data(bytes)
    }

    /// A 40x30 red PNG whose colour profile (`iCCP`) inflates to `count`
    /// zero bytes: deflate packs them a thousandfold, so the file is about
    /// `count / 1000` bytes and reading its chunks takes `count` of memory.
    /// Over 16 MiB it is past libspng's standard chunk limit.
    public static func pngWithInflatingProfile(of count: Int) throws -> Data {
        var image = Image(width: 40, height: 30, pixelFormat: .rgb8,
                          pixels: Array((0..<(40 * 30)).lazy.flatMap { _ in [UInt8(255), 0, 0] }))
        image.colorProfile = ColorProfile(data: Data(count: count))
        return try ImageEncoders.png().encode(image)
    }

    // MARK: Decode work

    /// A progressive JPEG of a small photo with its last scan repeated
    /// `extraScans` times: a few hundred kilobytes that cost seconds of CPU.
    public static func progressiveJPEG(extraScans: Int) throws -> Data {
        let progressive = [UInt8](try JPEGEncoder(quality: 85, progressive: true).encode(TestImages.gradient(width: 64, height: 48)))
        var lastScan = 0
        for index in 0..<progressive.count - 1 where progressive[index] == 0xFF && progressive[index + 1] == 0xDA { lastScan = index }
        let end = progressive.count - 2
        return Data(progressive[..<end] + Array(repeating: Array(progressive[lastScan..<end]), count: extraScans).joined() + [0xFF, 0xD9])
    }

    /// A HEIF-family file (`brand`: `avif` or `heic`) whose `meta` box's
    /// `iref` makes a grid of `tiles` tiles: boxes only, no pixels.
    public static func grid(brand: String, tiles: Int) -> Data {
        func box(_ type: String, _ payload: [UInt8]) -> [UInt8] { bigEndian(UInt32(8 + payload.count)) + Array(type.utf8) + payload }
        let ftyp = box("ftyp", Array(brand.utf8) + [0, 0, 0, 0] + Array(brand.utf8) + Array("mif1".utf8))
        let references = box("dimg", bigEndian(UInt16(1)) + bigEndian(UInt16(tiles)) + (0..<tiles).flatMap { bigEndian(UInt16(100 + $0)) })
        let meta = box("meta", [0, 0, 0, 0] + box("pitm", [0, 0, 0, 0, 0, 1]) + box("iref", [0, 0, 0, 0] + references))
        return Data(ftyp + meta)
    }

    // MARK: SVG

    /// The SVG namespace declaration.
    public static let svgNamespace = #"xmlns="http://www.w3.org/2000/svg""#

    /// A document of `size` pixels whose filter `#f` holds `filter`, applied to a full-size rectangle.
    public static func filtered(_ filter: String, size: Int = 64) -> Data {
        Data("""
            <svg \(svgNamespace) width="\(size)" height="\(size)"><defs><filter id="f">\(filter)</filter></defs>
            <rect width="\(size)" height="\(size)" fill="#ff0000" filter="url(#f)"/></svg>
            """.utf8)
    }

    /// 2 KB on which librsvg 2.54 panics ("Data storage buffer dimension mismatch") and aborts.
    public static let convolveOrder30 = filtered(#"<feConvolveMatrix order="30" kernelMatrix="\#(Array(repeating: "1", count: 900).joined(separator: " "))"/>"#)

    /// The billion laughs: ten entities, each ten of the one before.
    public static let billionLaughs: Data = {
        var text = #"<?xml version="1.0"?><!DOCTYPE svg [<!ENTITY lol0 "lol">"#
        for level in 1...9 {
            text += "<!ENTITY lol\(level) \"" + String(repeating: "&lol\(level - 1);", count: 10) + "\">"
        }
        return Data((text + #"]><svg xmlns="http://www.w3.org/2000/svg"><text>&lol9;</text></svg>"#).utf8)
    }()

    /// The billion laughs with `use`: nine groups, each ten uses of the one before.
    public static let useBomb: Data = {
        var body = #"<defs><rect id="u0" width="1" height="1"/>"#
        for level in 1...9 {
            body += "<g id=\"u\(level)\">" + String(repeating: "<use href=\"#u\(level - 1)\"/>", count: 10) + "</g>"
        }
        return Data(##"<svg \##(svgNamespace) width="40" height="40">\##(body)</defs><use href="#u9"/></svg>"##.utf8)
    }()

    /// A 40x30 document whose red rectangle sits `depth` groups deep: past
    /// 256, over libxml2's default depth (librsvg's without
    /// `RSVG_HANDLE_FLAG_UNLIMITED`) and the sanitiser's default.
    public static func nestedSVG(depth: Int) -> Data {
        Data((##"<svg \##(svgNamespace) width="40" height="30">"## + String(repeating: "<g>", count: depth)
            + ##"<rect width="40" height="30" fill="#ff0000"/>"## + String(repeating: "</g>", count: depth) + "</svg>").utf8)
    }

    /// A 40x30 document drawing an embedded red PNG through a `data:`
    /// address of more than `attributeBytes` bytes (the PNG padded with a
    /// stored text chunk): over 10 MB, past libxml2's default limit on an
    /// attribute value and a document, as a large embedded photo is.
    public static func svgEmbeddingPNG(attributeBytes: Int) throws -> Data {
        let prefix = "data:image/png;base64,"
        let png = try ImageEncoders.png().encode(Image(width: 4, height: 3, pixelFormat: .rgb8,
                                                       pixels: Array((0..<12).lazy.flatMap { _ in [UInt8(255), 0, 0] })))
        // Base64 makes 4 bytes of 3.
        let padding = max(0, (attributeBytes - prefix.utf8.count) / 4 * 3 - png.count + 3)
        let padded = inserting("tEXt", Array("Comment".utf8) + [0] + [UInt8](repeating: UInt8(ascii: "x"), count: padding), into: png)
        return Data((##"<svg \##(svgNamespace) width="40" height="30"><image width="40" height="30" preserveAspectRatio="none" href=""##
            + prefix + padded.base64EncodedString() + ##""/></svg>"##).utf8)
    }

    /// A sanitised SVG document without its CSS strings (in `<style>`
    /// elements, and `&quot;`-quoted in attributes): an address may stay
    /// only as text inside a string, which no browser loads.
    public static func outsideCSSStrings(_ svg: String) -> String {
        var result = ""
        for (index, part) in svg.components(separatedBy: "<style>").enumerated() {
            guard index > 0, let end = part.range(of: "</style>") else {
                result += part.replacingOccurrences(of: "&quot;[^&]*&quot;", with: "", options: .regularExpression)
                continue
            }
            result += part[..<end.lowerBound].replacingOccurrences(of: "\"[^\"]*\"", with: "", options: .regularExpression)
            result += part[end.lowerBound...].replacingOccurrences(of: "&quot;[^&]*&quot;", with: "", options: .regularExpression)
        }
        return result
    }

    // MARK: Bytes

    private static func bigEndian(_ value: UInt32) -> [UInt8] {
        [UInt8(value >> 24 & 0xFF), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)]
    }

    private static func bigEndian(_ value: UInt16) -> [UInt8] {
        [UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)]
    }
}
