#if Server
import Foundation

/// Writes the document again for ``SVGSanitizer`` from the events
/// ``XMLEventReader`` reports, keeping only what the sanitizer's rules allow.
/// One is made for each document and used on one thread.
final class SVGEventWriter: XMLEventHandler {
    /// Elements dropped with their content, lower-cased, in the SVG namespace.
    static let droppedElements: Set<String> = [
        "script", "foreignobject", "iframe", "object", "embed", "audio", "video", "handler", "listener",
    ]
    /// Attributes, by local name lower-cased, that no browser reads as CSS:
    /// kept as they are, whatever they hold.
    static let notCSS: Set<String> = ["id", "class", "d", "points", "viewbox", "preserveaspectratio", "lang", "role", "aria-label"]
    /// Animation elements, lower-cased: dropped when they animate an `href`.
    static let animations: Set<String> = ["set", "animate", "animatecolor", "animatemotion", "animatetransform"]

    /// The rules and limits.
    private let sanitizer: SVGSanitizer
    /// The document written so far.
    private(set) var output = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
    /// Why the document is refused, once it is.
    private(set) var failure: SVGSanitizingError?
    /// Whether the root element was seen.
    private(set) var sawRoot = false
    /// How deep the current element is (the root is 1).
    private var depth = 0
    /// How many elements have started.
    private var elementCount = 0
    /// When inside a dropped element, how many of its elements are open (it included).
    private var skipped = 0
    /// The namespace declarations of each open element, prefix (`""` for the default) to URI.
    private var scopes: [[String: String]] = [["xml": "http://www.w3.org/XML/1998/namespace"]]
    /// The depth of the open `style` element, whose text is collected in ``style``.
    private var styleDepth: Int?
    /// The text of the open `style` element.
    private var style = ""
    /// What is left of the embedded images' pixel budget.
    private var embeddedPixels: Int
    /// The elements kept, for counting what their `use`s draw.
    private(set) var instances = SVGInstanceCount()
    /// The open elements that are kept, as ``instances`` numbers them.
    private var keptElements: [Int] = []
    /// The filter work counted so far.
    private var filterWork: SVGFilterBudgetCount

    /// Creates a writer for one document.
    init(sanitizer: SVGSanitizer) {
        self.sanitizer = sanitizer
        embeddedPixels = sanitizer.maximumEmbeddedPixelCount
        filterWork = SVGFilterBudgetCount(budget: sanitizer.filterBudget)
    }

    // MARK: Elements

    /// Whether the document has been refused: the reader stops.
    var wantsToStop: Bool { failure != nil }

    func startElement(_ elementName: String, attributes attributeDict: [String: String]) {
        guard failure == nil else { return }
        depth += 1
        elementCount += 1
        var scope: [String: String] = [:]
        for (name, value) in attributeDict {
            if name == "xmlns" { scope[""] = value } else if name.hasPrefix("xmlns:") { scope[String(name.dropFirst(6))] = value }
        }
        scopes.append(scope)
        if depth > sanitizer.maximumDepth { return fail(.tooDeep(limit: sanitizer.maximumDepth)) }
        if elementCount > sanitizer.maximumElementCount { return fail(.tooManyElements(limit: sanitizer.maximumElementCount)) }
        if skipped > 0 {
            skipped += 1
            return
        }
        let (prefix, local) = Self.split(elementName)
        let namespace = self.namespace(of: prefix)
        if depth == 1 {
            guard local == "svg", namespace == SVGSanitizer.svgNamespace else {
                let found = "the root element is \(elementName.prefix(40)) in namespace \(namespace?.prefix(80) ?? "none")"
                return fail(.notSVG(found))
            }
            sawRoot = true
            filterWork.root(attributeDict)
        }
        if styleDepth != nil || isDropped(local: local, namespace: namespace, attributes: attributeDict) {
            skipped = 1
            return
        }
        if let overBudget = filterWork.count(local.lowercased(), attributes: attributeDict) { return fail(.overBudget(overBudget)) }
        output += "<" + elementName
        let attributes = sanitizedAttributes(attributeDict)
        for (name, value) in attributes {
            output += " " + name + "=\"" + Self.escapedAttribute(value) + "\""
        }
        output += ">"
        keptElements.append(record(local: local, attributes: attributes))
        if local == "style" { styleDepth = depth }
    }

    func endElement(_ elementName: String) {
        guard failure == nil else { return }
        defer {
            depth -= 1
            scopes.removeLast()
        }
        if skipped > 0 {
            skipped -= 1
            return
        }
        if styleDepth == depth {
            output += Self.escapedText(SVGStyleSanitizer.sanitizedStyleSheet(style))
            (styleDepth, style) = (nil, "")
        }
        output += "</" + elementName + ">"
        keptElements.removeLast()
    }

    // MARK: Text

    /// Writes text inside the root, escaped, or collects a `style` element's.
    func text(_ string: String) {
        guard failure == nil, skipped == 0, depth > 0 else { return }
        if styleDepth != nil { style += string } else { output += Self.escapedText(string) }
    }

    // MARK: Declarations and entities

