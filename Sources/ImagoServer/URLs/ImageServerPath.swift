#if Server
import Foundation
import Imago

/// An image-server path in the format imgproxy made common:
///
///     /{signature}/{option}/{option}/.../plain/{percent-encoded source}[@{extension}]
///     /{signature}/{option}/{option}/.../{base64url source}[.{extension}]
///
/// Parse what a client sent with ``init(parsing:)``; build a path for a
/// client with ``init(source:options:)`` and ``path(signedWith:encoding:)``.
///
/// ```swift
/// var options = ProcessingOptions()
/// options.width = 256
/// options.height = 256
/// let path = ImageServerPath(source: photoURL, options: options).path(signedWith: key)
/// // "/Xs9…/rs:fit:256:256:0/plain/https%3A%2F%2Fimages.example%2Fphoto.jpg"
/// ```
public struct ImageServerPath: Sendable, Hashable {
    /// How the source URL is written in a path.
    public enum SourceEncoding: Sendable {
        /// `plain/` and the percent-encoded URL.
        case plain
        /// The URL in base64url, without padding.
        case base64
    }

    /// The signature segment as sent (`insecure` or anything else when the server accepts unsigned paths).
    public var signature: String
    /// Everything after the signature segment, starting with `/`, exactly
    /// as sent: what the signature signs.
    public var signedPart: String
    /// What to do to the image.
    public var options: ProcessingOptions
    /// The source image's URL.
    public var source: URL
    /// Whether the path asks for the source's description as JSON
    /// (`/SIGNATURE/info/plain/SOURCE`, or imgproxy's `/info/SIGNATURE/plain/SOURCE`)
    /// instead of an image. ``path(signedWith:encoding:)`` writes the first form.
    public var isInfo: Bool = false

    /// The largest width or height a path may ask for.
    public static let maximumOutputSide = 8192
    /// The largest watermark scale a path may ask for (the watermark at
    /// most this many times the result's size).
    public static let maximumWatermarkScale = 10.0
    /// The largest blur sigma a path may ask for.
    public static let maximumBlur = 100.0

    /// A path for `source` with `options`, to be written with ``path(signedWith:encoding:)``.
    public init(source: URL, options: ProcessingOptions = ProcessingOptions()) {
        self.signature = "insecure"
        self.options = options
        self.source = source
        self.signedPart = ""
        self.signedPart = Self.unsignedPath(source: source, options: options, encoding: .plain)
    }

    /// The path to request: the signature (`insecure` without a key), then
    /// every option that differs from the default, then the source.
    public func path(signedWith key: SigningKey?, encoding: SourceEncoding = .plain) -> String {
        let unsigned = (isInfo ? "/info" : "") + Self.unsignedPath(source: source, options: options, encoding: encoding)
        return "/" + (key?.signature(forPath: unsigned) ?? "insecure") + unsigned
    }

