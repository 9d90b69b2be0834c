#if Server
/// A CSS token, as CSS Syntax Level 3 (§4) defines them.
enum CSSToken: Equatable, Sendable {
    case ident(String)
    case function(String)
    case atKeyword(String)
    /// `#name`; `isID` when the name would be an identifier.
    case hash(String, isID: Bool)
    case string(String)
    case badString
    case url(String)
    case badURL
    case delim(Unicode.Scalar)
    /// A number as written (only sign, digits, `.` and an exponent) and its value.
    case number(String, Double)
    case percentage(String, Double)
    case dimension(String, Double, unit: String)
    case whitespace
    case cdo, cdc, colon, semicolon, comma
    case openSquare, closeSquare, openParenthesis, closeParenthesis, openCurly, closeCurly
}

/// Splits CSS text into tokens exactly as a browser's tokenizer does (CSS
/// Syntax Level 3, §3.3 preprocessing and §4 tokenization): escapes
/// decoded, strings, `url(` tokens, comments dropped, bad strings and bad
/// URLs recognised, so that whatever is judged from the tokens is what a
/// browser would see.
struct CSSTokenizer {
    private let text: [Unicode.Scalar]
    private var index = 0

    /// Tokenizes `css` (after CSS's preprocessing: CR, CRLF and FF are LF, NUL is U+FFFD).
    static func tokens(_ css: String) -> [CSSToken] {
        var tokenizer = CSSTokenizer(css)
        var tokens: [CSSToken] = []
        while let token = tokenizer.next() { tokens.append(token) }
        return tokens
    }

    private init(_ css: String) {
        var scalars: [Unicode.Scalar] = []
        scalars.reserveCapacity(css.unicodeScalars.count)
        var previousWasCR = false
        for scalar in css.unicodeScalars {
            defer { previousWasCR = scalar == "\r" }
            switch scalar {
            case "\r", "\u{0C}": scalars.append("\n")
            case "\n": if !previousWasCR { scalars.append("\n") }
            case "\0": scalars.append("\u{FFFD}")
            default: scalars.append(scalar)
            }
        }
        text = scalars
    }

    // MARK: Code points

    private func peek(_ offset: Int = 0) -> Unicode.Scalar? {
        index + offset < text.count ? text[index + offset] : nil
    }

    private static func isDigit(_ scalar: Unicode.Scalar?) -> Bool { scalar.map { ("0"..."9").contains($0) } ?? false }
    private static func isHexDigit(_ scalar: Unicode.Scalar?) -> Bool { scalar?.properties.isASCIIHexDigit ?? false }
    private static func isWhitespace(_ scalar: Unicode.Scalar?) -> Bool { scalar == "\n" || scalar == "\t" || scalar == " " }
    private static func isNameStart(_ scalar: Unicode.Scalar?) -> Bool {
        guard let scalar else { return false }
        return ("a"..."z").contains(scalar) || ("A"..."Z").contains(scalar) || scalar == "_" || scalar.value >= 0x80
    }
    private static func isName(_ scalar: Unicode.Scalar?) -> Bool { isNameStart(scalar) || isDigit(scalar) || scalar == "-" }
    private static func isNonPrintable(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value <= 0x08 || scalar == "\u{0B}" || (0x0E...0x1F).contains(scalar.value) || scalar.value == 0x7F
    }

    /// §4.3.8: whether two code points start a valid escape.
    private static func isValidEscape(_ first: Unicode.Scalar?, _ second: Unicode.Scalar?) -> Bool {
        first == "\\" && second != "\n"
    }

    /// §4.3.9: whether three code points would start an identifier.
    private static func startsIdentifier(_ first: Unicode.Scalar?, _ second: Unicode.Scalar?, _ third: Unicode.Scalar?) -> Bool {
        if first == "-" { return isNameStart(second) || second == "-" || isValidEscape(second, third) }
        if isNameStart(first) { return true }
        return isValidEscape(first, second)
    }

