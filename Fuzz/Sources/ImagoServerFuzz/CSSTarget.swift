import Foundation
import ImagoServer
import ImagoSVG

/// The CSS sanitiser's three public entry points on the input, each
/// output checked by the independent tokenizer (``cssProblem``) and for
/// idempotence; then the same text inside a document, through
/// ``SVGSanitizer`` (as a `style` element, a `style` attribute and a
/// presentation attribute), checked as the `svg` target checks.
func fuzzCSS(_ css: String) {
    let sheet = SVGStyleSanitizer.sanitizedStyleSheet(css)
    if let problem = cssProblem(sheet, rule: .strict, selectors: true) {
        violated("sanitizedStyleSheet: \(problem)\ninput: \(css.debugDescription)\noutput: \(sheet.debugDescription)")
    }
    let sheetAgain = SVGStyleSanitizer.sanitizedStyleSheet(sheet)
    if sheetAgain != sheet {
        violated("sanitizedStyleSheet is not idempotent\ninput: \(css.debugDescription)\nonce: \(sheet.debugDescription)\ntwice: \(sheetAgain.debugDescription)")
    }

    let declarations = SVGStyleSanitizer.sanitizedDeclarations(css)
    if let problem = cssProblem(declarations, rule: .strict, selectors: false) {
        violated("sanitizedDeclarations: \(problem)\ninput: \(css.debugDescription)\noutput: \(declarations.debugDescription)")
    }
    let declarationsAgain = SVGStyleSanitizer.sanitizedDeclarations(declarations)
    if declarationsAgain != declarations {
        violated("sanitizedDeclarations is not idempotent\ninput: \(css.debugDescription)\nonce: \(declarations.debugDescription)\ntwice: \(declarationsAgain.debugDescription)")
    }

    if let value = SVGStyleSanitizer.sanitizedValue(css) {
        if let problem = cssProblem(value, rule: .value, selectors: false) {
            violated("sanitizedValue: \(problem)\ninput: \(css.debugDescription)\noutput: \(value.debugDescription)")
        }
        let valueAgain = SVGStyleSanitizer.sanitizedValue(value)
        if valueAgain != value {
            violated("sanitizedValue is not idempotent\ninput: \(css.debugDescription)\nonce: \(value.debugDescription)\ntwice: \(String(describing: valueAgain).debugDescription)")
        }
    }

    // Inside a document: escaped for XML, so that the CSS (not the XML) is what varies.
    let escaped = xmlEscaped(css)
    let document = #"<svg xmlns="http://www.w3.org/2000/svg"><style>"# + escaped + #"</style><rect style=""# + escaped
        + #"" fill=""# + escaped + #""/></svg>"#
    guard let output = fuzzSVG(Data(document.utf8)) else {
        violated("a document with only escaped CSS in it is refused\ninput: \(css.debugDescription)")
        return
    }
    _ = output
}

/// `text` as XML character data for a double-quoted attribute or an
/// element: markup characters and line breaks as references, and the
/// characters XML 1.0 does not allow left out.
func xmlEscaped(_ text: String) -> String {
    var result = ""
    for scalar in text.unicodeScalars {
        switch scalar {
        case "&": result += "&amp;"
        case "<": result += "&lt;"
        case ">": result += "&gt;"
        case "\"": result += "&quot;"
        case "\t": result += "&#9;"
        case "\n": result += "&#10;"
        case "\r": result += "&#13;"
        default:
            let v = scalar.value
            if v >= 0x20 && v != 0xFFFE && v != 0xFFFF { result.unicodeScalars.append(scalar) }
        }
    }
    return result
}