    /// Parses a path as sent (percent-encoding intact, no query).
    ///
    /// - Throws: ``ImageServerError`` with ``ImageServerError/Code/badOptions``
    ///   for anything malformed: no signature, an unknown option, a bad
    ///   argument, a size outside 0...8192, a source that is not an absolute
    ///   URL, bad base64, an unknown extension.
    ///
    /// - Parameter presets: The presets `preset:NAME` may use; the `default`
    ///   one applies first, and in ``ImageServerPresets/onlyPresets`` mode
    ///   the first segment is a list of presets.
    public init(parsing path: some StringProtocol, presets: ImageServerPresets = .none) throws(ImageServerError) {
        var path = String(path)
        guard path.hasPrefix("/") else { throw Self.bad("the path must start with /") }
        // imgproxy's own layout for info, `/info/SIGNATURE/...`, signs the
        // part after the signature, without `/info`.
        let infoFirst = path.hasPrefix("/info/")
        if infoFirst { path.removeFirst(5) }
        let afterSlash = path.dropFirst()
        guard let signatureEnd = afterSlash.firstIndex(of: "/"), signatureEnd > afterSlash.startIndex else {
            throw Self.bad("the path has no signature segment")
        }
        signature = String(afterSlash[..<signatureEnd])
        signedPart = String(afterSlash[signatureEnd...])
        let segments = signedPart.split(separator: "/", omittingEmptySubsequences: true)
        var options = ProcessingOptions()
        if presets.definitions["default"] != nil {
            try Self.applyPreset("default", to: &options, presets: presets, used: [])
        }
        var index = segments.startIndex
        if index < segments.endIndex, segments[index] == "info" {
            isInfo = true
            index += 1
        }
        var extensionFormat: Substring?
        if presets.onlyPresets {
            if index < segments.endIndex, segments[index] != "plain" {
                for name in segments[index].split(separator: ":") {
                    try Self.applyPreset(String(name), to: &options, presets: presets, used: [])
                }
                index += 1
            }
        } else {
            while index < segments.endIndex, segments[index] != "plain", segments[index].contains(":") {
                try Self.apply(segments[index], to: &options, presets: presets, used: [])
                index += 1
            }
        }
        guard index < segments.endIndex else { throw Self.bad("the path has no source URL") }
        let sourceText: String
        if segments[index] == "plain" {
            // The rest of the path, slashes included, is the percent-encoded URL.
            let rest = signedPart[segments[index].endIndex...].drop { $0 == "/" }
            guard !rest.isEmpty else { throw Self.bad("the path has no source URL after plain/") }
            var encoded = Substring(rest)
            if let at = encoded.lastIndex(of: "@") {
                extensionFormat = encoded[encoded.index(after: at)...]
                encoded = encoded[..<at]
            }
            guard let decoded = encoded.removingPercentEncoding else { throw Self.bad("the source URL has a bad percent-encoding") }
            sourceText = decoded
        } else {
            // Base64url, perhaps split over several segments.
            var encoded = segments[index...].joined()
            if let dot = encoded.lastIndex(of: ".") {
                extensionFormat = Substring(encoded[encoded.index(after: dot)...])
                encoded = String(encoded[..<dot])
            }
            guard let data = SigningKey.data(base64URL: encoded), let decoded = String(data: data, encoding: .utf8) else {
                throw Self.bad("the source is neither plain/ nor valid base64url")
            }
            sourceText = decoded
        }
        // Any scheme parses; the source policy refuses all but http(s) with a 403.
        guard let source = URL(string: sourceText), source.scheme != nil else {
            throw Self.bad("the source is not an absolute URL: \(sourceText.prefix(200))")
        }
        if let extensionFormat {
            var named = options
            try Self.setFormat(named: extensionFormat, in: &named)
            // A raw path is not converted: its extension names no output format (as imgproxy).
            if !options.isRaw { options = named }
        }
        self.options = options
        self.source = source
        if infoFirst { isInfo = true }
    }

    // MARK: Writing

