#if Server
/// Why ``SVGSanitizer`` refused a document. The server answers every case
/// with `422 undecodable` and this description in the message, except
/// ``overXMLLimits(_:)``: `422 source_too_large`, as other sources over a
/// limit the server can lift.
public enum SVGSanitizingError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The bytes are not UTF-8 (or ASCII, or ISO-8859-1): a UTF-16 or
    /// UTF-32 byte order mark, a NUL byte, or another declared encoding.
    case unsupportedEncoding(String)
    /// The document declares entities or other markup (`<!ENTITY`,
    /// `<!ELEMENT`, `<!ATTLIST`, `<!NOTATION`, or a `DOCTYPE` with an
    /// internal subset): billion laughs and external entities start so.
    case markupDeclaration(String)
    /// The root element is not `svg` in the SVG namespace.
    case notSVG(String)
    /// Elements are nested deeper than the limit.
    case tooDeep(limit: Int)
    /// The document has more elements than the limit.
    case tooManyElements(limit: Int)
    /// With its `use` elements expanded, the document draws more elements
    /// than the limit (the billion laughs, made of `use`), or a `use`
    /// refers to an element that contains it.
    case tooManyInstances(limit: Int)
    /// The document's filters ask for more work than
    /// ``SVGSanitizer/filterBudget`` allows: the detail says which limit.
    case overBudget(String)
    /// The XML is not well-formed (or uses an undeclared namespace prefix
    /// or an undefined entity).
    case malformed(String)
    /// The document is well-formed but over libxml2's limits for huge
    /// documents (10 MB a document or an attribute value, 50,000 bytes a
    /// name), which ``SVGSanitizer/liftsXMLLimits`` lifts.
    case overXMLLimits(String)

    public var description: String {
        switch self {
        case .unsupportedEncoding(let detail): "the SVG is not in UTF-8: \(detail)"
        case .markupDeclaration(let detail): "the SVG declares markup, which is refused: \(detail)"
        case .notSVG(let detail): "the document is not an SVG: \(detail)"
        case .tooDeep(let limit): "the SVG nests elements more than \(limit) deep"
        case .tooManyElements(let limit): "the SVG has more than \(limit) elements"
        case .tooManyInstances(let limit): "the SVG's use elements draw more than \(limit) elements, or one draws itself"
        case .overBudget(let detail): "the SVG's filters are over the budget: \(detail)"
        case .malformed(let detail): "the SVG is not well-formed XML: \(detail)"
        case .overXMLLimits(let detail):
            "the SVG is over the XML parser's limits for huge documents (10 MB a document or attribute value), "
                + "which unlimited SVG parsing lifts: \(detail)"
        }
    }
}
#endif
