#if Server
/// Rewrites the CSS of an SVG document so that it can load nothing: the
/// text of a `style` element, a `style` attribute, or a presentation
/// attribute's value.
///
/// The CSS is tokenized as a browser tokenizes it (``CSSTokenizer``, CSS
/// Syntax Level 3: escapes, strings, `url(` tokens, comments, bad strings
/// and bad URLs), parsed into rules and declarations, and written again
/// from the tokens, keeping only what is allowed; no text passes through
/// that was not parsed:
///
/// - every at-rule is dropped (`@import`, `@font-face`, `@media`...);
/// - a rule is kept only when its selector is made of plain selector
///   tokens (names, `#id`, `.class`, combinators, attribute selectors,
///   `:not()`, `:nth-child()`...);
/// - a declaration is kept only when its property is one SVG draws with
///   (``allowedProperties``) and its value is made of allowed tokens:
///   identifiers, numbers, lengths, colours, strings, and the functions in
///   ``allowedFunctions`` (colours, `calc()`, transforms, filter
///   functions), with `url(#id)` as the only reference;
/// - anything else (`url(http:...)`, `image()`, `image-set()`, `src()`,
///   `element()`, `var()`, a bad string or URL, an escaped `url`) drops its
///   declaration, or its rule.
///
/// ```swift
/// SVGStyleSanitizer.sanitizedDeclarations(#"fill: \75rl(http://evil/x); stroke: url(#b)"#)  // "stroke: url(#b)"
/// ```
public enum SVGStyleSanitizer {
    /// Where CSS is read: what is allowed depends on it.
    enum Context {
        /// A `style` element: rules. `filter` is not kept here (a selector
        /// could apply it to every element past the filter budget's count).
        case sheet
        /// A `style` attribute: declarations.
        case declarations
        /// A presentation attribute's value (or an animation's `values`, `from`, `to`): `;` separates values.
        case attribute
    }

    /// The properties kept, lower-cased: SVG's presentation properties and the text and layout ones SVG documents use.
    public static let allowedProperties: Set<String> = [
        "alignment-baseline", "baseline-shift", "clip", "clip-path", "clip-rule", "color", "color-interpolation",
        "color-interpolation-filters", "color-rendering", "cx", "cy", "d", "direction", "display", "dominant-baseline",
        "fill", "fill-opacity", "fill-rule", "filter", "flood-color", "flood-opacity", "font", "font-family", "font-size",
        "font-size-adjust", "font-stretch", "font-style", "font-variant", "font-weight", "height", "image-rendering",
        "isolation", "letter-spacing", "lighting-color", "line-height", "marker", "marker-end", "marker-mid", "marker-start",
        "mask", "mask-type", "mix-blend-mode", "opacity", "overflow", "paint-order", "pointer-events", "r", "rx", "ry",
        "shape-rendering", "stop-color", "stop-opacity", "stroke", "stroke-dasharray", "stroke-dashoffset", "stroke-linecap",
        "stroke-linejoin", "stroke-miterlimit", "stroke-opacity", "stroke-width", "text-anchor", "text-decoration",
        "text-rendering", "transform", "transform-box", "transform-origin", "unicode-bidi", "vector-effect", "visibility",
        "white-space", "width", "word-spacing", "writing-mode", "x", "y",
    ]

    /// The functions kept in values, lower-cased: none of them takes an address.
    public static let allowedFunctions: Set<String> = [
        "rgb", "rgba", "hsl", "hsla", "hwb", "lab", "lch", "oklab", "oklch", "color-mix",
        "calc", "min", "max", "clamp",
        "matrix", "translate", "translatex", "translatey", "scale", "scalex", "scaley", "rotate", "skew", "skewx", "skewy",
        "blur", "brightness", "contrast", "drop-shadow", "grayscale", "hue-rotate", "invert", "opacity", "saturate", "sepia",
        "inset", "circle", "ellipse", "polygon",
    ]

    /// The functions kept in selectors, lower-cased.
    static let selectorFunctions: Set<String> = [
        "not", "is", "where", "nth-child", "nth-last-child", "nth-of-type", "nth-last-of-type", "lang",
    ]

    /// The units kept on dimensions, lower-cased (`n` for `:nth-child(2n)`).
    static let allowedUnits: Set<String> = [
        "px", "em", "ex", "rem", "ch", "pt", "pc", "cm", "mm", "in", "q", "vw", "vh", "vmin", "vmax",
        "deg", "rad", "grad", "turn", "s", "ms", "x", "dpi", "dppx", "fr", "n",
    ]

    /// A `style` element's text: the rules kept, one a line.
    public static func sanitizedStyleSheet(_ css: String) -> String {
        var parser = CSSParser(CSSTokenizer.tokens(css))
        return parser.rules().compactMap { rule -> String? in
            guard let selector = serializedSelector(rule.prelude) else { return nil }
            let declarations = kept(CSSParser.declarations(in: rule.block), context: .sheet)
            guard !declarations.isEmpty else { return nil }
            return selector + " { " + declarations + " }"
        }.joined(separator: "\n")
    }

    /// A `style` attribute's declarations kept, as `name: value; ...`.
    public static func sanitizedDeclarations(_ css: String) -> String {
        kept(CSSParser.declarations(in: CSSParser.componentValues(CSSTokenizer.tokens(css))), context: .declarations)
    }