    static func unsignedPath(source: URL, options: ProcessingOptions, encoding: SourceEncoding) -> String {
        var parts: [String] = []
        let defaults = ProcessingOptions()
        if options.resizingType != defaults.resizingType || options.width != 0 || options.height != 0 || options.enlarge {
            parts.append("rs:\(options.resizingType.rawValue):\(options.width):\(options.height):\(options.enlarge ? 1 : 0)")
        }
        if options.gravity != defaults.gravity || options.gravityOffset != .zero {
            parts.append("g:" + gravityArguments(options.gravity, options.gravityOffset))
        }
        if options.minWidth != 0 { parts.append("mw:\(options.minWidth)") }
        if options.minHeight != 0 { parts.append("mh:\(options.minHeight)") }
        if options.zoomX != 1 || options.zoomY != 1 { parts.append("z:\(number(options.zoomX)):\(number(options.zoomY))") }
        if options.dpr != 1 { parts.append("dpr:\(number(options.dpr))") }
        if let extend = options.extend { parts.append("ex:1:" + gravityArguments(extend.gravity, extend.offset)) }
        if let extend = options.extendAspectRatio { parts.append("exar:1:" + gravityArguments(extend.gravity, extend.offset)) }
        if let crop = options.crop {
            parts.append("c:\(number(crop.width)):\(number(crop.height))" + (crop.gravity.map { ":" + gravityArguments($0, crop.offset) } ?? ""))
        }
        if options.padding != .zero {
            let padding = options.padding
            parts.append("pd:\(padding.top):\(padding.right):\(padding.bottom):\(padding.left)")
        }
        if let trim = options.trim {
            let color = trim.color.map { String(format: "%02x%02x%02x", $0.red, $0.green, $0.blue) } ?? ""
            parts.append("t:\(number(trim.threshold)):\(color):\(trim.equalHorizontal ? 1 : 0):\(trim.equalVertical ? 1 : 0)")
        }
        if options.rotation != 0 { parts.append("rot:\(options.rotation)") }
        if options.flipsHorizontally || options.flipsVertically {
            parts.append("fl:\(options.flipsHorizontally ? 1 : 0):\(options.flipsVertically ? 1 : 0)")
        }
        if let color = options.background { parts.append("bg:\(color.red):\(color.green):\(color.blue)") }
        if let size = options.maximumResultDimension { parts.append("mrd:\(size)") }
        if let sigma = options.sharpen { parts.append("sh:\(number(sigma))") }
        if let size = options.pixelate { parts.append("pix:\(size)") }
        if !options.formatQuality.isEmpty {
            let pairs = options.formatQuality.sorted { $0.key.rawValue < $1.key.rawValue }.map { "\($0.key.rawValue):\($0.value)" }
            parts.append("fq:" + pairs.joined(separator: ":"))
        }
        if let bytes = options.maximumBytes { parts.append("mb:\(bytes)") }
        if let value = options.cacheBuster { parts.append("cb:" + value) }
        if let time = options.expires { parts.append("exp:\(time)") }
        if let name = options.filename { parts.append("fn:" + SigningKey.base64URL(Data(name.utf8)) + ":1") }
        if options.returnsAttachment { parts.append("att:1") }
        if let mark = options.watermark {
            let position = mark.tiles ? "re" : mark.gravity.rawValue
            parts.append("wm:\(number(mark.opacity)):\(position):\(number(mark.offset.x)):\(number(mark.offset.y)):\(number(mark.scale))")
        }
        if !options.skipProcessingFormats.isEmpty {
            parts.append("skp:" + options.skipProcessingFormats.map(\.rawValue).sorted().joined(separator: ":"))
        }
        if options.isRaw { parts.append("raw:1") }
        if !options.autoRotates { parts.append("ar:0") }
        if !options.stripsMetadata { parts.append("sm:0") }
        if !options.keepsCopyright { parts.append("kcr:0") }
        if !options.stripsColorProfile { parts.append("scp:0") }
        if let quality = options.quality { parts.append("q:\(quality)") }
        if let blur = options.blur { parts.append("bl:\(Self.number(blur))") }
        var formatName = options.requestsSVG ? "svg" : options.format?.rawValue
        // A raw path's extension names no format (it is ignored when parsed): its `f:` is written as an option.
        if options.isRaw, let name = formatName {
            parts.append("f:\(name)")
            formatName = nil
        }
        switch encoding {
        case .plain:
            var allowed = CharacterSet.alphanumerics
            allowed.insert(charactersIn: "-._~")
            let encoded = source.absoluteString.addingPercentEncoding(withAllowedCharacters: allowed) ?? source.absoluteString
            parts.append("plain")
            parts.append(encoded + (formatName.map { "@" + $0 } ?? ""))
        case .base64:
            parts.append(SigningKey.base64URL(Data(source.absoluteString.utf8)) + (formatName.map { "." + $0 } ?? ""))
        }
        return "/" + parts.joined(separator: "/")
    }

    /// `TYPE`, `TYPE:X:Y`, or `fp:X:Y`.
    private static func gravityArguments(_ gravity: ProcessingOptions.Gravity, _ offset: ProcessingOptions.Offset) -> String {
        gravity != .focusPoint && offset == .zero ? gravity.rawValue : "\(gravity.rawValue):\(number(offset.x)):\(number(offset.y))"
    }

    private static func number(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(Int(value)) : String(value)
    }

    // MARK: Reading

