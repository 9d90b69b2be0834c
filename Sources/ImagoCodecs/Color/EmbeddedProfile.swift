import Foundation
import Imago

/// How the encoders embed colour profiles, in one place.
enum EmbeddedProfile {
    /// The profile to write for `image`: its own (kept from a decode with
    /// ``ImageDecodingOptions/ColorManagement/keepOriginal``), else sRGB when
    /// asked to tag sRGB output, else none.
    static func profile(for image: Image, embedsSRGB: Bool) -> ColorProfile? {
        image.colorProfile ?? (embedsSRGB ? .sRGB : nil)
    }

    /// `jpeg` with the profile in `APP2` segments after the `SOI` marker and
    /// any `APP0` (JFIF) segment, split into parts of at most 65,519 bytes.
    ///
    /// - Throws: ``ImageEncodingError`` when the profile needs more than
    ///   255 parts (about 16 MB).
    static func inserting(_ profile: ColorProfile, intoJPEG jpeg: Data) throws -> Data {
        let partSize = 65_519
        let parts = stride(from: 0, to: profile.data.count, by: partSize).map { start in
            profile.data.subdata(in: profile.data.startIndex + start..<profile.data.startIndex + min(start + partSize, profile.data.count))
        }
        guard !parts.isEmpty, parts.count <= 255 else {
            throw ImageEncodingError(.unsupportedImage, format: .jpeg, message: "a colour profile of \(profile.data.count) bytes does not fit a JPEG")
        }
        var segments = Data()
        for (index, part) in parts.enumerated() {
            let length = 2 + 12 + 2 + part.count
            segments.append(contentsOf: [0xFF, 0xE2, UInt8(length >> 8), UInt8(length & 0xFF)])
            segments.append(contentsOf: Array("ICC_PROFILE".utf8) + [0, UInt8(index + 1), UInt8(parts.count)])
            segments.append(part)
        }
        let insertAt = metadataIndex(inJPEG: jpeg)
        var result = Data(jpeg[jpeg.startIndex..<insertAt])
        result.append(segments)
        result.append(jpeg[insertAt...])
        return result
    }

    /// `webp` in the extended format with an `ICCP` chunk: after the
    /// existing `VP8X` chunk (its ICC flag set), or after a new one.
    static func inserting(_ profile: ColorProfile, intoWebP webp: Data, width: Int, height: Int, hasAlpha: Bool) -> Data {
        let bytes = [UInt8](webp)
        var chunks = Array(bytes[12...])
        let iccp = chunk("ICCP", [UInt8](profile.data))
        if chunks.count >= 18, Array(chunks[0..<4]) == Array("VP8X".utf8) {
            chunks[8] |= 0x20                                       // ICC profile flag
            chunks.insert(contentsOf: iccp, at: 18)                 // after the 10-byte VP8X payload
        } else {
            chunks = chunk("VP8X", vp8xPayload(flags: 0x20, width: width, height: height, hasAlpha: hasAlpha)) + iccp + chunks
        }
        var result = Array("RIFF".utf8) + littleEndian32(4 + chunks.count) + Array("WEBP".utf8)
        result += chunks
        return Data(result)
    }

    /// Where metadata segments go in a JPEG: after `SOI` and any `APP0` (JFIF) segment.
    static func metadataIndex(inJPEG jpeg: Data) -> Data.Index {
        var index = jpeg.startIndex + 2   // after SOI
        if jpeg.count >= 6, jpeg[index] == 0xFF, jpeg[index + 1] == 0xE0 {
            index += 2 + (Int(jpeg[index + 2]) << 8 | Int(jpeg[index + 3]))
        }
        return index
    }

    /// The 10 bytes of a `VP8X` chunk: `flags` (plus the alpha flag), and the canvas size.
    static func vp8xPayload(flags: UInt8, width: Int, height: Int, hasAlpha: Bool) -> [UInt8] {
        var payload = [UInt8](repeating: 0, count: 10)
        payload[0] = flags | (hasAlpha ? 0x10 : 0)
        for (offset, value) in [(4, width - 1), (7, height - 1)] {
            payload[offset] = UInt8(value & 0xFF)
            payload[offset + 1] = UInt8((value >> 8) & 0xFF)
            payload[offset + 2] = UInt8((value >> 16) & 0xFF)
        }
        return payload
    }

    private static func chunk(_ name: String, _ payload: [UInt8]) -> [UInt8] {
        Array(name.utf8) + littleEndian32(payload.count) + payload + (payload.count % 2 == 1 ? [0] : [])
    }

    private static func littleEndian32(_ value: Int) -> [UInt8] {
        [UInt8(value & 0xFF), UInt8((value >> 8) & 0xFF), UInt8((value >> 16) & 0xFF), UInt8((value >> 24) & 0xFF)]
    }
}
