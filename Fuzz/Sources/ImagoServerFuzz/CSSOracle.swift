/// An independent CSS tokenizer (CSS Syntax Level 3, §3.3 and §4), written
/// for the fuzz harness from the specification and not from the
/// product's ``CSSTokenizer``: the sanitisers' output is judged by what a
/// browser's tokenizer would see in it, so a bug shared by the product's
/// tokenizer and writer does not hide itself.
enum OracleToken: Equatable {
    case ident(String)
    case function(String)
    case atKeyword(String)
    case hash(String)
    case string(String)
    case badString
    case url(String)
    case badURL
    case delim(Unicode.Scalar)
    case number
    case whitespace
    case cdo, cdc
    case other(Unicode.Scalar)
}

struct CSSOracle {
    private var text: [Unicode.Scalar]
    private var index = 0

    static func tokens(_ css: String) -> [OracleToken] {
        var oracle = CSSOracle(css)
        var tokens: [OracleToken] = []
        while let token = oracle.next() { tokens.append(token) }
        return tokens
    }

    private init(_ css: String) {
        // §3.3: CRLF, CR and FF become LF; NUL and surrogates become U+FFFD.
        var scalars: [Unicode.Scalar] = []
        let input = Array(css.unicodeScalars)
        var i = 0
        while i < input.count {
            let scalar = input[i]
            if scalar == "\r" {
                scalars.append("\n")
                if i + 1 < input.count, input[i + 1] == "\n" { i += 1 }
            } else if scalar == "\u{0C}" {
                scalars.append("\n")
            } else if scalar == "\0" {
                scalars.append("\u{FFFD}")
            } else {
                scalars.append(scalar)
            }
            i += 1
        }
        text = scalars
    }

    private func at(_ offset: Int) -> Unicode.Scalar? {
        index + offset < text.count ? text[index + offset] : nil
    }

    private static func digit(_ s: Unicode.Scalar?) -> Bool { s.map { $0.value >= 0x30 && $0.value <= 0x39 } ?? false }
    private static func hex(_ s: Unicode.Scalar?) -> Bool {
        guard let v = s?.value else { return false }
        return (0x30...0x39).contains(v) || (0x41...0x46).contains(v) || (0x61...0x66).contains(v)
    }
    private static func space(_ s: Unicode.Scalar?) -> Bool { s == "\n" || s == "\t" || s == " " }
    private static func nameStart(_ s: Unicode.Scalar?) -> Bool {
        guard let v = s?.value else { return false }
        return (0x41...0x5A).contains(v) || (0x61...0x7A).contains(v) || v == 0x5F || v >= 0x80
    }
    private static func name(_ s: Unicode.Scalar?) -> Bool { nameStart(s) || digit(s) || s == "-" }
    private static func nonPrintable(_ s: Unicode.Scalar) -> Bool {
        s.value <= 8 || s.value == 0x0B || (0x0E...0x1F).contains(s.value) || s.value == 0x7F
    }
    private static func validEscape(_ a: Unicode.Scalar?, _ b: Unicode.Scalar?) -> Bool { a == "\\" && b != "\n" }
    private static func startsIdent(_ a: Unicode.Scalar?, _ b: Unicode.Scalar?, _ c: Unicode.Scalar?) -> Bool {
        if a == "-" { return nameStart(b) || b == "-" || validEscape(b, c) }
        if nameStart(a) { return true }
        return validEscape(a, b)
    }
    private static func startsNumber(_ a: Unicode.Scalar?, _ b: Unicode.Scalar?, _ c: Unicode.Scalar?) -> Bool {
        if a == "+" || a == "-" { return digit(b) || (b == "." && digit(c)) }
        if a == "." { return digit(b) }
        return digit(a)
    }

