#if Server
/// A component value (CSS Syntax Level 3, §5): a token, a function with
/// its arguments, or a block (`(`, `[` or `{`) with its contents.
indirect enum CSSComponent: Equatable, Sendable {
    case token(CSSToken)
    case function(String, [CSSComponent])
    /// The opening token and the contents.
    case block(CSSToken, [CSSComponent])
}

/// A qualified rule: its prelude (the selector) and its `{}` block's contents.
struct CSSRule: Equatable, Sendable {
    var prelude: [CSSComponent]
    var block: [CSSComponent]
}

/// A declaration: its name, its value (trimmed, `!important` taken off).
struct CSSDeclaration: Equatable, Sendable {
    var name: String
    var value: [CSSComponent]
    var isImportant: Bool
}

/// CSS Syntax Level 3's parser (§5.4), over ``CSSTokenizer``'s tokens:
/// component values, a style sheet's rules (at-rules are consumed and left
/// out), a block's declarations.
struct CSSParser {
    private let tokens: [CSSToken]
    private var index = 0

    init(_ tokens: [CSSToken]) {
        self.tokens = tokens
    }

    /// Every component value of `tokens`.
    static func componentValues(_ tokens: [CSSToken]) -> [CSSComponent] {
        var parser = CSSParser(tokens)
        var values: [CSSComponent] = []
        while parser.index < parser.tokens.count { values.append(parser.componentValue()) }
        return values
    }

    /// §5.4.1: the qualified rules of a style sheet; at-rules, and rules with no block, are left out.
    mutating func rules() -> [CSSRule] {
        var rules: [CSSRule] = []
        while index < tokens.count {
            switch tokens[index] {
            case .whitespace, .cdo, .cdc:
                index += 1
            case .atKeyword:
                index += 1
                skipAtRule()
            default:
                var prelude: [CSSComponent] = []
                while index < tokens.count {
                    if tokens[index] == .openCurly {
                        index += 1
                        rules.append(CSSRule(prelude: prelude, block: contents(closedBy: .closeCurly)))
                        break
                    }
                    prelude.append(componentValue())
                }
            }
        }
        return rules
    }

    /// §5.4.5: the declarations among component values (a block's contents
    /// or a `style` attribute's); at-rules and what does not parse are left out.
    static func declarations(in components: [CSSComponent]) -> [CSSDeclaration] {
        var declarations: [CSSDeclaration] = []
        var index = 0
        while index < components.count {
            let start = index
            // A declaration, or anything else, runs to the next `;` at this level.
            while index < components.count, components[index] != .token(.semicolon) { index += 1 }
            let part = components[start..<index].drop { $0 == .token(.whitespace) }
            index += 1
            guard case .token(.ident(let name))? = part.first else { continue }
            var rest = part.dropFirst().drop { $0 == .token(.whitespace) }
            guard rest.first == .token(.colon) else { continue }
            rest = rest.dropFirst()
            var value = Array(rest)
            while value.last == .token(.whitespace) { value.removeLast() }
            while value.first == .token(.whitespace) { value.removeFirst() }
            var important = false
            if value.count >= 2, case .token(.ident(let word)) = value[value.count - 1], word.lowercased() == "important" {
                var bang = value.count - 2
                while bang > 0, value[bang] == .token(.whitespace) { bang -= 1 }
                if value[bang] == .token(.delim("!")) {
                    important = true
                    value.removeSubrange(bang...)
                    while value.last == .token(.whitespace) { value.removeLast() }
                }
            }
            declarations.append(CSSDeclaration(name: name, value: value, isImportant: important))
        }
        return declarations
    }

    /// §5.4.2: skips an at-rule's prelude and its `;` or `{}` block.
    private mutating func skipAtRule() {
        while index < tokens.count {
            switch tokens[index] {
            case .semicolon:
                index += 1
                return
            case .openCurly:
                index += 1
                _ = contents(closedBy: .closeCurly)
                return
            default:
                _ = componentValue()
            }
        }
    }

