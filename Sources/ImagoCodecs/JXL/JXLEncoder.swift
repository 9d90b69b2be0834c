import CJxl
import Foundation
import Imago

/// Encodes the first frame of an ``Image`` as JPEG XL with libjxl.
///
/// Images are converted to RGB or RGBA (gray is expanded; alpha is kept
/// when it is not fully opaque). ``quality`` maps to libjxl's Butteraugli
/// distance as `cjxl` maps it (90 is distance 1, "visually lossless"); 100,
/// or ``lossless``, keeps every pixel. An image's ``Image/colorProfile`` is
/// embedded; otherwise the file says sRGB.
///
/// Safe to use from several threads at once; each call is independent.
///
/// ```swift
/// let data = try JXLEncoder(quality: 80).encode(image)
/// ```
public struct JXLEncoder: ImageEncoding {
    /// Always ``ImageFormat/jxl``.
    public var format: ImageFormat { .jxl }

    /// The quality used when none is given: 80, as imgproxy's default.
    public static let defaultQuality = 80

    /// The quality, from 0 (smallest) to 100 (lossless); clamped.
    public var quality: Int
    /// Whether to encode losslessly, whatever the quality.
    public var lossless: Bool
    /// libjxl's effort, from 1 (fastest) to 9 (smallest); values outside
    /// ``effortRange`` are clamped to it. Default ``defaultEffort``,
    /// imgproxy's: at libjxl's own 7, a photo takes several times longer.
    /// imgproxy's `IMGPROXY_JXL_EFFORT`.
    public var effort: Int

    /// The efforts libjxl takes: 1 to 9.
    public static let effortRange = 1...9

    /// The effort used when none is given: 4, imgproxy's default.
    public static let defaultEffort = 4

    /// Creates an encoder.
    public init(quality: Int = JXLEncoder.defaultQuality, lossless: Bool = false, effort: Int = JXLEncoder.defaultEffort) {
        self.quality = quality
        self.lossless = lossless
        self.effort = effort
    }

    /// The Butteraugli distance for a quality, as `cjxl --quality` maps
    /// it: 0.1 + (100 - q) x 0.09 from 30 up, then faster growth to 25 at 0;
    /// 0 (lossless) at 100.
    public static func distance(forQuality quality: Int) -> Float {
        let q = Double(min(max(quality, 0), 100))
        if q >= 100 { return 0 }
        let distance = q >= 30 ? 0.1 + (100 - q) * 0.09 : 6.4 + pow(2.5, (30 - q) / 5) / 6.25
        return Float(min(distance, 25))
    }

    /// Encodes the first frame of `image`.
    ///
    /// - Throws: ``ImageEncodingError``: `encodingFailed` (the
    ///   ``CodecError`` from libjxl as `underlying`) when libjxl fails.
    public func encode(_ image: Image) throws -> Data {
        do {
            return try encodeWithLibjxl(image)
        } catch let error as CodecError {
            throw ImageEncodingError(.encodingFailed, format: .jxl, message: "\(error)", underlying: error)
        }
    }

    private func encodeWithLibjxl(_ image: Image) throws -> Data {
        let first = image.firstFrame
        let hasAlpha = image.pixelFormat.hasAlpha && !first.isOpaque
        let rgb = first.converted(to: hasAlpha ? .rgba8 : .rgb8)
        let exact = lossless || quality >= 100
        guard let width = UInt32(exactly: rgb.width), let height = UInt32(exactly: rgb.height),
              let encoder = JxlEncoderCreate(nil) else { throw CodecError.libjxl(.outOfMemory) }
        defer { JxlEncoderDestroy(encoder) }

        var info = JxlBasicInfo()
        JxlEncoderInitBasicInfo(&info)
        info.xsize = width
        info.ysize = height
        info.bits_per_sample = 8
        info.num_color_channels = 3
        info.num_extra_channels = hasAlpha ? 1 : 0
        info.alpha_bits = hasAlpha ? 8 : 0
        // Lossless needs the original colour space; lossy uses XYB.
        info.uses_original_profile = exact || image.colorProfile != nil ? JXL_TRUE : JXL_FALSE
        try check(JxlEncoderSetBasicInfo(encoder, &info), "JxlEncoderSetBasicInfo")
        if let profile = image.colorProfile {
            try profile.data.withUnsafeBytes { bytes in
                try check(JxlEncoderSetICCProfile(encoder, bytes.bindMemory(to: UInt8.self).baseAddress, bytes.count), "JxlEncoderSetICCProfile")
            }
        } else {
            var color = JxlColorEncoding()
            JxlColorEncodingSetToSRGB(&color, JXL_FALSE)
            try check(JxlEncoderSetColorEncoding(encoder, &color), "JxlEncoderSetColorEncoding")
        }
        guard let settings = JxlEncoderFrameSettingsCreate(encoder, nil) else { throw CodecError.libjxl(.outOfMemory) }
        try check(JxlEncoderFrameSettingsSetOption(settings, JXL_ENC_FRAME_SETTING_EFFORT, Int64(Self.effortRange.clamping(effort))), "effort")
        if exact {
            try check(JxlEncoderSetFrameLossless(settings, JXL_TRUE), "JxlEncoderSetFrameLossless")
        } else {
            try check(JxlEncoderSetFrameDistance(settings, Self.distance(forQuality: quality)), "JxlEncoderSetFrameDistance")
        }
        var format = JxlPixelFormat(num_channels: hasAlpha ? 4 : 3, data_type: JXL_TYPE_UINT8, endianness: JXL_NATIVE_ENDIAN,
                                    align: rgb.bytesPerRow)
        try rgb.pixels.withUnsafeBytes { bytes in
            try check(JxlEncoderAddImageFrame(settings, &format, bytes.baseAddress, rgb.bytesPerRow * rgb.height), "JxlEncoderAddImageFrame")
        }
        JxlEncoderCloseInput(encoder)

        var output = [UInt8](repeating: 0, count: max(4096, rgb.pixels.count / 8))
        var written = 0
        while true {
            var next: UnsafeMutablePointer<UInt8>?
            var available = 0
            let status = output.withUnsafeMutableBufferPointer { buffer -> JxlEncoderStatus in
                next = buffer.baseAddress! + written
                available = buffer.count - written
                let start = next
                let status = JxlEncoderProcessOutput(encoder, &next, &available)
                written += next! - start!
                return status
            }
            if status == JXL_ENC_SUCCESS { break }
            guard status == JXL_ENC_NEED_MORE_OUTPUT else { try check(status, "JxlEncoderProcessOutput") ; break }
            output.append(contentsOf: repeatElement(0, count: output.count))
        }
        return Data(output[..<written])
    }

    private func check(_ status: JxlEncoderStatus, _ call: String) throws {
        guard status == JXL_ENC_SUCCESS else {
            throw CodecError(library: "libjxl", code: Int(status.rawValue), message: "\(call) failed")
        }
    }
}

extension Image {
    /// Whether every pixel of the first frame is fully opaque (`true` without alpha).
    var isOpaque: Bool {
        guard pixelFormat.hasAlpha else { return true }
        let bytesPerPixel = pixelFormat.bytesPerPixel
        return pixels.withUnsafeBufferPointer { pixels in
            for row in 0..<height {
                var index = row * bytesPerRow + bytesPerPixel - 1
                for _ in 0..<width {
                    if pixels[index] != 255 { return false }
                    index += bytesPerPixel
                }
            }
            return true
        }
    }
}