    /// §4.3.7, after the backslash.
    private mutating func escape() -> Unicode.Scalar {
        guard let first = at(0) else { return "\u{FFFD}" }
        index += 1
        guard Self.hex(first) else { return first }
        var digits = String(first)
        while digits.count < 6, Self.hex(at(0)) {
            digits.unicodeScalars.append(at(0)!)
            index += 1
        }
        if Self.space(at(0)) { index += 1 }
        let value = UInt32(digits, radix: 16)!
        if value == 0 || (0xD800...0xDFFF).contains(value) || value > 0x10FFFF { return "\u{FFFD}" }
        return Unicode.Scalar(value) ?? "\u{FFFD}"
    }

    private mutating func consumeName() -> String {
        var result = ""
        while true {
            if Self.name(at(0)) {
                result.unicodeScalars.append(at(0)!)
                index += 1
            } else if Self.validEscape(at(0), at(1)) {
                index += 1
                result.unicodeScalars.append(escape())
            } else {
                return result
            }
        }
    }

    private mutating func consumeNumeric() -> OracleToken {
        if at(0) == "+" || at(0) == "-" { index += 1 }
        while Self.digit(at(0)) { index += 1 }
        if at(0) == ".", Self.digit(at(1)) {
            index += 1
            while Self.digit(at(0)) { index += 1 }
        }
        if at(0) == "e" || at(0) == "E" {
            if Self.digit(at(1)) {
                index += 1
            } else if (at(1) == "+" || at(1) == "-"), Self.digit(at(2)) {
                index += 2
            }
            while Self.digit(at(0)) { index += 1 }
        }
        if Self.startsIdent(at(0), at(1), at(2)) {
            _ = consumeName()
        } else if at(0) == "%" {
            index += 1
        }
        return .number
    }

    private mutating func consumeString(_ quote: Unicode.Scalar) -> OracleToken {
        var result = ""
        while let c = at(0) {
            index += 1
            if c == quote { return .string(result) }
            if c == "\n" {
                index -= 1
                return .badString
            }
            if c == "\\" {
                if at(0) == nil { continue }
                if at(0) == "\n" {
                    index += 1
                    continue
                }
                result.unicodeScalars.append(escape())
                continue
            }
            result.unicodeScalars.append(c)
        }
        return .string(result)
    }

    private mutating func consumeBadURLRemnants() {
        while let c = at(0) {
            if c == ")" {
                index += 1
                return
            }
            if Self.validEscape(at(0), at(1)) {
                index += 1
                _ = escape()
            } else {
                index += 1
            }
        }
    }

    /// §4.3.6, after `url(`.
    private mutating func consumeURL() -> OracleToken {
        var result = ""
        while Self.space(at(0)) { index += 1 }
        while true {
            guard let c = at(0) else { return .url(result) }
            index += 1
            if c == ")" { return .url(result) }
            if Self.space(c) {
                while Self.space(at(0)) { index += 1 }
                if at(0) == nil { return .url(result) }
                if at(0) == ")" {
                    index += 1
                    return .url(result)
                }
                consumeBadURLRemnants()
                return .badURL
            }
            if c == "\"" || c == "'" || c == "(" || Self.nonPrintable(c) {
                consumeBadURLRemnants()
                return .badURL
            }
            if c == "\\" {
                if Self.validEscape(c, at(0)) {
                    result.unicodeScalars.append(escape())
                } else {
                    consumeBadURLRemnants()
                    return .badURL
                }
                continue
            }
            result.unicodeScalars.append(c)
        }
    }

    private mutating func consumeIdentLike() -> OracleToken {
        let name = consumeName()
        if name.lowercased() == "url", at(0) == "(" {
            index += 1
            while Self.space(at(0)), Self.space(at(1)) { index += 1 }
            let next = Self.space(at(0)) ? at(1) : at(0)
            if next == "\"" || next == "'" { return .function(name) }
            return consumeURL()
        }
        if at(0) == "(" {
            index += 1
            return .function(name)
        }
        return .ident(name)
    }

