#if Server
import Foundation

/// How a path's source is read beyond its encoding, as imgproxy's settings
/// say: replacements of its start (`IMGPROXY_URL_REPLACEMENTS`), a base URL
/// in front of relative sources (`IMGPROXY_BASE_URL`), a file name after a
/// base64 source (`IMGPROXY_BASE64_URL_INCLUDES_FILENAME`), and the
/// character between an option's arguments (`IMGPROXY_ARGUMENTS_SEPARATOR`).
///
/// ```swift
/// configuration.urlRules.baseURL = "https://images.example.com/"
/// configuration.urlRules.replacements = [.init(pattern: "cdn://*/", replacement: "https://${1}.example.com/")]
/// ```
public struct ImageServerURLRules: Sendable, Hashable {
    /// One rewrite of a source's start: `pattern`, where `*` matches within
    /// one path segment, and `replacement`, where `$1` or `${1}` is what the
    /// first `*` matched.
    public struct Replacement: Sendable, Hashable {
        public var pattern: String
        public var replacement: String

        public init(pattern: String, replacement: String) {
            self.pattern = pattern
            self.replacement = replacement
        }

        /// The rule as a regular expression, anchored at the start, `*` as `([^/]*)`.
        var expression: NSRegularExpression? {
            let escaped = pattern.split(separator: "*", omittingEmptySubsequences: false)
                .map { NSRegularExpression.escapedPattern(for: String($0)) }.joined(separator: "([^/]*)")
            return try? NSRegularExpression(pattern: "^" + escaped)
        }
    }

    /// Rewrites applied to every source in order, each to the last one's result. Default: none.
    public var replacements: [Replacement]
    /// Put in front of a source that does not start with it (after the
    /// replacements), so paths may name sources relative to it. Default: none.
    public var baseURL: String?
    /// Whether a base64 source is followed by a segment that is only a file
    /// name (for the browser; it is dropped). Default: `false`.
    public var base64IncludesFilename: Bool
    /// What separates an option's name and arguments. Default: `:`.
    public var argumentSeparator: Character
    /// The options a path may name, as written (`w` and `width` are two
    /// names); another is a 404 ``ImageServerError/Code/optionNotAllowed``.
    /// Presets' options are not checked, only the `pr` that names them
    /// (imgproxy's `IMGPROXY_ALLOWED_PROCESSING_OPTIONS`). Default: `nil`, any.
    public var allowedOptions: Set<String>?

    /// Creates the defaults above.
    public init() {
        replacements = []
        baseURL = nil
        base64IncludesFilename = false
        argumentSeparator = ":"
        allowedOptions = nil
    }

    /// Parses imgproxy's `IMGPROXY_URL_REPLACEMENTS`: `PATTERN=REPLACEMENT`
    /// pairs separated by `;`; `nil` for a pair without `=` or an empty one
    /// (imgproxy does not start with those).
    public static func replacements(parsing text: String) -> [Replacement]? {
        var rules: [Replacement] = []
        for item in text.components(separatedBy: ";") {
            guard let equals = item.firstIndex(of: "="), equals != item.startIndex else { return nil }
            rules.append(Replacement(pattern: String(item[..<equals]), replacement: String(item[item.index(after: equals)...])))
        }
        return rules
    }

    /// `source` rewritten by the replacements, then with the base URL in front.
    func rewritten(_ source: String) -> String {
        var text = source
        for rule in replacements {
            guard let expression = rule.expression,
                  let match = expression.firstMatch(in: text, range: NSRange(text.startIndex..., in: text)),
                  let whole = Range(match.range, in: text) else { continue }
            var replacement = rule.replacement
            for group in stride(from: match.numberOfRanges - 1, through: 1, by: -1) {
                let captured = Range(match.range(at: group), in: text).map { String(text[$0]) } ?? ""
                replacement = replacement.replacingOccurrences(of: "${\(group)}", with: captured).replacingOccurrences(of: "$\(group)", with: captured)
            }
            text.replaceSubrange(whole, with: replacement)
        }
        if let baseURL, !baseURL.isEmpty, !text.hasPrefix(baseURL) { text = baseURL + text }
        return text
    }
}
#endif
