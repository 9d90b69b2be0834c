import Foundation
import Imago

/// Reads the EXIF `Orientation` tag from a JPEG's APP1 segment.
enum ExifOrientation {
    /// The orientation the JPEG declares, or ``ImageOrientation/up`` when it
    /// declares none or the metadata is malformed. Reads only the markers
    /// before the first scan; every offset is bounds-checked.
    static func read(from data: Data) -> ImageOrientation {
        data.withUnsafeBytes { raw in
            let bytes = raw.bindMemory(to: UInt8.self)
            guard bytes.count >= 4, bytes[0] == 0xFF, bytes[1] == 0xD8 else { return .up }
            var offset = 2
            while offset + 4 <= bytes.count {
                guard bytes[offset] == 0xFF else { return .up }
                let marker = bytes[offset + 1]
                if marker == 0xFF { offset += 1; continue }              // fill byte
                if marker == 0xDA || marker == 0xD9 { return .up }      // start of scan, end of image
                let length = Int(bytes[offset + 2]) << 8 | Int(bytes[offset + 3])
                guard length >= 2, offset + 2 + length <= bytes.count else { return .up }
                let segment = UnsafeBufferPointer(rebasing: bytes[(offset + 4)..<(offset + 2 + length)])
                if marker == 0xE1, let orientation = orientation(inAPP1: segment) {
                    return orientation
                }
                offset += 2 + length
            }
            return .up
        }
    }

    /// Parses `Exif\0\0` + a TIFF header + IFD0 for tag 0x0112.
    private static func orientation(inAPP1 segment: UnsafeBufferPointer<UInt8>) -> ImageOrientation? {
        let exifHeader: [UInt8] = [0x45, 0x78, 0x69, 0x66, 0, 0]
        guard segment.count >= 14, Array(segment[0..<6]) == exifHeader else { return nil }
        let tiff = UnsafeBufferPointer(rebasing: segment[6...])
        let littleEndian: Bool
        switch (tiff[0], tiff[1]) {
        case (0x49, 0x49): littleEndian = true
        case (0x4D, 0x4D): littleEndian = false
        default: return nil
        }
        func u16(_ at: Int) -> Int? {
            guard at >= 0, at + 2 <= tiff.count else { return nil }
            return littleEndian ? Int(tiff[at]) | Int(tiff[at + 1]) << 8 : Int(tiff[at]) << 8 | Int(tiff[at + 1])
        }
        func u32(_ at: Int) -> Int? {
            guard let high = u16(littleEndian ? at + 2 : at), let low = u16(littleEndian ? at : at + 2) else { return nil }
            return high << 16 | low
        }
        guard u16(2) == 42, let ifd = u32(4), let count = u16(ifd) else { return nil }
        for entry in 0..<count {
            let at = ifd + 2 + entry * 12
            guard let tag = u16(at) else { return nil }
            if tag == 0x0112 {
                guard u16(at + 2) == 3, let value = u16(at + 8) else { return nil }
                return ImageOrientation(rawValue: value)
            }
        }
        return nil
    }
}
