#if Server
import Foundation

/// Takes every external reference out of CSS: the text of an SVG `style`
/// element, a `style` attribute, or a presentation attribute's value.
///
/// - CSS escapes (`\75`, `\"`) are decoded first, so none can spell
///   `url(` or `@import` where the checks below would not see it; the text
///   written has no escapes left.
/// - `@import` rules are removed, up to their `;` (or their block).
/// - `url(...)` is removed unless its address starts with `#` (a
///   reference inside the document).
/// - Functions that take an address as a bare string (`image()`,
///   `image-set()`, `cross-fade()`, `src()`, `element()` and their
///   prefixed forms, `expression()`) are removed with their arguments.
/// - Comments are replaced by a space.
///
/// What is removed leaves a declaration that CSS ignores as invalid (such
/// as `fill: ;`), never one that means something else. Strings are kept as
/// they are; the checks run outside them, as a CSS tokenizer reads them.
///
/// ```swift
/// SVGStyleSanitizer.sanitized("fill: url(http://evil/x#a); stroke: url(#b)")   // "fill: ; stroke: url(#b)"
/// ```
public enum SVGStyleSanitizer {
    /// Functions that load an address given as a bare string, lower-cased.
    static let loadingFunctions: Set<String> = [
        "image", "image-set", "-webkit-image-set", "cross-fade", "-webkit-cross-fade",
        "src", "element", "-moz-element", "expression",
    ]

    /// Whether `value` might hold something ``sanitized(_:)`` removes
    /// (a function, an at-rule or an escape); when not, it is unchanged.
    public static func needsSanitizing(_ value: String) -> Bool {
        value.unicodeScalars.contains { $0 == "(" || $0 == "@" || $0 == "\\" || $0 == "/" }
    }

    /// `css` without external references, as the type's summary says.
    public static func sanitized(_ css: String) -> String {
        let text = unescaped(css)
        var result = String.UnicodeScalarView()
        var index = 0
        while index < text.count {
            let scalar = text[index]
            if scalar == "/", index + 1 < text.count, text[index + 1] == "*" {
                index = commentEnd(text, from: index + 2)
                result.append(" ")
            } else if scalar == "\"" || scalar == "'" {
                let end = stringEnd(text, from: index)
                result.append(contentsOf: text[index..<end])
                index = end
            } else if scalar == "@" {
                let end = identifierEnd(text, from: index + 1)
                if String(String.UnicodeScalarView(text[(index + 1)..<end])).lowercased() == "import" {
                    index = statementEnd(text, from: end)
                } else {
                    result.append(contentsOf: text[index..<end])
                    index = end
                }
            } else if startsIdentifier(scalar) {
                let end = identifierEnd(text, from: index)
                let name = String(String.UnicodeScalarView(text[index..<end])).lowercased()
                if end < text.count, text[end] == "(" {
                    if name == "url" {
                        let (address, close) = urlAddress(text, from: end + 1)
                        if address.hasPrefix("#") { result.append(contentsOf: text[index..<close]) }
                        index = close
                        continue
                    }
                    if loadingFunctions.contains(name) {
                        index = closingParenthesisEnd(text, from: end + 1)
                        continue
                    }
                }
                result.append(contentsOf: text[index..<end])
                index = end
            } else {
                result.append(scalar)
                index += 1
            }
        }
        return String(result)
    }

    /// `css` with its escapes decoded as CSS reads them: a backslash and up
    /// to six hex digits (and one whitespace after them) is that code point
    /// (U+FFFD for zero, a surrogate or one beyond Unicode); a backslash and
    /// a line break is nothing; a backslash and any other character is that
    /// character; a backslash at the end is U+FFFD.
    static func unescaped(_ css: String) -> [Unicode.Scalar] {
        let scalars = Array(css.unicodeScalars)
        guard scalars.contains("\\") else { return scalars }
        var result: [Unicode.Scalar] = []
        result.reserveCapacity(scalars.count)
        var index = 0
        while index < scalars.count {
            let scalar = scalars[index]
            index += 1
            guard scalar == "\\" else {
                result.append(scalar)
                continue
            }
            guard index < scalars.count else {
                result.append("\u{FFFD}")
                break
            }
            if scalars[index].properties.isASCIIHexDigit {
                var value: UInt32 = 0
                var digits = 0
                while index < scalars.count, digits < 6, scalars[index].properties.isASCIIHexDigit {
                    value = value * 16 + UInt32(Int(String(scalars[index]), radix: 16) ?? 0)
                    index += 1
                    digits += 1
                }
                if index < scalars.count, scalars[index] == " " || scalars[index] == "\t" || scalars[index] == "\n" { index += 1 }
                result.append(value == 0 ? "\u{FFFD}" : Unicode.Scalar(value) ?? "\u{FFFD}")
            } else if scalars[index] == "\n" {
                index += 1
            } else {
                result.append(scalars[index])
                index += 1
            }
        }
        return result
    }

