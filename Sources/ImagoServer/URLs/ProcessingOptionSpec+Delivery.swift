#if Server
import Foundation
import Imago

extension ProcessingOptionSpec {
    /// Filters and the watermark.
    static let effects: [ProcessingOptionSpec] = [
        .init(["sharpen", "sh"], arity: 1...1, example: "sh:0.5", read: { options, a throws(ImageServerError) in
            options.sharpen = try OptionValue.sigma(a[0], "sharpen")
        }, write: { o in o.sharpen.map { "sh:\(OptionValue.number($0))" } }),
        .init(["pixelate", "pix"], arity: 1...1, example: "pix:8", read: { options, a throws(ImageServerError) in
            let size = try OptionValue.side(a[0], "pixelate")
            options.pixelate = size > 1 ? size : nil
        }, write: { o in o.pixelate.map { "pix:\($0)" } }),
    ]

    /// Encoding, caching, naming and the source's metadata.
    static let delivery: [ProcessingOptionSpec] = [
        .init(["format_quality", "fq"], arity: nil, example: "fq:webp:70:avif:50", read: { options, a throws(ImageServerError) in
            guard a.count % 2 == 0 else { throw OptionValue.bad("format_quality takes FORMAT:QUALITY pairs") }
            for pair in stride(from: 0, to: a.count, by: 2) {
                options.formatQuality[try OptionValue.format(named: a[pair])] = try OptionValue.quality(a[pair + 1])
            }
        }, write: { o in
            o.formatQuality.isEmpty ? nil
                : "fq:" + o.formatQuality.sorted { $0.key.rawValue < $1.key.rawValue }.map { "\($0.key.rawValue):\($0.value)" }.joined(separator: ":")
        }),
        .init(["max_bytes", "mb"], arity: 1...1, example: "mb:10000", read: { options, a throws(ImageServerError) in
            guard let bytes = Int(a[0]), bytes >= 0 else {
                throw OptionValue.bad("max_bytes must be a whole number from 0 up, not \"\(a[0].prefix(20))\"")
            }
            options.maximumBytes = bytes > 0 ? bytes : nil
        }, write: { o in o.maximumBytes.map { "mb:\($0)" } }),
        .init(["cachebuster", "cb"], arity: 1...1, example: "cb:v2", read: { options, a throws(ImageServerError) in
            options.cacheBuster = a[0].isEmpty ? nil : String(a[0])
        }, write: { o in o.cacheBuster.map { "cb:" + $0 } }),
        .init(["expires", "exp"], arity: 1...1, example: "exp:4102444800", read: { options, a throws(ImageServerError) in
            guard let time = Int(a[0]) else { throw OptionValue.bad("expires must be a Unix time, not \"\(a[0].prefix(20))\"") }
            // Any time, 0 and negative ones too, is a time: those are past.
            options.expires = time
        }, write: { o in o.expires.map { "exp:\($0)" } }),
        .init(["filename", "fn"], arity: 1...2, example: "fn:holiday%20photo", read: { options, a throws(ImageServerError) in
            var name = String(a[0]).removingPercentEncoding ?? String(a[0])
            if let encoded = a.argument(1), try OptionValue.boolean(encoded, "filename") {
                guard let data = SigningKey.data(base64URL: String(a[0])), let decoded = String(data: data, encoding: .utf8) else {
                    throw OptionValue.bad("the filename is not valid base64url")
                }
                name = decoded
            }
            options.filename = name.isEmpty ? nil : name
        }, write: { o in o.filename.map { "fn:" + SigningKey.base64URL(Data($0.utf8)) + ":1" } }),
        .init(["return_attachment", "att"], arity: 1...1, example: "att:1", read: { options, a throws(ImageServerError) in
            options.returnsAttachment = try OptionValue.boolean(a[0], "return_attachment")
        }, write: { o in o.returnsAttachment ? "att:1" : nil }),
        // imgproxy's paid edition takes two more arguments; they are ignored, as there.
        .init(["watermark", "wm"], arity: 1...7, example: "wm:0.5:soea:10:5:0.2", read: { options, a throws(ImageServerError) in
            try readWatermark(&options, a)
        }, write: { o in
            o.watermark.map { mark in
                let position = mark.tiles ? "re" : mark.gravity.shortName
                return "wm:\(OptionValue.number(mark.opacity)):\(position):\(OptionValue.number(mark.offset.x)):"
                    + "\(OptionValue.number(mark.offset.y)):\(OptionValue.number(mark.scale))"
            }
        }),
        .init(["skip_processing", "skp"], arity: nil, example: "skp:gif:svg", read: { options, a throws(ImageServerError) in
            guard a.count > 0 else { throw OptionValue.bad("skip_processing takes one or more formats") }
            for text in a.values {
                let name = text.lowercased()
                if let format = ImageFormat(rawValue: ["jpg": "jpeg", "heif": "heic", "tif": "tiff"][name] ?? name) {
                    options.skipProcessingFormats.insert(format)
                } else if !OptionValue.unreadableSourceFormats.contains(name) {
                    throw OptionValue.bad("unknown format \"\(text.prefix(20))\" in skip_processing")
                }
            }
        }, write: { o in
            o.skipProcessingFormats.isEmpty ? nil : "skp:" + o.skipProcessingFormats.map(\.rawValue).sorted().joined(separator: ":")
        }),
        .init(["raw"], arity: 1...1, example: "raw:1", read: { options, a throws(ImageServerError) in
            options.isRaw = try OptionValue.boolean(a[0], "raw")
        }, write: { o in o.isRaw ? "raw:1" : nil }),
        .init(["auto_rotate", "ar"], arity: 1...1, example: "ar:0", read: { options, a throws(ImageServerError) in
            options.autoRotates = try OptionValue.boolean(a[0], "auto_rotate")
        }, write: { o in o.autoRotates ? nil : "ar:0" }),
        .init(["strip_metadata", "sm"], arity: 1...1, example: "sm:0", read: { options, a throws(ImageServerError) in
            options.stripsMetadata = try OptionValue.boolean(a[0], "strip_metadata")
        }, write: { o in o.stripsMetadata ? nil : "sm:0" }),
        .init(["keep_copyright", "kcr"], arity: 1...1, example: "kcr:0", read: { options, a throws(ImageServerError) in
            options.keepsCopyright = try OptionValue.boolean(a[0], "keep_copyright")
        }, write: { o in o.keepsCopyright ? nil : "kcr:0" }),
        .init(["strip_color_profile", "scp"], arity: 1...1, example: "scp:0", read: { options, a throws(ImageServerError) in
            options.stripsColorProfile = try OptionValue.boolean(a[0], "strip_color_profile")
        }, write: { o in o.stripsColorProfile ? nil : "scp:0" }),
        .init(["preserve_hdr", "ph"], arity: 1...1, example: "ph:1", read: { options, a throws(ImageServerError) in
            options.preservesHDR = try OptionValue.boolean(a[0], "preserve_hdr")
        }, write: { o in o.preservesHDR ? "ph:1" : nil }),
        .init(["enforce_thumbnail", "eth"], arity: 1...1, example: "eth:1", read: { options, a throws(ImageServerError) in
            options.enforcesThumbnail = try OptionValue.boolean(a[0], "enforce_thumbnail")
        }, write: { o in o.enforcesThumbnail ? "eth:1" : nil }),
        .init(["quality", "q"], arity: 1...1, example: "q:70", read: { options, a throws(ImageServerError) in
            options.quality = try OptionValue.quality(a[0])
        }, write: { o in o.quality.map { "q:\($0)" } }),
        .init(["blur", "bl"], arity: 1...1, example: "bl:2.5", read: { options, a throws(ImageServerError) in
            options.blur = try OptionValue.sigma(a[0], "blur")
        }, write: { o in o.blur.map { "bl:\(OptionValue.number($0))" } }),
        // Written by the path's extension (or as `f:` for a raw path), not here.
        .init(["format", "f", "ext"], arity: 1...1, example: "f:webp", read: { options, a throws(ImageServerError) in
            try OptionValue.setFormat(named: a[0], in: &options)
        }),
        // Expanded where it stands; the options it sets are written as themselves.
        .init(["preset", "pr"], arity: nil, example: "pr:thumb", read: { options, a throws(ImageServerError) in
            for name in a.values where !name.isEmpty {
                try ImageServerPath.applyPreset(String(name), to: &options, presets: a.presets, used: a.used)
            }
        }),
    ]

