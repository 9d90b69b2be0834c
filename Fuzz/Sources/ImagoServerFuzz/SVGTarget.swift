import Foundation
import ImagoServer
import ImagoSVG

let sanitizer = SVGSanitizer()

/// Sanitises `data`; when it is kept, checks the output (``SVGOracle``)
/// and that sanitising it again changes nothing. Returns the output.
@discardableResult
func fuzzSVG(_ data: Data) -> Data? {
    let once: Data
    do {
        once = try sanitizer.sanitized(data)
    } catch {
        return nil
    }
    let shown = { (data: Data) in String(decoding: data.prefix(4000), as: UTF8.self).debugDescription }
    // Finding 6: U+FFFE or U+FFFF in the output, which XML does not allow.
    let nonCharacter: KnownFinding? = String(decoding: once, as: UTF8.self).unicodeScalars
        .contains { $0.value == 0xFFFE || $0.value == 0xFFFF } ? .nonCharacterFromCSSEscape : nil
    if let problem = SVGOracle.problem(in: once) {
        violated("sanitised output breaks a promise: \(problem)\ninput: \(shown(data))\noutput: \(shown(once))",
                 known: problem.hasPrefix("the output is not well-formed XML") ? nonCharacter : nil)
        if nonCharacter != nil { return once }
    }
    let twice: Data
    do {
        twice = try sanitizer.sanitized(once)
    } catch {
        violated("the sanitiser refuses its own output: \(error)\ninput: \(shown(data))\noutput: \(shown(once))",
                 known: nonCharacter)
        return once
    }
    if twice != once {
        // XML's end-of-line handling of the first output: what a raw CR alone would change.
        let normalized = Data(String(decoding: once, as: UTF8.self).replacingOccurrences(of: "\r\n", with: "\n")
            .replacingOccurrences(of: "\r", with: "\n").utf8)
        violated("sanitising is not idempotent\ninput: \(shown(data))\nonce: \(shown(once))\ntwice: \(shown(twice))",
                 known: twice == normalized ? .carriageReturnInText : nil)
    }
    return once
}