    func declaration(_ description: String) {
        fail(.markupDeclaration(description))
    }

    func undefinedEntity(_ name: String) {
        fail(.malformed("the entity \(name.prefix(40)) is not defined"))
    }

    /// Keeps the first failure (the reader then stops).
    private func fail(_ error: SVGSanitizingError) {
        guard failure == nil else { return }
        failure = error
    }

    // MARK: Rules

    /// Whether an element is dropped with its content, as ``SVGSanitizer`` lists.
    private func isDropped(local: String, namespace: String?, attributes: [String: String]) -> Bool {
        guard namespace == SVGSanitizer.svgNamespace else { return true }
        let name = local.lowercased()
        if Self.droppedElements.contains(name) { return true }
        if Self.animations.contains(name) {
            let target = attributes.first { Self.split($0.key).local == "attributeName" }?.value ?? ""
            return Self.split(target.trimmingCharacters(in: .whitespacesAndNewlines)).local.lowercased() == "href"
        }
        return false
    }

    /// Records a kept element in ``instances``: its `id` (or `xml:id`), and
    /// for a `use`, the element its `href` (else `xlink:href`) names.
    private func record(local: String, attributes: [(String, String)]) -> Int {
        let id = attributes.first { $0.0 == "id" || $0.0 == "xml:id" }?.1
        var target: String?
        if local == "use" {
            let references = attributes.filter { Self.split($0.0).local == "href" }
            let reference = (references.first { $0.0 == "href" } ?? references.first)?.1.trimmingCharacters(in: .whitespacesAndNewlines)
            target = reference.flatMap { $0.hasPrefix("#") ? String($0.dropFirst()) : nil }
        }
        return instances.record(parent: keptElements.last, id: id, useTarget: target)
    }

    /// The attributes kept, namespace declarations first, then by name;
    /// values changed as the rules say.
    private func sanitizedAttributes(_ attributes: [String: String]) -> [(String, String)] {
        var kept: [(String, String)] = []
        for (name, value) in attributes.sorted(by: { Self.attributeOrder($0.key, $1.key) }) {
            let local = Self.split(name).local.lowercased()
            if name == "xmlns" || name.hasPrefix("xmlns:") {
                kept.append((name, value))
            } else if local.hasPrefix("on") || name == "xml:base" {
                continue
            } else if local == "href" {
                if sanitizer.allowsReference(value, budget: &embeddedPixels) { kept.append((name, value)) }
            } else if local == "style" {
                // Only the declarations allowed, written again; none left, no attribute.
                let declarations = SVGStyleSanitizer.sanitizedDeclarations(value)
                if !declarations.isEmpty { kept.append((name, declarations)) }
            } else if !Self.notCSS.contains(local), SVGStyleSanitizer.needsSanitizing(value) {
                // Read as CSS by browsers (presentation attributes, animation values): written again, or dropped.
                if let sanitized = SVGStyleSanitizer.sanitizedValue(value) { kept.append((name, sanitized)) }
            } else {
                kept.append((name, value))
            }
        }
        return kept
    }

    /// Namespace declarations before other attributes, each group by name.
    private static func attributeOrder(_ first: String, _ second: String) -> Bool {
        let firstIsDeclaration = first == "xmlns" || first.hasPrefix("xmlns:")
        let secondIsDeclaration = second == "xmlns" || second.hasPrefix("xmlns:")
        return firstIsDeclaration != secondIsDeclaration ? firstIsDeclaration : first < second
    }

    /// The namespace URI a prefix (`""` for none) is bound to, innermost first.
    private func namespace(of prefix: String) -> String? {
        for scope in scopes.reversed() {
            if let uri = scope[prefix] { return uri.isEmpty ? nil : uri }
        }
        return nil
    }

    /// A qualified name's prefix (`""` when none) and local part.
    private static func split(_ name: String) -> (prefix: String, local: String) {
        guard let colon = name.lastIndex(of: ":") else { return ("", name) }
        return (String(name[..<colon]), String(name[name.index(after: colon)...]))
    }

    // MARK: Escaping

    /// Text with `&`, `<` and `>` escaped.
    static func escapedText(_ text: String) -> String {
        var result = ""
        result.reserveCapacity(text.utf8.count)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": result += "&amp;"
            case "<": result += "&lt;"
            case ">": result += "&gt;"
            // A raw CR would be read back as LF (XML's end-of-line handling): sanitising twice must change nothing.
            case "\r": result += "&#13;"
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result
    }

    /// An attribute value for double quotes: `&`, `<`, `>` and `"` escaped,
    /// and tabs and line breaks as character references (which keeps them
    /// from being read back as spaces).
    static func escapedAttribute(_ value: String) -> String {
        var result = ""
        result.reserveCapacity(value.utf8.count)
        for scalar in value.unicodeScalars {
            switch scalar {
            case "&": result += "&amp;"
            case "<": result += "&lt;"
            case ">": result += "&gt;"
            case "\"": result += "&quot;"
            case "\t": result += "&#9;"
            case "\n": result += "&#10;"
            case "\r": result += "&#13;"
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result
    }
}
#endif