    /// Formats imgproxy names in `skip_processing` that Imago does not
    /// read: accepted, so that imgproxy's paths parse, and never matched
    /// (such a source is refused as not an image).
    static let unreadableSourceFormats: Set<String> = ["svg", "bmp", "ico", "tiff", "tif", "pdf", "mp4"]

    private static func bad(_ message: String) -> ImageServerError {
        ImageServerError(.badOptions, message)
    }

    private static func format(named name: Substring) throws(ImageServerError) -> ProcessingOptions.OutputFormat {
        guard let format = ProcessingOptions.OutputFormat(name: String(name)) else {
            throw bad("unknown output format \"\(name.prefix(20))\" (jpg, jpeg, png, webp, avif, gif or jxl)")
        }
        return format
    }

    /// Sets the output format `name` names: one of ``ProcessingOptions/OutputFormat``,
    /// or `svg` (``ProcessingOptions/requestsSVG``); each clears the other.
    private static func setFormat(named name: Substring, in options: inout ProcessingOptions) throws(ImageServerError) {
        if name.lowercased() == "svg" {
            (options.format, options.requestsSVG) = (nil, true)
        } else {
            (options.format, options.requestsSVG) = (try format(named: name), false)
        }
    }

    /// Applies the preset `name`'s options; a preset already in `used`
    /// (one that uses itself, directly or not) is skipped, as imgproxy does.
    static func applyPreset(
        _ name: String, to options: inout ProcessingOptions, presets: ImageServerPresets, used: [String]
    ) throws(ImageServerError) {
        guard let segments = presets.definitions[name] else {
            throw bad("unknown preset \"\(name.prefix(40))\"")
        }
        guard !used.contains(name) else { return }
        for segment in segments {
            try apply(segment, to: &options, presets: presets, used: used + [name])
        }
    }