    /// §4.3.10: whether three code points would start a number.
    private static func startsNumber(_ first: Unicode.Scalar?, _ second: Unicode.Scalar?, _ third: Unicode.Scalar?) -> Bool {
        if first == "+" || first == "-" { return isDigit(second) || (second == "." && isDigit(third)) }
        if first == "." { return isDigit(second) }
        return isDigit(first)
    }

    // MARK: Tokens

    /// §4.3.1: the next token, or `nil` at the end.
    private mutating func next() -> CSSToken? {
        consumeComments()
        guard let scalar = peek() else { return nil }
        index += 1
        switch scalar {
        case "\n", "\t", " ":
            while Self.isWhitespace(peek()) { index += 1 }
            return .whitespace
        case "\"", "'":
            return consumeString(ending: scalar)
        case "#":
            if Self.isName(peek()) || Self.isValidEscape(peek(), peek(1)) {
                let isID = Self.startsIdentifier(peek(), peek(1), peek(2))
                return .hash(consumeName(), isID: isID)
            }
            return .delim(scalar)
        case "(": return .openParenthesis
        case ")": return .closeParenthesis
        case "+", ".":
            if Self.startsNumber(scalar, peek(), peek(1)) {
                index -= 1
                return consumeNumeric()
            }
            return .delim(scalar)
        case ",": return .comma
        case "-":
            if Self.startsNumber(scalar, peek(), peek(1)) {
                index -= 1
                return consumeNumeric()
            }
            if peek() == "-" && peek(1) == ">" {
                index += 2
                return .cdc
            }
            if Self.startsIdentifier(scalar, peek(), peek(1)) {
                index -= 1
                return consumeIdentLike()
            }
            return .delim(scalar)
        case ":": return .colon
        case ";": return .semicolon
        case "<":
            if peek() == "!" && peek(1) == "-" && peek(2) == "-" {
                index += 3
                return .cdo
            }
            return .delim(scalar)
        case "@":
            if Self.startsIdentifier(peek(), peek(1), peek(2)) { return .atKeyword(consumeName()) }
            return .delim(scalar)
        case "[": return .openSquare
        case "\\":
            if Self.isValidEscape(scalar, peek()) {
                index -= 1
                return consumeIdentLike()
            }
            return .delim(scalar)
        case "]": return .closeSquare
        case "{": return .openCurly
        case "}": return .closeCurly
        default:
            if Self.isDigit(scalar) {
                index -= 1
                return consumeNumeric()
            }
            if Self.isNameStart(scalar) {
                index -= 1
                return consumeIdentLike()
            }
            return .delim(scalar)
        }
    }

    /// §4.3.2: comments are dropped (an unclosed one runs to the end).
    private mutating func consumeComments() {
        while peek() == "/" && peek(1) == "*" {
            index += 2
            while index < text.count && !(peek() == "*" && peek(1) == "/") { index += 1 }
            index = min(text.count, index + 2)
        }
    }

    /// §4.3.3: a number, a percentage or a dimension.
    private mutating func consumeNumeric() -> CSSToken {
        let (representation, value) = consumeNumber()
        if Self.startsIdentifier(peek(), peek(1), peek(2)) { return .dimension(representation, value, unit: consumeName()) }
        if peek() == "%" {
            index += 1
            return .percentage(representation, value)
        }
        return .number(representation, value)
    }

    /// §4.3.4: an identifier, a function, a `url(` token or a bad URL.
    private mutating func consumeIdentLike() -> CSSToken {
        let name = consumeName()
        if name.lowercased() == "url" && peek() == "(" {
            index += 1
            while Self.isWhitespace(peek()) && Self.isWhitespace(peek(1)) { index += 1 }
            if peek() == "\"" || peek() == "'" || (Self.isWhitespace(peek()) && (peek(1) == "\"" || peek(1) == "'")) {
                return .function(name)
            }
            return consumeURL()
        }
        if peek() == "(" {
            index += 1
            return .function(name)
        }
        return .ident(name)
    }

