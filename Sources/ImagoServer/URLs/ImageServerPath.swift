#if Server
import Foundation
import Imago
import ImagoSVG

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
    /// - Parameter rules: How the source is read beyond its encoding
    ///   (replacements, a base URL, a file name after base64, the argument separator).
    /// - Parameter defaults: The options every path starts from, before the
    ///   `default` preset and the path's own (a server's
    ///   ``ImageServerConfiguration/defaultOptions``).
    public init(parsing path: some StringProtocol, presets: ImageServerPresets = .none,
                rules: ImageServerURLRules = ImageServerURLRules(), defaults: ProcessingOptions = ProcessingOptions()) throws(ImageServerError) {
        var path = String(path)
        guard path.hasPrefix("/") else { throw OptionValue.bad("the path must start with /") }
        // imgproxy's own layout for info, `/info/SIGNATURE/...`, signs the
        // part after the signature, without `/info`.
        let infoFirst = path.hasPrefix("/info/")
        if infoFirst { path.removeFirst(5) }
        let afterSlash = path.dropFirst()
        guard let signatureEnd = afterSlash.firstIndex(of: "/"), signatureEnd > afterSlash.startIndex else {
            throw OptionValue.bad("the path has no signature segment")
        }
        signature = String(afterSlash[..<signatureEnd])
        // What proxies mangle is mended first, and the signature covers the mended path, as in imgproxy.
        signedPart = Self.mended(afterSlash[signatureEnd...])
        var segments = signedPart.split(separator: "/", omittingEmptySubsequences: true)
        let separator = rules.argumentSeparator
        var options = defaults
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
                for name in segments[index].split(separator: separator) {
                    try Self.applyPreset(String(name), to: &options, presets: presets, used: [])
                }
                index += 1
            }
        } else {
            while index < segments.endIndex, segments[index] != "plain", segments[index].contains(separator) {
                let segment = separator == ":" ? segments[index] : Substring(segments[index].replacingOccurrences(of: String(separator), with: ":"))
                if let allowed = rules.allowedOptions, let name = segment.split(separator: ":", maxSplits: 1).first, !allowed.contains(String(name)) {
                    throw ImageServerError(.optionNotAllowed, "the option \(name.prefix(40)) is not among the options this server allows")
                }
                try ProcessingOptionSpec.apply(segment, to: &options, presets: presets, used: [])
                index += 1
            }
        }
        guard index < segments.endIndex else { throw OptionValue.bad("the path has no source URL") }
        let sourceText: String
        if segments[index] == "plain" {
            // The rest of the path, slashes included, is the percent-encoded URL.
            let rest = signedPart[segments[index].endIndex...].drop { $0 == "/" }
            guard !rest.isEmpty else { throw OptionValue.bad("the path has no source URL after plain/") }
            var encoded = Substring(rest)
            if let at = encoded.lastIndex(of: "@") {
                extensionFormat = encoded[encoded.index(after: at)...]
                encoded = encoded[..<at]
            }
            guard let decoded = encoded.removingPercentEncoding else { throw OptionValue.bad("the source URL has a bad percent-encoding") }
            sourceText = decoded
        } else {
            // Base64url, perhaps split over several segments, perhaps followed by a file name.
            if rules.base64IncludesFilename, segments.endIndex - index > 1 { segments.removeLast() }
            var encoded = segments[index...].joined()
            if let dot = encoded.lastIndex(of: ".") {
                extensionFormat = Substring(encoded[encoded.index(after: dot)...])
                encoded = String(encoded[..<dot])
            }
            guard let data = SigningKey.data(base64URL: encoded), let decoded = String(data: data, encoding: .utf8) else {
                throw OptionValue.bad("the source is neither plain/ nor valid base64url")
            }
            sourceText = decoded
        }
        // Any scheme parses; the source policy refuses all but http(s) with a 404.
        let rewritten = rules.rewritten(sourceText)
        guard let source = URL(string: rewritten), source.scheme != nil else {
            throw OptionValue.bad("the source is not an absolute URL: \(sourceText.prefix(200))")
        }
        if let extensionFormat {
            var named = options
            try OptionValue.setFormat(named: extensionFormat, in: &named)
            // A raw path is not converted: its extension names no output format (as imgproxy).
            if !options.isRaw { options = named }
        }
        self.options = options
        self.source = source
        if infoFirst { isInfo = true }
    }

    /// `path` (after the signature, with its leading `/`) as it was before
    /// a proxy mangled it, as imgproxy mends it: `%3A` in the options is `:`
    /// again, and a plain source's `scheme:/host` is `scheme://host`
    /// (`local:/file` is `local:///file`).
    static func mended(_ path: Substring) -> String {
        let options: Substring
        let plain: Substring?
        if let range = path.range(of: "/plain/") {
            (options, plain) = (path[..<range.lowerBound], path[range.upperBound...])
        } else {
            (options, plain) = (path, nil)
        }
        var mended = options.replacingOccurrences(of: "%3A", with: ":")
        guard var source = plain.map(String.init) else { return mended }
        // `scheme:/X` with X not a slash: a slash was squeezed out.
        if let colon = source.firstIndex(of: ":"), source[..<colon].allSatisfy({ !$0.isWhitespace && $0 != "/" }),
           source[colon...].hasPrefix(":/"), !source[colon...].hasPrefix("://") {
            let scheme = source[..<colon]
            source = scheme + (scheme == "local" ? ":///" : "://") + source[source.index(colon, offsetBy: 2)...]
        }
        mended += "/plain/" + source
        return mended
    }

    // MARK: Writing

    /// The path for `source` and `options`, without the signature: the
    /// option table's segments (``ProcessingOptionSpec/table``), then the source.
    static func unsignedPath(source: URL, options: ProcessingOptions, encoding: SourceEncoding) -> String {
        var parts = ProcessingOptionSpec.segments(for: options)
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

    // MARK: Reading

    /// Applies the preset `name`'s options; a preset already in `used`
    /// (one that uses itself, directly or not) is skipped, as imgproxy does.
    static func applyPreset(
        _ name: String, to options: inout ProcessingOptions, presets: ImageServerPresets, used: [String]
    ) throws(ImageServerError) {
        guard let segments = presets.definitions[name] else {
            throw OptionValue.bad("unknown preset \"\(name.prefix(40))\"")
        }
        guard !used.contains(name) else { return }
        for segment in segments {
            try ProcessingOptionSpec.apply(segment, to: &options, presets: presets, used: used + [name])
        }
    }
}
#endif