    /// Applies one `name:arg:arg` segment.
    private static func apply(
        _ segment: Substring, to options: inout ProcessingOptions, presets: ImageServerPresets, used: [String]
    ) throws(ImageServerError) {
        let parts = segment.split(separator: ":", omittingEmptySubsequences: false)
        let name = parts[0]
        let arguments = Array(parts.dropFirst())
        func argument(_ index: Int) -> Substring? {
            index < arguments.count && !arguments[index].isEmpty ? arguments[index] : nil
        }
        func expectCount(_ range: ClosedRange<Int>) throws(ImageServerError) {
            guard range.contains(arguments.count) else {
                throw bad("\(name) takes \(range.lowerBound == range.upperBound ? "\(range.lowerBound)" : "\(range.lowerBound) to \(range.upperBound)") arguments, not \(arguments.count)")
            }
        }
        /// `W:H:ENLARGE:EXTEND` from argument `first` on: shared by `resize` and `size`.
        func applySize(from first: Int) throws(ImageServerError) {
            if let width = argument(first) { options.width = try side(width, "width") }
            if let height = argument(first + 1) { options.height = try side(height, "height") }
            if let enlarge = argument(first + 2) { options.enlarge = try boolean(enlarge, "enlarge") }
            if argument(first + 3) != nil {
                options.extend = try placement(Array(arguments[(first + 3)...]), name: "extend", current: options.extend)
            }
        }
        switch name {
        case "resize", "rs":
            try expectCount(1...8)
            if let type = argument(0) { options.resizingType = try resizingType(type) }
            try applySize(from: 1)
        case "size", "s":
            try expectCount(1...7)
            try applySize(from: 0)
        case "resizing_type", "rt":
            try expectCount(1...1)
            options.resizingType = try resizingType(arguments[0])
        case "width", "w":
            try expectCount(1...1)
            options.width = try side(arguments[0], "width")
        case "height", "h":
            try expectCount(1...1)
            options.height = try side(arguments[0], "height")
        case "min-width", "mw":
            try expectCount(1...1)
            options.minWidth = try side(arguments[0], "min-width")
        case "min-height", "mh":
            try expectCount(1...1)
            options.minHeight = try side(arguments[0], "min-height")
        case "zoom", "z":
            try expectCount(1...2)
            options.zoomX = try positive(arguments[0], "zoom")
            options.zoomY = arguments.count == 2 ? try positive(arguments[1], "zoom") : options.zoomX
        case "dpr":
            try expectCount(1...1)
            options.dpr = try positive(arguments[0], "dpr")
        case "enlarge", "el":
            try expectCount(1...1)
            options.enlarge = try boolean(arguments[0], "enlarge")
        case "extend", "ex":
            try expectCount(1...4)
            options.extend = try placement(arguments, name: "extend", current: options.extend)
        case "extend_aspect_ratio", "extend_ar", "exar":
            try expectCount(1...4)
            options.extendAspectRatio = try placement(arguments, name: "extend_aspect_ratio", current: options.extendAspectRatio)
        case "gravity", "g":
            let (gravity, offset) = try Self.gravity(arguments[...], current: options.gravityOffset, allowsSmart: true)
            options.gravity = gravity
            options.gravityOffset = offset
        case "crop", "c":
            try expectCount(1...5)
            // Arguments left out keep the earlier crop's (a preset's, say).
            var crop = options.crop ?? ProcessingOptions.Crop(width: 0, height: 0)
            crop.width = try cropSide(arguments[0], "width")
            if arguments.count > 1 { crop.height = try cropSide(arguments[1], "height") }
            if arguments.count > 2 {
                (crop.gravity, crop.offset) = try Self.gravity(arguments[2...], current: .zero, allowsSmart: true)
            }
            options.crop = crop.width == 0 && crop.height == 0 ? nil : crop
        case "trim", "t":
            try expectCount(1...4)
            guard !arguments[0].isEmpty else {
                options.trim = nil
                break
            }
            guard let threshold = Double(arguments[0]), threshold.isFinite, (0...255).contains(threshold) else {
                throw bad("trim's threshold must be a number from 0 to 255, not \"\(arguments[0].prefix(20))\"")
            }
            var trim = options.trim ?? ProcessingOptions.Trim(threshold: threshold)
            trim.threshold = threshold
            if arguments.count > 1 { trim.color = arguments[1].isEmpty ? nil : try background([arguments[1]]) }
            if let equal = argument(2) { trim.equalHorizontal = try boolean(equal, "trim") }
            if let equal = argument(3) { trim.equalVertical = try boolean(equal, "trim") }
            options.trim = trim
        case "padding", "pd":
            try expectCount(1...4)
            var padding = options.padding
            var sides: [Int?] = []
            for index in 0..<4 { sides.append(try argument(index).map { text throws(ImageServerError) in try side(text, "padding") }) }
            if let top = sides[0] { padding.top = top }
            if let right = sides[1] { padding.right = right } else if sides[0] != nil { padding.right = padding.top }
            if let bottom = sides[2] { padding.bottom = bottom } else if sides[0] != nil { padding.bottom = padding.top }
            if let left = sides[3] { padding.left = left } else if sides[0] != nil || sides[1] != nil { padding.left = padding.right }
            options.padding = padding
        case "auto_rotate", "ar":
            try expectCount(1...1)
            options.autoRotates = try boolean(arguments[0], "auto_rotate")
        case "rotate", "rot":
            try expectCount(1...1)
            guard let angle = Int(arguments[0]), angle % 90 == 0 else {
                throw bad("rotate must be a multiple of 90, not \"\(arguments[0].prefix(20))\"")
            }
            options.rotation = (angle % 360 + 360) % 360
        case "flip", "fl":
            try expectCount(1...2)
            if let horizontal = argument(0) { options.flipsHorizontally = try boolean(horizontal, "flip") }
            if let vertical = argument(1) { options.flipsVertically = try boolean(vertical, "flip") }
        case "background", "bg":
            options.background = try background(arguments)
        case "max_result_dimension", "mrd":
            try expectCount(1...1)
            guard let size = Int(arguments[0]) else {
                throw bad("max_result_dimension must be a whole number, not \"\(arguments[0].prefix(20))\"")
            }
            options.maximumResultDimension = size > 0 ? size : nil
        case "preset", "pr":
            for name in arguments where !name.isEmpty {
                try applyPreset(String(name), to: &options, presets: presets, used: used)
            }
        case "format_quality", "fq":
            guard arguments.count % 2 == 0 else { throw bad("format_quality takes FORMAT:QUALITY pairs") }
            for pair in stride(from: 0, to: arguments.count, by: 2) {
                options.formatQuality[try format(named: arguments[pair])] = try quality(arguments[pair + 1])
            }
        case "sharpen", "sh":
            try expectCount(1...1)
            options.sharpen = try sigma(arguments[0], "sharpen")
        case "pixelate", "pix":
            try expectCount(1...1)
            let size = try side(arguments[0], "pixelate")
            options.pixelate = size > 1 ? size : nil
        case "max_bytes", "mb":
            try expectCount(1...1)
            guard let bytes = Int(arguments[0]), bytes >= 0 else {
                throw bad("max_bytes must be a whole number from 0 up, not \"\(arguments[0].prefix(20))\"")
            }
            options.maximumBytes = bytes > 0 ? bytes : nil
        case "cachebuster", "cb":
            try expectCount(1...1)
            options.cacheBuster = arguments[0].isEmpty ? nil : String(arguments[0])
        case "expires", "exp":
            try expectCount(1...1)
            guard let time = Int(arguments[0]) else {
                throw bad("expires must be a Unix time, not \"\(arguments[0].prefix(20))\"")
            }
            // Any time, 0 and negative ones too, is a time: those are past.
            options.expires = time
        case "filename", "fn":
            try expectCount(1...2)
            var name = String(arguments[0]).removingPercentEncoding ?? String(arguments[0])
            if let encoded = argument(1), try boolean(encoded, "filename") {
                name = String(arguments[0])
                guard let data = SigningKey.data(base64URL: name), let decoded = String(data: data, encoding: .utf8) else {
                    throw bad("the filename is not valid base64url")
                }
                name = decoded
            }
            options.filename = name.isEmpty ? nil : name
        case "return_attachment", "att":
            try expectCount(1...1)
            options.returnsAttachment = try boolean(arguments[0], "return_attachment")
        case "watermark", "wm":
            // imgproxy's paid edition takes two more arguments; they are ignored, as there.
            try expectCount(1...7)
            guard let opacity = Double(arguments[0]), opacity.isFinite, (0...1).contains(opacity) else {
                throw bad("watermark's opacity must be a number from 0 to 1, not \"\(arguments[0].prefix(20))\"")
            }
            var watermark = options.watermark ?? ProcessingOptions.Watermark(opacity: opacity)
            watermark.opacity = opacity
            if let position = argument(1) {
                if position == "re" {
                    // Tiles are placed from the centre: a gravity from an earlier `wm` means nothing
                    // now, and kept it would make two identities of one picture.
                    (watermark.gravity, watermark.tiles) = (.center, true)
                } else {
                    guard let gravity = ProcessingOptions.Gravity(rawValue: String(position)), gravity != .smart, gravity != .focusPoint else {
                        throw bad("unknown watermark position \"\(position.prefix(20))\" (ce, no, so, ea, we, noea, nowe, soea, sowe or re)")
                    }
                    (watermark.gravity, watermark.tiles) = (gravity, false)
                }
            }
            for (index, name) in [(2, "X offset"), (3, "Y offset")] {
                guard let text = argument(index) else { continue }
                guard let value = Double(text), value.isFinite, abs(value) <= Double(maximumOutputSide) else {
                    throw bad("watermark's \(name) must be a number, not \"\(text.prefix(20))\"")
                }
                if index == 2 { watermark.offset.x = value } else { watermark.offset.y = value }
            }
            if let text = argument(4) {
                guard let scale = Double(text), scale.isFinite, (0...Self.maximumWatermarkScale).contains(scale) else {
                    throw bad("watermark's scale must be a number from 0 to \(Int(Self.maximumWatermarkScale)), not \"\(text.prefix(20))\"")
                }
                watermark.scale = scale
            }
            options.watermark = opacity > 0 ? watermark : nil
        case "skip_processing", "skp":
            guard !arguments.isEmpty else { throw bad("skip_processing takes one or more formats") }
            for text in arguments {
                let name = text.lowercased()
                if let format = ImageFormat(rawValue: ["jpg": "jpeg", "heif": "heic"][name] ?? name) {
                    options.skipProcessingFormats.insert(format)
                } else if !Self.unreadableSourceFormats.contains(name) {
                    throw bad("unknown format \"\(text.prefix(20))\" in skip_processing")
                }
            }
        case "raw":
            try expectCount(1...1)
            options.isRaw = try boolean(arguments[0], "raw")
        case "strip_metadata", "sm":
            try expectCount(1...1)
            options.stripsMetadata = try boolean(arguments[0], "strip_metadata")
        case "keep_copyright", "kcr":
            try expectCount(1...1)
            options.keepsCopyright = try boolean(arguments[0], "keep_copyright")
        case "strip_color_profile", "scp":
            try expectCount(1...1)
            options.stripsColorProfile = try boolean(arguments[0], "strip_color_profile")
        case "quality", "q":
            try expectCount(1...1)
            options.quality = try quality(arguments[0])
        case "format", "f", "ext":
            try expectCount(1...1)
            try setFormat(named: arguments[0], in: &options)
        case "blur", "bl":
            try expectCount(1...1)
            options.blur = try sigma(arguments[0], "blur")
        default:
            throw bad("unknown option \"\(name.prefix(40))\"")
        }
    }

