import CWebP
import Foundation
import Imago

/// EXIF written into an encoded JPEG, PNG or WebP file, as the decoders
/// read it (``Imago/ImageMetadata/exif``, a TIFF structure) and
/// ``Imago/MetadataPolicy`` keeps it: by `ImageEncoders.encode(_:as:)` and
/// the image server (`strip_metadata`, `keep_copyright`).
package enum ExifMetadata {
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

    // MARK: Writing

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

    private static func le32(_ value: UInt32) -> [UInt8] {
        [UInt8(value & 0xFF), UInt8((value >> 8) & 0xFF), UInt8((value >> 16) & 0xFF), UInt8(value >> 24)]
    }
}