    private mutating func next() -> OracleToken? {
        // Comments.
        while at(0) == "/", at(1) == "*" {
            index += 2
            while index < text.count, !(at(0) == "*" && at(1) == "/") { index += 1 }
            index = min(index + 2, text.count)
        }
        guard let c = at(0) else { return nil }
        if Self.space(c) {
            while Self.space(at(0)) { index += 1 }
            return .whitespace
        }
        if c == "\"" || c == "'" {
            index += 1
            return consumeString(c)
        }
        if c == "#" {
            if Self.name(at(1)) || Self.validEscape(at(1), at(2)) {
                index += 1
                return .hash(consumeName())
            }
            index += 1
            return .delim(c)
        }
        if c == "+" || c == "." {
            if Self.startsNumber(at(0), at(1), at(2)) { return consumeNumeric() }
            index += 1
            return .delim(c)
        }
        if c == "-" {
            if Self.startsNumber(at(0), at(1), at(2)) { return consumeNumeric() }
            if at(1) == "-", at(2) == ">" {
                index += 3
                return .cdc
            }
            if Self.startsIdent(at(0), at(1), at(2)) { return consumeIdentLike() }
            index += 1
            return .delim(c)
        }
        if c == "<" {
            if at(1) == "!", at(2) == "-", at(3) == "-" {
                index += 4
                return .cdo
            }
            index += 1
            return .delim(c)
        }
        if c == "@" {
            if Self.startsIdent(at(1), at(2), at(3)) {
                index += 1
                return .atKeyword(consumeName())
            }
            index += 1
            return .delim(c)
        }
        if c == "\\" {
            if Self.validEscape(at(0), at(1)) { return consumeIdentLike() }
            index += 1
            return .delim(c)
        }
        if Self.digit(c) { return consumeNumeric() }
        if Self.nameStart(c) { return consumeIdentLike() }
        index += 1
        if "()[]{},:;".unicodeScalars.contains(c) { return .other(c) }
        return .delim(c)
    }
}

/// What the sanitisers promise of CSS they write.
enum CSSRule {
    /// A `style` element's sheet or a `style` attribute: no at-rule, no
    /// bad string or URL, only `url(#...)`, only the allowed functions.
    case strict
    /// A presentation attribute's value: only `url(#...)` and the allowed functions.
    case value
}

/// The functions a sanitised sheet may name, lower-cased: the values'
/// and the selectors' (the product's lists, which are the policy).
let valueFunctions: Set<String> = [
    "rgb", "rgba", "hsl", "hsla", "hwb", "lab", "lch", "oklab", "oklch", "color-mix",
    "calc", "min", "max", "clamp",
    "matrix", "translate", "translatex", "translatey", "scale", "scalex", "scaley", "rotate", "skew", "skewx", "skewy",
    "blur", "brightness", "contrast", "drop-shadow", "grayscale", "hue-rotate", "invert", "opacity", "saturate", "sepia",
    "inset", "circle", "ellipse", "polygon",
]
let selectorFunctions: Set<String> = ["not", "is", "where", "nth-child", "nth-last-child", "nth-of-type", "nth-last-of-type", "lang"]

/// The first broken promise in `css`, or `nil`.
func cssProblem(_ css: String, rule: CSSRule, selectors: Bool) -> String? {
    let tokens = CSSOracle.tokens(css)
    var i = 0
    while i < tokens.count {
        switch tokens[i] {
        case .atKeyword(let name) where rule == .strict:
            return "at-keyword @\(name)"
        case .badString where rule == .strict:
            return "bad string"
        case .badURL:
            return "bad url"
        case .url(let address):
            guard isFragment(address) else { return "url(\(address.prefix(60)))" }
        case .function(let name):
            let lowered = name.lowercased()
            if lowered == "url" {
                var j = i + 1
                while j < tokens.count, tokens[j] == .whitespace { j += 1 }
                guard j < tokens.count, case .string(let address) = tokens[j], isFragment(address) else {
                    return "url( function not to a fragment"
                }
            } else if !(valueFunctions.contains(lowered) || (selectors && selectorFunctions.contains(lowered))) {
                return "function \(name.prefix(40))("
            }
        default:
            break
        }
        i += 1
    }
    return nil
}

private func isFragment(_ address: String) -> Bool {
    let scalars = Array(address.unicodeScalars)
    return scalars.first { $0 != " " && $0 != "\t" && $0 != "\n" } == "#"
}