    /// A gravity and its offsets: `TYPE[:X[:Y]]`, `sm` alone, `fp:X:Y`
    /// (0 to 1). Offsets left out or empty keep `current`.
    private static func gravity(
        _ arguments: ArraySlice<Substring>, current: ProcessingOptions.Offset, allowsSmart: Bool
    ) throws(ImageServerError) -> (ProcessingOptions.Gravity, ProcessingOptions.Offset) {
        let types = allowsSmart ? "ce, no, so, ea, we, noea, nowe, soea, sowe, sm or fp" : "ce, no, so, ea, we, noea, nowe, soea, sowe or fp"
        guard let first = arguments.first, let gravity = ProcessingOptions.Gravity(rawValue: String(first)),
              allowsSmart || gravity != .smart else {
            throw bad("unknown gravity \"\(arguments.first?.prefix(20) ?? "")\" (\(types))")
        }
        let values = Array(arguments.dropFirst())
        switch gravity {
        case .smart:
            guard values.isEmpty else { throw bad("gravity sm takes no offsets") }
            return (gravity, .zero)
        case .focusPoint:
            guard values.count == 2, let x = Double(values[0]), let y = Double(values[1]),
                  (0...1).contains(x), (0...1).contains(y) else {
                throw bad("gravity fp takes a point X:Y, each from 0 to 1")
            }
            return (gravity, ProcessingOptions.Offset(x: x, y: y))
        default:
            guard values.count <= 2 else { throw bad("gravity takes at most two offsets, X and Y") }
            var offset = current
            for (index, value) in values.enumerated() where !value.isEmpty {
                guard let number = Double(value), number.isFinite, abs(number) <= Double(maximumOutputSide) else {
                    throw bad("a gravity offset must be a number, not \"\(value.prefix(20))\"")
                }
                if index == 0 { offset.x = number } else { offset.y = number }
            }
            return (gravity, offset)
        }
    }

