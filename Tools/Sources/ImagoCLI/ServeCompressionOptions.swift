import ArgumentParser
import Foundation
import ImagoCodecs
import ImagoServer

/// `imago serve`'s encoder settings: imgproxy's compression variables of
/// the same names, checked at start as imgproxy checks them.
struct ServeCompressionOptions: ParsableArguments {
    @Flag(help: "Write progressive JPEGs (IMGPROXY_JPEG_PROGRESSIVE).")
    var jpegProgressive = false

    @Flag(help: "Write interlaced (Adam7) PNGs (IMGPROXY_PNG_INTERLACED).")
    var pngInterlaced = false

    @Flag(help: "Write PNGs as indexed images of at most --png-quantization-colors colours (IMGPROXY_PNG_QUANTIZE).")
    var pngQuantize = false

    @Option(help: "The most colours of a quantized PNG, 2 to 256 (IMGPROXY_PNG_QUANTIZATION_COLORS).")
    var pngQuantizationColors = 256

    @Option(help: "libwebp's preset: default, photo, picture, drawing, icon or text (IMGPROXY_WEBP_PRESET).")
    var webpPreset = "default"

    @Option(help: "WebP encoder effort, 1 to 6 (IMGPROXY_WEBP_EFFORT).")
    var webpEffort = 4

    @Option(help: "AVIF encoder speed, 0 (slowest, smallest) to 9 (IMGPROXY_AVIF_SPEED; imgproxy's default 8).")
    var avifSpeed = 8

    @Option(help: "JPEG XL encoder effort, 1 to 9 (IMGPROXY_JXL_EFFORT).")
    var jxlEffort = 4

    func validate() throws {
        guard (2...256).contains(pngQuantizationColors) else { throw ValidationError("--png-quantization-colors must be from 2 to 256.") }
        guard WebPEncoder.Preset(rawValue: webpPreset.lowercased()) != nil else {
            throw ValidationError("--webp-preset must be one of \(WebPEncoder.Preset.allCases.map(\.rawValue).joined(separator: ", ")).")
        }
        guard (1...6).contains(webpEffort) else { throw ValidationError("--webp-effort must be from 1 to 6.") }
        guard (0...9).contains(avifSpeed) else { throw ValidationError("--avif-speed must be from 0 to 9.") }
        guard (1...9).contains(jxlEffort) else { throw ValidationError("--jxl-effort must be from 1 to 9.") }
    }

    /// The settings the server's encoders write with.
    var settings: EncoderSettings {
        EncoderSettings(jpegProgressive: jpegProgressive, pngInterlaced: pngInterlaced, pngPaletteColors: pngQuantize ? pngQuantizationColors : nil,
                        webpPreset: WebPEncoder.Preset(rawValue: webpPreset.lowercased()) ?? .default, webpEffort: webpEffort,
                        avifSpeed: avifSpeed, jxlEffort: jxlEffort)
    }

    /// The settings, one `flag = value` line each, for `--print-config`.
    var configurationLines: [(String, String)] {
        [("jpeg-progressive", "\(jpegProgressive)"), ("png-interlaced", "\(pngInterlaced)"), ("png-quantize", "\(pngQuantize)"),
         ("png-quantization-colors", "\(pngQuantizationColors)"), ("webp-preset", webpPreset.lowercased()), ("webp-effort", "\(webpEffort)"),
         ("avif-speed", "\(avifSpeed)"), ("jxl-effort", "\(jxlEffort)")]
    }
}
