import Foundation
import ImagoServer
import ImagoSVG

/// The image server's parsers under libFuzzer, chosen by `IMAGO_FUZZ_TARGET`:
///
/// - `url`: ``ImageServerPath/init(parsing:presets:)``, and its writer
///   ``ImageServerPath/path(signedWith:encoding:)`` (round trip);
/// - `svg`: ``SVGSanitizer/sanitized(_:)`` (idempotence and the promises
///   its documentation makes, checked by ``SVGOracle``);
/// - `css`: ``SVGStyleSanitizer``'s three entry points directly, and the
///   same text inside a document through ``SVGSanitizer``.
///
/// A broken property is a `fatalError`, which libFuzzer records as a crash.
/// A property broken for a reason already analysed (``KnownFinding``, each
/// written up in Fuzz/README.md and Fuzz/findings/) is counted and printed
/// once instead, so that a run of an hour goes on looking for new ones;
/// `IMAGO_FUZZ_STRICT=1` makes those fatal too (to reproduce one).
enum Target: String {
    case url, svg, css
}

let target: Target = {
    let name = ProcessInfo.processInfo.environment["IMAGO_FUZZ_TARGET"] ?? ""
    guard let target = Target(rawValue: name) else {
        fatalError("IMAGO_FUZZ_TARGET must be url, svg or css, not \"\(name)\"")
    }
    return target
}()

let strict = ProcessInfo.processInfo.environment["IMAGO_FUZZ_STRICT"] == "1"

/// Properties found broken and analysed, by key: not fatal unless strict.
enum KnownFinding: String, CaseIterable {
    /// Finding 2: a raw path's output format (`raw:1/f:png`) is written as
    /// the source's extension (`@png`), which a raw path ignores, so the
    /// written path parses to `format: nil`. A raw path streams its source
    /// unchanged, so the format is never used: the options differ, the
    /// response does not.
    case rawFormatLost = "raw-format-lost"
    /// Finding 3: a tiled watermark (`wm:...:re`) keeps the gravity of an
    /// earlier `wm:...:no`; the writer writes `re` only, so the written
    /// path parses to the default gravity. Tiling ignores the gravity, so
    /// the options differ, the picture does not.
    case tiledWatermarkGravity = "tiled-watermark-gravity"
    /// Finding 4: a carriage return in text (`&#13;`) is written as a raw
    /// CR (``SVGEventWriter/escapedText`` escapes `&`, `<`, `>` only), which
    /// XML's end-of-line handling reads back as a line feed: sanitising
    /// the output again turns each CR in text into LF. Whitespace in
    /// SVG text either way; no markup or reference can come of it.
    case carriageReturnInText = "carriage-return-in-text"
    /// Finding 6: a CSS escape of U+FFFE or U+FFFF (`fill="\\ffff"`) is
    /// written back as the raw character (``CSSWriter`` keeps every scalar
    /// from U+0080 up), which XML does not allow: the sanitised document
    /// is not well-formed, and the sanitiser refuses its own output.
    case nonCharacterFromCSSEscape = "non-character-from-css-escape"

    /// Fixed in the product (2 to 5 by e6a5337, 6 by 7653d5a): fatal
    /// again, as a regression, strict or not.
    var isFixed: Bool { true }
}

nonisolated(unsafe) var knownSeen: Set<KnownFinding> = []

/// A broken property: fatal, unless it is a known finding (and not strict).
func violated(_ message: @autoclosure () -> String, known: KnownFinding? = nil) {
    if let known, !known.isFixed, !strict {
        if knownSeen.insert(known).inserted {
            FileHandle.standardError.write(Data("IMAGO-FUZZ known finding \(known.rawValue): \(message())\n".utf8))
        }
        return
    }
    fatalError("IMAGO-FUZZ property violated: \(message())")
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    _ = oracleSelfTest
    let data = start.map { Data(bytes: $0, count: count) } ?? Data()
    switch target {
    case .url: fuzzURL(String(decoding: data, as: UTF8.self))
    case .svg: fuzzSVG(data)
    case .css: fuzzCSS(String(decoding: data, as: UTF8.self))
    }
    return 0
}

/// The oracles must see what they are there to see: each of these breaks a
/// promise and must be reported, and each of the last ones keeps them all.
/// Run once, before the first input; a failure stops the fuzzer at once.
let oracleSelfTest: Void = {
    let svg = #"<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink">"#
    let broken = [
        svg + "<script>x()</script></svg>",
        svg + #"<g onload="x()"/></svg>"#,
        svg + #"<a href="javascript:x()"/></svg>"#,
        svg + #"<image xlink:href="http://x/y.png"/></svg>"#,
        svg + "<style>a { fill: url(http://x/y) }</style></svg>",
        svg + "<style>@import 'http://x/y.css';</style></svg>",
        svg + #"<rect fill="\75 rl(http://x/y)"/></svg>"#,
        svg + #"<rect style="fill: image-set('http://x/y' 1x)"/></svg>"#,
        svg + #"<rect style="fill: url( 'http://x/y' )"/></svg>"#,
        svg + #"<h:p xmlns:h="http://www.w3.org/1999/xhtml"/></svg>"#,
        svg + ##"<set attributeName="xlink:href" to="#a"/></svg>"##,
        svg + #"<g xml:base="http://x/"/></svg>"#,
        svg + "<!-- x --></svg>",
        svg + "<g>",
    ]
    for document in broken where SVGOracle.problem(in: Data(document.utf8)) == nil {
        fatalError("oracle self-test: no problem found in \(document)")
    }
    let kept = [
        svg + ##"<style>a { fill: url(#b); font-family: "url(http://x)" }</style><rect style="stroke: url( '#c' )" fill="url(#d)"/>"##
            + ##"<use xlink:href="#e"/><text>@import url(http://x) javascript:</text></svg>"##,
    ]
    for document in kept {
        if let problem = SVGOracle.problem(in: Data(document.utf8)) { fatalError("oracle self-test: \(problem) in \(document)") }
    }
    for css in [#"fill: u\72 l(http://x)"#, "a { fill: url( 'http://x' ) }", "@media x {}", "x: \"a\n; y: b", "x: url(http://x) url(#a)"] {
        if cssProblem(css, rule: .strict, selectors: true) == nil { fatalError("oracle self-test: no problem found in \(css)") }
    }
    if let problem = cssProblem(##"x: '#a' url(#b) url( "#c" ) rgb(1 2 3) :not(a)"##, rule: .strict, selectors: true) {
        fatalError("oracle self-test: \(problem)")
    }
}()
