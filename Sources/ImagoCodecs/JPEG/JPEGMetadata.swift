import Foundation
import Imago

/// What a JPEG's marker segments say beyond the pixels: the EXIF
/// orientation (`APP1`) and the ICC profile (`APP2`, possibly split over
/// several segments).
struct JPEGMetadata: Sendable {
    /// The orientation the file declares; ``ImageOrientation/up`` when it
    /// declares none or its EXIF data is malformed.
    var orientation: ImageOrientation = .up
    /// The embedded ICC profile, reassembled; `nil` when there is none or
    /// its segments are inconsistent (missing, repeated or miscounted
    /// parts), which browsers also ignore.
    var colorProfile: ColorProfile?
    /// Where the first `APP1 Exif` segment's TIFF structure lies in the
    /// data (offsets from its first byte), for a caller that keeps EXIF;
    /// `nil` when there is none.
    var exifRange: Range<Int>?

    /// Reads the markers before the first scan, found as libjpeg finds
    /// them (see ``JPEGMarkers``); every offset is bounds-checked.
    init(reading data: Data, markers: JPEGMarkers? = nil) {
        var exifFound = false
        var profileParts: [Int: Data] = [:]
        var profileCount: Int?
        var profileConsistent = true
        let markers = markers ?? JPEGMarkers(reading: data)
        data.withUnsafeBytes { raw in
            let bytes = raw.bindMemory(to: UInt8.self)
            for segment in markers.segments where segment.marker == 0xE1 || segment.marker == 0xE2 {
                let payload = UnsafeBufferPointer(rebasing: bytes[segment.payload])
                if segment.marker == 0xE1, exifRange == nil, payload.count > 6, Array(payload[0..<6]) == Self.exifHeader {
                    exifRange = (segment.payload.lowerBound + 6)..<segment.payload.upperBound
                }
                if segment.marker == 0xE1, !exifFound, let orientation = Self.orientation(inAPP1: payload) {
                    self.orientation = orientation
                    exifFound = true
                } else if segment.marker == 0xE2, let part = Self.profilePart(inAPP2: payload) {
                    if profileCount == nil { profileCount = part.count }
                    if part.count != profileCount || part.sequence < 1 || part.sequence > part.count || profileParts[part.sequence] != nil {
                        profileConsistent = false
                    }
                    profileParts[part.sequence] = part.bytes
                }
            }
        }
        if profileConsistent, let profileCount, profileParts.count == profileCount {
            var profile = Data()
            for sequence in 1...profileCount { profile.append(profileParts[sequence]!) }
            colorProfile = ColorProfile(data: profile)
        }
    }

    /// An `APP2` segment of an ICC profile: `ICC_PROFILE\0`, the part's
    /// 1-based sequence number, the number of parts, then the bytes.
    private static func profilePart(inAPP2 segment: UnsafeBufferPointer<UInt8>) -> (sequence: Int, count: Int, bytes: Data)? {
        let signature = Array("ICC_PROFILE".utf8) + [0]
        guard segment.count > 14, Array(segment[0..<12]) == signature else { return nil }
        return (Int(segment[12]), Int(segment[13]), Data(segment[14...]))
    }

    /// `Exif\0\0`, the start of an `APP1` segment that holds EXIF.
    private static let exifHeader: [UInt8] = [0x45, 0x78, 0x69, 0x66, 0, 0]

    /// Parses `Exif\0\0` + a TIFF header + IFD0 for tag 0x0112.
    private static func orientation(inAPP1 segment: UnsafeBufferPointer<UInt8>) -> ImageOrientation? {
        guard segment.count >= 14, Array(segment[0..<6]) == exifHeader else { return nil }
        return ExifOrientation.orientation(inTIFF: UnsafeBufferPointer(rebasing: segment[6...]))
    }
}

/// The EXIF `Orientation` tag (0x0112) of a TIFF structure, as JPEG's
/// `APP1`, PNG's `eXIf` and WebP's `EXIF` chunk carry it.
enum ExifOrientation {
    /// The orientation in IFD0 of `tiff` (starting at the byte-order mark),
    /// or `nil` when there is none or the structure is malformed.
    static func orientation(inTIFF tiff: UnsafeBufferPointer<UInt8>) -> ImageOrientation? {
        guard tiff.count >= 8 else { return nil }
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

    /// The orientation in an EXIF block that is a TIFF structure, possibly
    /// preceded by `Exif\0\0` (some WebP writers add it); ``ImageOrientation/up``
    /// when there is none.
    static func orientation(inEXIF data: Data) -> ImageOrientation {
        data.withUnsafeBytes { raw in
            var bytes = raw.bindMemory(to: UInt8.self)
            if bytes.count >= 6, Array(bytes[0..<6]) == [0x45, 0x78, 0x69, 0x66, 0, 0] {
                bytes = UnsafeBufferPointer(rebasing: bytes[6...])
            }
            return orientation(inTIFF: bytes) ?? .up
        }
    }
}
