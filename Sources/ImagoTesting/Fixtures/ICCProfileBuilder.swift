import Foundation

/// ICC profiles written in code, for fixtures that carry a colour space.
enum ICCProfileBuilder {
    /// Display P3 as an ICC v4 matrix-and-curves display profile: the P3
    /// primaries adapted to D50 (Bradford), the D65 white point, and the
    /// sRGB transfer curve, named "Display P3".
    static let displayP3: Data = matrixShaper(
        name: "Display P3",
        red: (0.515102, 0.241196, -0.001053),
        green: (0.291965, 0.692245, 0.041881),
        blue: (0.157153, 0.066561, 0.784378),
        adaptation: [1.047882, 0.022918, -0.050217, 0.029579, 0.990484, -0.017073, -0.009243, 0.015084, 0.751678]
    )

    typealias XYZ = (Double, Double, Double)

    /// An RGB display profile: primaries (already in the D50 connection
    /// space), the chromatic adaptation matrix from the display's white, and
    /// the sRGB curve for all three channels.
    static func matrixShaper(name: String, red: XYZ, green: XYZ, blue: XYZ, adaptation: [Double]) -> Data {
        let d50: XYZ = (0.9642, 1.0, 0.8249)
        let sRGBCurve = tagType("para") + uint16(3) + uint16(0)
            + [2.4, 1 / 1.055, 0.055 / 1.055, 1 / 12.92, 0.04045].flatMap(s15Fixed16)
        let tags: [(String, [UInt8])] = [
            ("desc", text(name)),
            ("cprt", text("No copyright, use freely")),
            ("wtpt", xyz(d50)),
            ("chad", tagType("sf32") + adaptation.flatMap(s15Fixed16)),
            ("rXYZ", xyz(red)), ("gXYZ", xyz(green)), ("bXYZ", xyz(blue)),
            ("rTRC", sRGBCurve), ("gTRC", sRGBCurve), ("bTRC", sRGBCurve),
        ]
        var offset = 128 + 4 + 12 * tags.count
        var table = uint32(tags.count)
        var bodies = [UInt8]()
        for (signature, body) in tags {
            let padded = body + [UInt8](repeating: 0, count: (4 - body.count % 4) % 4)
            table += Array(signature.utf8) + uint32(offset) + uint32(body.count)
            bodies += padded
            offset += padded.count
        }
        var header = [UInt8](repeating: 0, count: 128)
        func put(_ bytes: [UInt8], at position: Int) { header.replaceSubrange(position..<(position + bytes.count), with: bytes) }
        put(uint32(offset), at: 0)
        put([4, 0x30, 0, 0], at: 8)  // version 4.3
        put(Array("mntrRGB XYZ ".utf8), at: 12)
        put(uint16(2026) + uint16(1) + uint16(1) + uint16(0) + uint16(0) + uint16(0), at: 24)
        put(Array("acsp".utf8), at: 36)
        put(fixedXYZ(d50), at: 68)
        return Data(header + table + bodies)
    }

    private static func tagType(_ signature: String) -> [UInt8] { Array(signature.utf8) + [0, 0, 0, 0] }
    private static func xyz(_ value: XYZ) -> [UInt8] { tagType("XYZ ") + fixedXYZ(value) }
    private static func fixedXYZ(_ value: XYZ) -> [UInt8] { s15Fixed16(value.0) + s15Fixed16(value.1) + s15Fixed16(value.2) }

    /// A `mluc` tag of one English record.
    private static func text(_ string: String) -> [UInt8] {
        let units = Array(string.utf16).flatMap { [UInt8($0 >> 8), UInt8($0 & 0xFF)] }
        return tagType("mluc") + uint32(1) + uint32(12) + Array("enUS".utf8) + uint32(units.count) + uint32(28) + units
    }

    private static func s15Fixed16(_ value: Double) -> [UInt8] {
        uint32(Int(UInt32(bitPattern: Int32((value * 65536).rounded()))))
    }

    private static func uint32(_ value: Int) -> [UInt8] {
        [UInt8((value >> 24) & 0xFF), UInt8((value >> 16) & 0xFF), UInt8((value >> 8) & 0xFF), UInt8(value & 0xFF)]
    }

    private static func uint16(_ value: Int) -> [UInt8] { [UInt8((value >> 8) & 0xFF), UInt8(value & 0xFF)] }
}
