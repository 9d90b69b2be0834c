import Foundation
import Imago

/// What a WebP file's RIFF chunks say beyond the pixels: the ICC profile
/// (`ICCP`) and the EXIF orientation (`EXIF`), which only the extended
/// format (`VP8X`) carries.
struct WebPMetadata: Sendable {
    /// The embedded ICC profile, if any.
    var colorProfile: ColorProfile?
    /// The EXIF orientation; ``ImageOrientation/up`` when there is none.
    var orientation: ImageOrientation = .up
    /// Where the first `EXIF` chunk's payload lies in the data (offsets
    /// from its first byte), for a caller that keeps EXIF; `nil` when there is none.
    var exifRange: Range<Int>?

    /// Walks the chunks after the `RIFF….WEBP` header, bounds-checked; a
    /// chunk that runs past the end stops the walk.
    init(reading data: Data) {
        data.withUnsafeBytes { raw in
            let bytes = raw.bindMemory(to: UInt8.self)
            guard bytes.count >= 12, Array(bytes[0..<4]) == Array("RIFF".utf8), Array(bytes[8..<12]) == Array("WEBP".utf8) else { return }
            var offset = 12
            var sawProfile = false, sawEXIF = false
            while offset + 8 <= bytes.count {
                let name = String(decoding: bytes[offset..<offset + 4], as: UTF8.self)
                let size = Int(bytes[offset + 4]) | Int(bytes[offset + 5]) << 8 | Int(bytes[offset + 6]) << 16 | Int(bytes[offset + 7]) << 24
                let start = offset + 8
                guard size <= bytes.count - start else { return }
                let payload = UnsafeBufferPointer(rebasing: bytes[start..<start + size])
                if name == "ICCP", !sawProfile, size > 0 {
                    colorProfile = ColorProfile(data: Data(payload))
                    sawProfile = true
                } else if name == "EXIF", !sawEXIF {
                    orientation = ExifOrientation.orientation(inEXIF: Data(payload))
                    exifRange = start..<start + size
                    sawEXIF = true
                }
                offset = start + size + (size & 1)
            }
        }
    }
}