    /// A presentation attribute's value written again from its tokens, or
    /// `nil` when it holds anything not allowed (and the attribute goes).
    public static func sanitizedValue(_ value: String) -> String? {
        let components = CSSParser.componentValues(CSSTokenizer.tokens(value))
        return serializedValue(trimmed(components), context: .attribute)
    }

    /// Whether an attribute's value needs ``sanitizedValue(_:)``: it has a
    /// function (`(`) or an escape (`\`), without which CSS can load nothing.
    public static func needsSanitizing(_ value: String) -> Bool {
        value.unicodeScalars.contains { $0 == "(" || $0 == "\\" }
    }

    // MARK: Declarations

    /// The declarations allowed in `context`, written again.
    private static func kept(_ declarations: [CSSDeclaration], context: Context) -> String {
        declarations.compactMap { declaration -> String? in
            let name = declaration.name.lowercased()
            guard allowedProperties.contains(name), !(context == .sheet && name == "filter"),
                  let value = serializedValue(declaration.value, context: context), !value.isEmpty else { return nil }
            return name + ": " + value + (declaration.isImportant ? " !important" : "")
        }.joined(separator: "; ")
    }

    /// Component values without whitespace at either end.
    private static func trimmed(_ components: [CSSComponent]) -> [CSSComponent] {
        var result = components[...]
        while result.first == .token(.whitespace) { result = result.dropFirst() }
        while result.last == .token(.whitespace) { result = result.dropLast() }
        return Array(result)
    }

    /// A value written again from its components, or `nil` when one is not allowed.
    private static func serializedValue(_ components: [CSSComponent], context: Context) -> String? {
        var writer = CSSWriter()
        for component in components {
            switch component {
            case .token(let token):
                switch token {
                case .ident, .number, .percentage, .hash, .string, .whitespace, .comma: writer.append(token)
                case .dimension(_, _, let unit) where allowedUnits.contains(unit.lowercased()): writer.append(token)
                case .delim(let scalar) where ["/", "+", "-", "*"].contains(scalar): writer.append(token)
                case .semicolon where context == .attribute: writer.append(token)
                case .url(let address):
                    guard let fragment = reference(address) else { return nil }
                    writer.appendReference(fragment)
                default: return nil
                }
            case .function(let name, let arguments):
                let lowered = name.lowercased()
                if lowered == "url" {
                    guard case .token(.string(let address))? = trimmed(arguments).first, trimmed(arguments).count == 1,
                          let fragment = reference(address) else { return nil }
                    writer.appendReference(fragment)
                    continue
                }
                guard allowedFunctions.contains(lowered), let inner = serializedValue(arguments, context: context) else { return nil }
                writer.appendFunction(lowered, inner)
            case .block(.openParenthesis, let contents):
                guard let inner = serializedValue(contents, context: context) else { return nil }
                writer.appendParenthesized(inner)
            case .block:
                return nil
            }
        }
        return writer.text
    }

    /// The `id` a `url(...)` names, when it is a reference inside the
    /// document (`#` and a name of letters, digits, `-`, `_`, `.`, `:`); `nil` otherwise.
    private static func reference(_ address: String) -> String? {
        let trimmed = address.trimmingCSSWhitespace()
        guard trimmed.hasPrefix("#"), trimmed.count > 1, trimmed.count <= 256 else { return nil }
        let id = trimmed.dropFirst()
        guard id.unicodeScalars.allSatisfy({ $0.properties.isAlphabetic || ("0"..."9").contains($0) || "-_.:".unicodeScalars.contains($0) })
        else { return nil }
        return String(id)
    }

    // MARK: Selectors

    /// A rule's selector written again, or `nil` when it holds anything but plain selector tokens.
    private static func serializedSelector(_ components: [CSSComponent]) -> String? {
        var writer = CSSWriter()
        for component in trimmed(components) {
            switch component {
            case .token(let token):
                switch token {
                case .ident, .hash, .whitespace, .comma, .colon: writer.append(token)
                case .delim(let scalar) where [".", "*", ">", "+", "~", "|"].contains(scalar): writer.append(token)
                case .number, .dimension(_, _, unit: "n"), .dimension(_, _, unit: "N"): writer.append(token)
                case .delim("-"): writer.append(token)
                default: return nil
                }
            case .function(let name, let arguments):
                guard selectorFunctions.contains(name.lowercased()), let inner = serializedSelector(arguments) else { return nil }
                writer.appendFunction(name.lowercased(), inner)
            case .block(.openSquare, let contents):
                var attribute = CSSWriter()
                for part in contents {
                    switch part {
                    case .token(.ident), .token(.string), .token(.whitespace): if case .token(let token) = part { attribute.append(token) }
                    case .token(.delim(let scalar)) where ["=", "^", "$", "*", "|", "~"].contains(scalar): attribute.append(.delim(scalar))
                    default: return nil
                    }
                }
                writer.appendBracketed(attribute.text)
            case .block:
                return nil
            }
        }
        return writer.text.isEmpty ? nil : writer.text
    }
}

private extension String {
    /// Without CSS whitespace (space, tab, newline) at either end.
    func trimmingCSSWhitespace() -> String {
        let isSpace = { (scalar: Unicode.Scalar) in scalar == " " || scalar == "\t" || scalar == "\n" }
        var scalars = unicodeScalars[...]
        while let first = scalars.first, isSpace(first) { scalars = scalars.dropFirst() }
        while let last = scalars.last, isSpace(last) { scalars = scalars.dropLast() }
        return String(String.UnicodeScalarView(scalars))
    }
}
#endif
