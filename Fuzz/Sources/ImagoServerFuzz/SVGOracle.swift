import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif
import ImagoServer
import ImagoSVG

/// Reads a sanitised document again and checks what ``SVGSanitizer``'s
/// documentation promises of its output, with its own namespace scopes:
///
/// - it is well-formed XML whose root is `svg` in the SVG namespace;
/// - every element is in the SVG namespace, and none is `script`,
///   `foreignObject`, `iframe`, `object`, `embed`, `audio`, `video`,
///   `handler` or `listener`, nor an animation of an `href`;
/// - no `on*` attribute, no `xml:base`;
/// - every `href` is a fragment or a `data:image/{png,jpeg,gif,webp};base64,` address;
/// - `style` elements and `style` attributes: no at-rule, no bad string
///   or URL, only `url(#...)`, only the allowed functions (``cssProblem``);
/// - any other attribute a browser reads as CSS: only `url(#...)` and the allowed functions;
/// - no comment, processing instruction, `DOCTYPE` or markup declaration.
final class SVGOracle: NSObject, XMLParserDelegate {
    static let dropped: Set<String> = ["script", "foreignobject", "iframe", "object", "embed", "audio", "video", "handler", "listener"]
    static let animations: Set<String> = ["set", "animate", "animatecolor", "animatemotion", "animatetransform"]
    static let notCSS: Set<String> = ["id", "class", "d", "points", "viewbox", "preserveaspectratio", "lang", "role", "aria-label"]
    static let svgNamespace = "http://www.w3.org/2000/svg"

    private(set) var problem: String?
    private var scopes: [[String: String]] = [["xml": "http://www.w3.org/XML/1998/namespace"]]
    private var depth = 0
    private var sawRoot = false
    private var styleText: String?

    /// The first broken promise in `output`, or `nil`.
    static func problem(in output: Data) -> String? {
        let text = String(decoding: output, as: UTF8.self)
        let lowered = text.lowercased()
        for marker in ["<script", "<!--", "<!doctype", "<!entity", "<?xml-stylesheet", "<!attlist", "<!element", "<!notation"]
        where lowered.contains(marker) {
            return "the output holds \(marker)"
        }
        let parser = XMLParser(data: output)
        parser.shouldProcessNamespaces = false
        parser.shouldReportNamespacePrefixes = false
        parser.shouldResolveExternalEntities = false
        let oracle = SVGOracle()
        parser.delegate = oracle
        let parsed = parser.parse()
        if let problem = oracle.problem { return problem }
        guard parsed else { return "the output is not well-formed XML: \(String(describing: parser.parserError))" }
        guard oracle.sawRoot else { return "the output has no root" }
        // FoundationXML's parser says yes to a document cut short (`<svg><g>`): counted here.
        guard oracle.depth == 0 else { return "the output leaves \(oracle.depth) element(s) open" }
        return nil
    }

    private func fail(_ message: String) {
        if problem == nil { problem = message }
    }

    private static func split(_ name: String) -> (prefix: String, local: String) {
        guard let colon = name.lastIndex(of: ":") else { return ("", name) }
        return (String(name[..<colon]), String(name[name.index(after: colon)...]))
    }

    private func namespace(of prefix: String) -> String? {
        for scope in scopes.reversed() {
            if let uri = scope[prefix] { return uri.isEmpty ? nil : uri }
        }
        return nil
    }

    func parser(_ parser: XMLParser, didStartElement elementName: String, namespaceURI: String?,
                qualifiedName qName: String?, attributes: [String: String]) {
        depth += 1
        var scope: [String: String] = [:]
        for (name, value) in attributes {
            if name == "xmlns" { scope[""] = value } else if name.hasPrefix("xmlns:") { scope[String(name.dropFirst(6))] = value }
        }
        scopes.append(scope)
        let (prefix, local) = Self.split(elementName)
        guard namespace(of: prefix) == Self.svgNamespace else {
            return fail("element \(elementName.prefix(40)) outside the SVG namespace")
        }
        if depth == 1 {
            guard local == "svg" else { return fail("root \(elementName.prefix(40))") }
            sawRoot = true
        }
        if styleText != nil { fail("an element inside style") }
        let lowered = local.lowercased()
        if Self.dropped.contains(lowered) { fail("element \(local.prefix(40)) kept") }
        if Self.animations.contains(lowered) {
            let target = attributes.first { Self.split($0.key).local == "attributeName" }?.value ?? ""
            if Self.split(target.trimmingCharacters(in: .whitespacesAndNewlines)).local.lowercased() == "href" {
                fail("an animation of href kept")
            }
        }
        for (name, value) in attributes {
            let attribute = Self.split(name).local.lowercased()
            if name == "xmlns" || name.hasPrefix("xmlns:") { continue }
            if attribute.hasPrefix("on") { fail("attribute \(name.prefix(40)) kept") }
            if name == "xml:base" { fail("xml:base kept") }
            if attribute == "href" {
                if let problem = Self.hrefProblem(value) { fail(problem) }
            } else if attribute == "style" {
                if let problem = cssProblem(value, rule: .strict, selectors: false) {
                    fail("style attribute: \(problem) in \(value.prefix(120))")
                }
            } else if !Self.notCSS.contains(attribute) {
                if let problem = cssProblem(value, rule: .value, selectors: false) {
                    fail("attribute \(name.prefix(40)): \(problem) in \(value.prefix(120))")
                }
            }
        }
        if local == "style" { styleText = "" }
    }

    func parser(_ parser: XMLParser, didEndElement elementName: String, namespaceURI: String?, qualifiedName qName: String?) {
        if Self.split(elementName).local == "style", let css = styleText {
            if let problem = cssProblem(css, rule: .strict, selectors: true) {
                fail("style element: \(problem) in \(css.prefix(200))")
            }
            styleText = nil
        }
        depth -= 1
        scopes.removeLast()
    }

    func parser(_ parser: XMLParser, foundCharacters string: String) {
        if styleText != nil { styleText! += string }
    }

    func parser(_ parser: XMLParser, foundCDATA CDATABlock: Data) {
        if styleText != nil { styleText! += String(decoding: CDATABlock, as: UTF8.self) }
    }

    func parser(_ parser: XMLParser, parseErrorOccurred parseError: any Error) {
        fail("the output is not well-formed XML: error \((parseError as NSError).code) at line \(parser.lineNumber)")
    }

    func parser(_ parser: XMLParser, foundComment comment: String) { fail("a comment kept") }
    func parser(_ parser: XMLParser, foundProcessingInstructionWithTarget target: String, data: String?) {
        fail("a processing instruction kept")
    }
    func parser(_ parser: XMLParser, foundInternalEntityDeclarationWithName name: String, value: String?) { fail("an entity declaration") }
    func parser(_ parser: XMLParser, resolveExternalEntityName name: String, systemID: String?) -> Data? {
        fail("an external entity")
        return nil
    }

    /// A fragment, or an embedded image of the four kinds, as the sanitiser promises.
    static func hrefProblem(_ value: String) -> String? {
        let address = value.trimmingCharacters(in: .whitespacesAndNewlines)
        if address.hasPrefix("#") { return nil }
        let lowered = address.lowercased()
        for kind in ["png", "jpeg", "gif", "webp"] where lowered.hasPrefix("data:image/\(kind);base64,") { return nil }
        return "href \(value.prefix(80)) kept"
    }
}