    /// §5.4.7: one component value.
    private mutating func componentValue() -> CSSComponent {
        let token = tokens[index]
        index += 1
        switch token {
        case .openCurly: return .block(token, contents(closedBy: .closeCurly))
        case .openSquare: return .block(token, contents(closedBy: .closeSquare))
        case .openParenthesis: return .block(token, contents(closedBy: .closeParenthesis))
        case .function(let name): return .function(name, contents(closedBy: .closeParenthesis))
        default: return .token(token)
        }
    }

    /// §5.4.8-9: component values up to the closing token (consumed), or the end.
    private mutating func contents(closedBy closing: CSSToken) -> [CSSComponent] {
        var values: [CSSComponent] = []
        while index < tokens.count {
            if tokens[index] == closing {
                index += 1
                break
            }
            values.append(componentValue())
        }
        return values
    }
}

/// Writes tokens back as CSS (CSS Syntax Level 3, §9; CSSOM's serialising
/// of identifiers and strings), so that the text reads back as the same
/// tokens: names and strings are escaped, and an empty comment goes
/// between two tokens that would otherwise run together (`u` then `rl(`).
struct CSSWriter {
    private(set) var text = ""
    /// The last token written, for the comments between tokens.
    private var last: CSSToken?

    /// Writes one token (not a function, block or `url`: see the other methods).
    mutating func append(_ token: CSSToken) {
        // A run of whitespace (and the comments dropped inside it) reads as
        // one space: written as one, so that writing the output again changes nothing.
        if token == .whitespace, last == .whitespace { return }
        separate(before: token)
        switch token {
        case .ident(let name): text += Self.identifier(name)
        case .function(let name): text += Self.identifier(name) + "("
        case .atKeyword(let name): text += "@" + Self.identifier(name)
        case .hash(let name, _): text += "#" + Self.name(name)
        case .string(let value): text += Self.string(value)
        case .number(let representation, _): text += representation
        case .percentage(let representation, _): text += representation + "%"
        case .dimension(let representation, _, let unit): text += representation + Self.identifier(unit)
        case .delim(let scalar): text.unicodeScalars.append(scalar)
        case .whitespace: text += " "
        case .colon: text += ":"
        case .semicolon: text += ";"
        case .comma: text += ","
        case .cdo, .cdc, .badString, .badURL, .url, .openSquare, .closeSquare, .openParenthesis, .closeParenthesis, .openCurly,
             .closeCurly:
            // Never written: the sanitizer keeps none of these as tokens.
            break
        }
        last = token
    }

    /// Writes `name(` `arguments` `)`, the arguments already written.
    mutating func appendFunction(_ name: String, _ arguments: String) {
        separate(before: .function(name))
        text += Self.identifier(name) + "(" + arguments + ")"
        last = .closeParenthesis
    }

    /// Writes `(` `contents` `)`.
    mutating func appendParenthesized(_ contents: String) {
        separate(before: .openParenthesis)
        text += "(" + contents + ")"
        last = .closeParenthesis
    }

    /// Writes `[` `contents` `]`.
    mutating func appendBracketed(_ contents: String) {
        text += "[" + contents + "]"
        last = .closeSquare
    }

    /// Writes `url(#id)`: unquoted, since the sanitizer keeps only ids of
    /// letters, digits, `-`, `_`, `.` and `:`, which read back as the same `url(` token.
    mutating func appendReference(_ id: String) {
        separate(before: .url(id))
        text += "url(#" + id + ")"
        last = .url(id)
    }

    /// An empty comment when `last` and `next` would read as one token (the table of §9).
    private mutating func separate(before next: CSSToken) {
        guard let last else { return }
        if Self.needsComment(last, next) { text += "/**/" }
    }

