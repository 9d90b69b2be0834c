#if Server
import Foundation

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

    /// The largest width or height a path may ask for.
    public static let maximumOutputSide = 8192
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
        let unsigned = Self.unsignedPath(source: source, options: options, encoding: encoding)
        return "/" + (key?.signature(forPath: unsigned) ?? "insecure") + unsigned
    }

    /// Parses a path as sent (percent-encoding intact, no query).
    ///
    /// - Throws: ``ImageServerError`` with ``ImageServerError/Code/badOptions``
    ///   for anything malformed: no signature, an unknown option, a bad
    ///   argument, a size outside 0...8192, a source that is not an absolute
    ///   URL, bad base64, an unknown extension.
    public init(parsing path: some StringProtocol) throws(ImageServerError) {
        let path = String(path)
        guard path.hasPrefix("/") else { throw Self.bad("the path must start with /") }
        let afterSlash = path.dropFirst()
        guard let signatureEnd = afterSlash.firstIndex(of: "/"), signatureEnd > afterSlash.startIndex else {
            throw Self.bad("the path has no signature segment")
        }
        signature = String(afterSlash[..<signatureEnd])
        signedPart = String(afterSlash[signatureEnd...])
        let segments = signedPart.split(separator: "/", omittingEmptySubsequences: true)
        var options = ProcessingOptions()
        var index = segments.startIndex
        var extensionFormat: ProcessingOptions.OutputFormat?
        while index < segments.endIndex, segments[index] != "plain", segments[index].contains(":") {
            try Self.apply(segments[index], to: &options)
            index += 1
        }
        guard index < segments.endIndex else { throw Self.bad("the path has no source URL") }
        let sourceText: String
        if segments[index] == "plain" {
            // The rest of the path, slashes included, is the percent-encoded URL.
            let rest = signedPart[segments[index].endIndex...].drop { $0 == "/" }
            guard !rest.isEmpty else { throw Self.bad("the path has no source URL after plain/") }
            var encoded = Substring(rest)
            if let at = encoded.lastIndex(of: "@") {
                extensionFormat = try Self.format(named: encoded[encoded.index(after: at)...])
                encoded = encoded[..<at]
            }
            guard let decoded = encoded.removingPercentEncoding else { throw Self.bad("the source URL has a bad percent-encoding") }
            sourceText = decoded
        } else {
            // Base64url, perhaps split over several segments.
            var encoded = segments[index...].joined()
            if let dot = encoded.lastIndex(of: ".") {
                extensionFormat = try Self.format(named: encoded[encoded.index(after: dot)...])
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
        if let extensionFormat { options.format = extensionFormat }
        self.options = options
        self.source = source
    }

    // MARK: Writing

    static func unsignedPath(source: URL, options: ProcessingOptions, encoding: SourceEncoding) -> String {
        var parts: [String] = []
        let defaults = ProcessingOptions()
        if options.resizingType != defaults.resizingType || options.width != 0 || options.height != 0 || options.enlarge {
            parts.append("rs:\(options.resizingType.rawValue):\(options.width):\(options.height):\(options.enlarge ? 1 : 0)")
        }
        if options.gravity != defaults.gravity { parts.append("g:\(options.gravity.rawValue)") }
        if let quality = options.quality { parts.append("q:\(quality)") }
        if let blur = options.blur { parts.append("bl:\(Self.number(blur))") }
        switch encoding {
        case .plain:
            var allowed = CharacterSet.alphanumerics
            allowed.insert(charactersIn: "-._~")
            let encoded = source.absoluteString.addingPercentEncoding(withAllowedCharacters: allowed) ?? source.absoluteString
            parts.append("plain")
            parts.append(encoded + (options.format.map { "@" + $0.rawValue } ?? ""))
        case .base64:
            parts.append(SigningKey.base64URL(Data(source.absoluteString.utf8)) + (options.format.map { "." + $0.rawValue } ?? ""))
        }
        return "/" + parts.joined(separator: "/")
    }

    private static func number(_ value: Double) -> String {
        value == value.rounded() ? String(Int(value)) : String(value)
    }

    // MARK: Reading

    private static func bad(_ message: String) -> ImageServerError {
        ImageServerError(.badOptions, message)
    }

    private static func format(named name: Substring) throws(ImageServerError) -> ProcessingOptions.OutputFormat {
        guard let format = ProcessingOptions.OutputFormat(name: String(name)) else {
            throw bad("unknown output format \"\(name.prefix(20))\" (jpg, jpeg, png, webp or avif)")
        }
        return format
    }

    /// Applies one `name:arg:arg` segment.
    private static func apply(_ segment: Substring, to options: inout ProcessingOptions) throws(ImageServerError) {
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
            if let extend = argument(first + 3), try boolean(extend, "extend") { throw bad("extend is not supported") }
        }
        switch name {
        case "resize", "rs":
            try expectCount(1...5)
            if let type = argument(0) { options.resizingType = try resizingType(type) }
            try applySize(from: 1)
        case "size", "s":
            try expectCount(1...4)
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
        case "enlarge", "el":
            try expectCount(1...1)
            options.enlarge = try boolean(arguments[0], "enlarge")
        case "gravity", "g":
            try expectCount(1...3)
            guard let gravity = ProcessingOptions.Gravity(rawValue: String(arguments[0])) else {
                throw bad("unknown gravity \"\(arguments[0].prefix(20))\" (ce, no, so, ea, we, noea, nowe, soea, sowe or sm)")
            }
            // Offsets are not supported; builders send none, or zeros.
            for offset in arguments.dropFirst() where Double(offset) != 0 {
                throw bad("gravity offsets are not supported")
            }
            options.gravity = gravity
        case "quality", "q":
            try expectCount(1...1)
            guard let quality = Int(arguments[0]), (0...100).contains(quality) else {
                throw bad("quality must be a whole number from 0 to 100, not \"\(arguments[0].prefix(20))\"")
            }
            options.quality = quality == 0 ? nil : quality
        case "format", "f", "ext":
            try expectCount(1...1)
            options.format = try format(named: arguments[0])
        case "blur", "bl":
            try expectCount(1...1)
            guard let sigma = Double(arguments[0]), sigma.isFinite, (0...maximumBlur).contains(sigma) else {
                throw bad("blur must be a number from 0 to \(Int(maximumBlur)), not \"\(arguments[0].prefix(20))\"")
            }
            options.blur = sigma == 0 ? nil : sigma
        default:
            throw bad("unknown option \"\(name.prefix(40))\"")
        }
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
        case "1", "t", "true": return true
        case "0", "f", "false": return false
        default: throw bad("\(name) must be 1, t, true, 0, f or false, not \"\(text.prefix(20))\"")
        }
    }
}
#endif