    /// `extend` and `extend_aspect_ratio`: `BOOL[:GRAVITY[:X[:Y]]]`.
    private static func placement(
        _ arguments: [Substring], name: String, current: ProcessingOptions.Placement?
    ) throws(ImageServerError) -> ProcessingOptions.Placement? {
        let enabled = try arguments[0].isEmpty ? false : boolean(arguments[0], name)
        // The gravity is checked even when the extension is off.
        var placement = current ?? .center
        if arguments.count > 1 {
            (placement.gravity, placement.offset) = try Self.gravity(arguments[1...], current: placement.offset, allowsSmart: false)
        }
        return enabled ? placement : nil
    }

    /// `R:G:B` (0 to 255 each), a hex colour (`RGB` or `RRGGBB`), or
    /// nothing, which takes the background away.
    private static func background(_ arguments: [Substring]) throws(ImageServerError) -> ImageColor? {
        switch arguments.count {
        case 1 where arguments[0].isEmpty:
            return nil
        case 1:
            let hex = arguments[0]
            guard hex.count == 3 || hex.count == 6, hex.allSatisfy(\.isHexDigit), let value = UInt32(hex, radix: 16) else {
                throw bad("background must be a hex colour (RGB or RRGGBB) or R:G:B, not \"\(hex.prefix(20))\"")
            }
            if hex.count == 3 {
                return ImageColor(red: UInt8((value >> 8) & 0xF) * 17, green: UInt8((value >> 4) & 0xF) * 17, blue: UInt8(value & 0xF) * 17)
            }
            return ImageColor(red: UInt8(value >> 16), green: UInt8((value >> 8) & 0xFF), blue: UInt8(value & 0xFF))
        case 3:
            var channels: [UInt8] = []
            for text in arguments {
                guard text.allSatisfy({ $0.isASCII && $0.isNumber }), let channel = UInt8(text) else {
                    throw bad("background channels must be whole numbers from 0 to 255, not \"\(text.prefix(20))\"")
                }
                channels.append(channel)
            }
            return ImageColor(red: channels[0], green: channels[1], blue: channels[2])
        default:
            throw bad("background takes a hex colour or R:G:B, not \(arguments.count) arguments")
        }
    }