    private static func needsComment(_ first: CSSToken, _ second: CSSToken) -> Bool {
        let startsWord: Bool = switch second {
        case .ident, .function, .url, .badURL, .number, .percentage, .dimension, .delim("-"): true
        default: false
        }
        switch first {
        case .ident:
            if case .cdc = second { return true }
            if case .openParenthesis = second { return true }
            return startsWord
        case .atKeyword, .hash, .dimension, .delim("#"), .delim("-"):
            if case .cdc = second { return true }
            return startsWord
        case .number:
            if case .delim("-") = second { return false }
            if case .delim("%") = second { return true }
            return startsWord
        case .delim("@"):
            switch second {
            case .ident, .function, .url, .badURL, .delim("-"): return true
            default: return false
            }
        case .delim("."), .delim("+"):
            switch second {
            case .number, .percentage, .dimension: return true
            default: return false
            }
        case .delim("/"):
            return second == .delim("*")
        default:
            return false
        }
    }

    /// U+FFFE and U+FFFF: valid CSS code points that XML 1.0 allows in no
    /// form, not even as a character reference; written as CSS escapes, or
    /// the sanitised document would not be well-formed (Fuzz/findings/6).
    static func isForbiddenInXML(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value == 0xFFFE || scalar.value == 0xFFFF
    }

    /// CSSOM's "serialize an identifier".
    static func identifier(_ name: String) -> String {
        let scalars = Array(name.unicodeScalars)
        if scalars == ["-"] { return "\\-" }
        var result = ""
        for (offset, scalar) in scalars.enumerated() {
            let isDigit = ("0"..."9").contains(scalar)
            if scalar == "\0" {
                result += "\u{FFFD}"
            } else if (0x01...0x1F).contains(scalar.value) || scalar.value == 0x7F || Self.isForbiddenInXML(scalar)
                        || (offset == 0 && isDigit) || (offset == 1 && isDigit && scalars[0] == "-") {
                result += hexEscape(scalar)
            } else if scalar.value >= 0x80 || scalar == "-" || scalar == "_" || isDigit || (scalar.isASCII && scalar.properties.isAlphabetic) {
                result.unicodeScalars.append(scalar)
            } else {
                result += "\\"
                result.unicodeScalars.append(scalar)
            }
        }
        return result
    }

    /// A name (after `#`): an identifier's escaping without the rules for its start.
    static func name(_ name: String) -> String {
        var result = ""
        for scalar in name.unicodeScalars {
            if Self.isForbiddenInXML(scalar) {
                result += hexEscape(scalar)
            } else if scalar.value >= 0x80 || scalar == "-" || scalar == "_" || ("0"..."9").contains(scalar)
                || (scalar.isASCII && scalar.properties.isAlphabetic) {
                result.unicodeScalars.append(scalar)
            } else if (0x01...0x1F).contains(scalar.value) || scalar.value == 0x7F || scalar == "\0" {
                result += hexEscape(scalar == "\0" ? "\u{FFFD}" : scalar)
            } else {
                result += "\\"
                result.unicodeScalars.append(scalar)
            }
        }
        return result
    }

    /// A string in double quotes; quotes, backslashes, control characters
    /// and `<`, `>`, `&` (so no markup can appear in the text) escaped.
    static func string(_ value: String) -> String {
        var result = "\""
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\"", "\\", "<", ">", "&": result += hexEscape(scalar)
            case "\0": result += "\u{FFFD}"
            default:
                if (0x01...0x1F).contains(scalar.value) || scalar.value == 0x7F || Self.isForbiddenInXML(scalar) {
                    result += hexEscape(scalar)
                } else {
                    result.unicodeScalars.append(scalar)
                }
            }
        }
        return result + "\""
    }

    /// `\` and the code point in hex, then a space.
    private static func hexEscape(_ scalar: Unicode.Scalar) -> String {
        "\\" + String(scalar.value, radix: 16) + " "
    }
}
#endif