    /// §4.3.5: a string up to its closing quote; a newline makes it a bad string.
    private mutating func consumeString(ending quote: Unicode.Scalar) -> CSSToken {
        var value = String.UnicodeScalarView()
        while let scalar = peek() {
            index += 1
            switch scalar {
            case quote:
                return .string(String(value))
            case "\n":
                index -= 1
                return .badString
            case "\\":
                guard let following = peek() else { continue }
                if following == "\n" {
                    index += 1
                } else {
                    value.append(consumeEscape())
                }
            default:
                value.append(scalar)
            }
        }
        return .string(String(value))
    }

    /// §4.3.6: an unquoted `url(` token, or a bad URL.
    private mutating func consumeURL() -> CSSToken {
        var value = String.UnicodeScalarView()
        while Self.isWhitespace(peek()) { index += 1 }
        while let scalar = peek() {
            index += 1
            switch scalar {
            case ")":
                return .url(String(value))
            case "\n", "\t", " ":
                while Self.isWhitespace(peek()) { index += 1 }
                if peek() == nil { return .url(String(value)) }
                if peek() == ")" {
                    index += 1
                    return .url(String(value))
                }
                consumeBadURLRemnants()
                return .badURL
            case "\"", "'", "(":
                consumeBadURLRemnants()
                return .badURL
            case "\\":
                if Self.isValidEscape(scalar, peek()) {
                    value.append(consumeEscape())
                } else {
                    consumeBadURLRemnants()
                    return .badURL
                }
            default:
                if Self.isNonPrintable(scalar) {
                    consumeBadURLRemnants()
                    return .badURL
                }
                value.append(scalar)
            }
        }
        return .url(String(value))
    }

    /// §4.3.14: the rest of a bad URL, up to its `)` (escapes skipped).
    private mutating func consumeBadURLRemnants() {
        while let scalar = peek() {
            index += 1
            if scalar == ")" { return }
            if Self.isValidEscape(scalar, peek()) { _ = consumeEscape() }
        }
    }

    /// §4.3.7: the code point an escape stands for (the backslash consumed already).
    private mutating func consumeEscape() -> Unicode.Scalar {
        guard let scalar = peek() else { return "\u{FFFD}" }
        index += 1
        guard Self.isHexDigit(scalar) else { return scalar }
        var value = UInt32(String(scalar), radix: 16) ?? 0
        var digits = 1
        while digits < 6, Self.isHexDigit(peek()), let digit = peek() {
            value = value * 16 + (UInt32(String(digit), radix: 16) ?? 0)
            index += 1
            digits += 1
        }
        if Self.isWhitespace(peek()) { index += 1 }
        guard value != 0, value <= 0x10FFFF, !(0xD800...0xDFFF).contains(value) else { return "\u{FFFD}" }
        return Unicode.Scalar(value) ?? "\u{FFFD}"
    }

    /// §4.3.11: a name, its escapes decoded.
    private mutating func consumeName() -> String {
        var name = String.UnicodeScalarView()
        while let scalar = peek() {
            if Self.isName(scalar) {
                name.append(scalar)
                index += 1
            } else if Self.isValidEscape(scalar, peek(1)) {
                index += 1
                name.append(consumeEscape())
            } else {
                break
            }
        }
        return String(name)
    }

    /// §4.3.12: a number's text (sign, digits, `.`, exponent) and its value.
    private mutating func consumeNumber() -> (String, Double) {
        var representation = String.UnicodeScalarView()
        func take() {
            if let scalar = peek() { representation.append(scalar) }
            index += 1
        }
        if peek() == "+" || peek() == "-" { take() }
        while Self.isDigit(peek()) { take() }
        if peek() == ".", Self.isDigit(peek(1)) {
            take()
            while Self.isDigit(peek()) { take() }
        }
        if peek() == "e" || peek() == "E" {
            if Self.isDigit(peek(1)) || ((peek(1) == "+" || peek(1) == "-") && Self.isDigit(peek(2))) {
                take()
                if peek() == "+" || peek() == "-" { take() }
                while Self.isDigit(peek()) { take() }
            }
        }
        let text = String(representation)
        return (text, Double(text) ?? 0)
    }
}
#endif