    /// A quality from 0 to 100; 0 (the server's default) is `nil`.
    private static func quality(_ text: Substring) throws(ImageServerError) -> Int? {
        guard let quality = Int(text), (0...100).contains(quality) else {
            throw bad("quality must be a whole number from 0 to 100, not \"\(text.prefix(20))\"")
        }
        return quality == 0 ? nil : quality
    }

    /// A blur or sharpen sigma from 0 to ``maximumBlur``; 0 (none) is `nil`.
    private static func sigma(_ text: Substring, _ name: String) throws(ImageServerError) -> Double? {
        guard let sigma = Double(text), sigma.isFinite, (0...maximumBlur).contains(sigma) else {
            throw bad("\(name) must be a number from 0 to \(Int(maximumBlur)), not \"\(text.prefix(20))\"")
        }
        return sigma == 0 ? nil : sigma
    }

    /// A number above zero (zoom, dpr).
    private static func positive(_ text: Substring, _ name: String) throws(ImageServerError) -> Double {
        guard let value = Double(text), value.isFinite, value > 0, value <= Double(maximumOutputSide) else {
            throw bad("\(name) must be a number above 0, not \"\(text.prefix(20))\"")
        }
        return value
    }

    /// A crop side: pixels from 1 up, a fraction below 1, 0 for the whole side.
    private static func cropSide(_ text: Substring, _ name: String) throws(ImageServerError) -> Double {
        guard let value = Double(text), value.isFinite, (0...Double(maximumOutputSide * 8)).contains(value) else {
            throw bad("crop \(name) must be a number from 0 up, not \"\(text.prefix(20))\"")
        }
        return value
    }

    private static func resizingType(_ text: Substring) throws(ImageServerError) -> ProcessingOptions.ResizingType {
        guard let type = ProcessingOptions.ResizingType(rawValue: String(text)) else {
            throw bad("unknown resizing type \"\(text.prefix(20))\" (fit, fill, fill-down, force or auto)")
        }
        return type
    }

    private static func side(_ text: Substring, _ name: String) throws(ImageServerError) -> Int {
        guard text.allSatisfy(\.isASCII), let value = Int(text), (0...maximumOutputSide).contains(value) else {
            throw bad("\(name) must be a whole number from 0 to \(maximumOutputSide), not \"\(text.prefix(20))\"")
        }
        return value
    }

    private static func boolean(_ text: Substring, _ name: String) throws(ImageServerError) -> Bool {
        switch text {
        case "1", "t", "T", "true", "TRUE", "True": return true
        case "0", "f", "F", "false", "FALSE", "False": return false
        default: throw bad("\(name) must be 1, t, true, 0, f or false, not \"\(text.prefix(20))\"")
        }
    }
}
#endif