    /// `OPACITY[:POSITION[:X[:Y[:SCALE]]]]`; `re` tiles.
    static func readWatermark(_ options: inout ProcessingOptions, _ a: OptionArguments) throws(ImageServerError) {
        guard let opacity = Double(a[0]), opacity.isFinite, (0...1).contains(opacity) else {
            throw OptionValue.bad("watermark's opacity must be a number from 0 to 1, not \"\(a[0].prefix(20))\"")
        }
        var watermark = options.watermark ?? ProcessingOptions.Watermark(opacity: opacity)
        watermark.opacity = opacity
        if let position = a.argument(1) {
            if position == "re" {
                // Tiles are placed from the centre: a gravity from an earlier `wm` means nothing
                // now, and kept it would make two identities of one picture.
                (watermark.gravity, watermark.tiles) = (.center, true)
            } else {
                guard let gravity = ProcessingOptions.Gravity(shortName: String(position)), gravity != .smart, gravity != .focusPoint else {
                    throw OptionValue.bad("unknown watermark position \"\(position.prefix(20))\" (ce, no, so, ea, we, noea, nowe, soea, sowe or re)")
                }
                (watermark.gravity, watermark.tiles) = (gravity, false)
            }
        }
        for (index, name) in [(2, "X offset"), (3, "Y offset")] {
            guard let text = a.argument(index) else { continue }
            guard let value = Double(text), value.isFinite, abs(value) <= Double(OptionValue.maximumOutputSide) else {
                throw OptionValue.bad("watermark's \(name) must be a number, not \"\(text.prefix(20))\"")
            }
            if index == 2 { watermark.offset.x = value } else { watermark.offset.y = value }
        }
        if let text = a.argument(4) {
            guard let scale = Double(text), scale.isFinite, (0...OptionValue.maximumWatermarkScale).contains(scale) else {
                throw OptionValue.bad("watermark's scale must be a number from 0 to \(Int(OptionValue.maximumWatermarkScale)), not \"\(text.prefix(20))\"")
            }
            watermark.scale = scale
        }
        options.watermark = opacity > 0 ? watermark : nil
    }
}
#endif