    /// Whether `scalar` can start a CSS identifier (letters, `_`, `-`, and anything beyond ASCII).
    private static func startsIdentifier(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value >= 0x80 || scalar == "_" || scalar == "-" || (scalar.isASCII && scalar.properties.isAlphabetic)
    }

    /// The index after the identifier that starts at `start` (or `start` itself when none does).
    private static func identifierEnd(_ text: [Unicode.Scalar], from start: Int) -> Int {
        var index = start
        while index < text.count {
            let scalar = text[index]
            guard startsIdentifier(scalar) || ("0"..."9").contains(scalar) else { break }
            index += 1
        }
        return index
    }

    /// The index after the string that opens at `start`: its closing quote, or the line's end, or the text's.
    private static func stringEnd(_ text: [Unicode.Scalar], from start: Int) -> Int {
        let quote = text[start]
        var index = start + 1
        while index < text.count {
            if text[index] == quote { return index + 1 }
            if text[index] == "\n" { return index }
            index += 1
        }
        return index
    }

    /// The index after the `*/` that closes a comment whose text starts at `start`.
    private static func commentEnd(_ text: [Unicode.Scalar], from start: Int) -> Int {
        var index = start
        while index + 1 < text.count {
            if text[index] == "*" && text[index + 1] == "/" { return index + 2 }
            index += 1
        }
        return text.count
    }

    /// The address of a `url(` whose argument starts at `start`, trimmed and
    /// unquoted, and the index after its closing parenthesis.
    private static func urlAddress(_ text: [Unicode.Scalar], from start: Int) -> (String, Int) {
        var index = start
        while index < text.count, text[index].properties.isWhitespace { index += 1 }
        var address = String.UnicodeScalarView()
        if index < text.count, text[index] == "\"" || text[index] == "'" {
            let end = stringEnd(text, from: index)
            let closed = end > index + 1 && text[end - 1] == text[index]
            address.append(contentsOf: text[(index + 1)..<(closed ? end - 1 : end)])
            index = end
            while index < text.count, text[index] != ")" { index += 1 }
        } else {
            while index < text.count, text[index] != ")" {
                address.append(text[index])
                index += 1
            }
        }
        return (String(address).trimmingCharacters(in: .whitespacesAndNewlines), min(index + 1, text.count))
    }

    /// The index after the `)` that closes a function whose arguments start
    /// at `start`, past nested parentheses and strings.
    private static func closingParenthesisEnd(_ text: [Unicode.Scalar], from start: Int) -> Int {
        var depth = 1
        var index = start
        while index < text.count {
            let scalar = text[index]
            if scalar == "\"" || scalar == "'" {
                index = stringEnd(text, from: index)
                continue
            }
            if scalar == "(" { depth += 1 }
            if scalar == ")" {
                depth -= 1
                if depth == 0 { return index + 1 }
            }
            index += 1
        }
        return text.count
    }

    /// The index after the at-rule whose prelude starts at `start`: after
    /// its `;`, or after its `{...}` block, or the text's end.
    private static func statementEnd(_ text: [Unicode.Scalar], from start: Int) -> Int {
        var depth = 0
        var index = start
        while index < text.count {
            let scalar = text[index]
            if scalar == "\"" || scalar == "'" {
                index = stringEnd(text, from: index)
                continue
            }
            switch scalar {
            case "(", "[", "{": depth += 1
            case ")", "]": depth = max(0, depth - 1)
            case "}":
                // A brace that closes an enclosing block ends the rule and stays.
                if depth == 0 { return index }
                depth -= 1
                if depth == 0 { return index + 1 }
            case ";" where depth == 0: return index + 1
            default: break
            }
            index += 1
        }
        return text.count
    }
}
#endif
