#if Server && os(Linux)
import ChildProcesses
import Foundation
import HostileInputs
import ImagoServer
import ImagoSVG
import LoopbackServer
import Testing

/// SVG answered as SVG is inert in a browser: the hostile corpus
/// (`Fixtures/hostile-svg/`, several variants of each attack on CSS and
/// references: escaped `url`, quote desynchronisation, comments inside
/// `url`, `@import`, `image-set()` and the other loading functions, bad
/// URLs, presentation attributes and animations, scripts) keeps no
/// reference out of the document once sanitised, and headless Chromium,
/// loading every sanitised document as a page and as an `<img>`, sends
/// nothing to the listener its references point at and runs no script.
@Suite struct SVGBrowserTests {
    /// The corpus: file name (without `.svg`) to text, `{{LEAK}}` standing for the listener's address.
    static let corpus: [String: String] = {
        let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures/hostile-svg")
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
        return Dictionary(uniqueKeysWithValues: names.filter { $0.hasSuffix(".svg") }.map { name in
            (String(name.dropLast(4)), (try? String(contentsOf: folder.appendingPathComponent(name), encoding: .utf8)) ?? "")
        })
    }()

    /// `svg` with the listener's address in place of `{{LEAK}}`, sanitised.
    static func sanitized(_ svg: String, leak: String) throws -> String {
        let hostile = svg.replacingOccurrences(of: "{{LEAK}}", with: leak)
        return String(decoding: try SVGSanitizer().sanitized(Data(hostile.utf8)), as: UTF8.self)
    }

    /// `svg` without its CSS strings: `"..."` in `style` elements and
    /// `&quot;...&quot;` in attributes (the sanitiser writes every string in
    /// double quotes, with quotes and `&` inside escaped).
    static func outsideCSSStrings(_ svg: String) -> String { HostileInputs.outsideCSSStrings(svg) }

    @Test func theCorpusHasEveryClassWithSeveralVariants() {
        let classes = ["escaped-url", "quote-desync", "comments", "import", "image-functions", "presentation-attributes", "bad-url",
                       "scripts-and-references"]
        for name in classes {
            let variants = Self.corpus[name]?.components(separatedBy: "{{LEAK}}").count ?? 0
            #expect(variants > 2, "\(name): \(variants - 1) variants")
        }
    }

    @Test func noSanitisedDocumentKeepsAnExternalReference() throws {
        for (name, svg) in Self.corpus {
            let text = try Self.sanitized(svg, leak: "http://leak.example")
            // An address may stay only as text inside a CSS string (a quote desynchronised
            // in the source is a string to a browser too, and loads nothing).
            #expect(!Self.outsideCSSStrings(text).lowercased().contains("leak.example"), "\(name): \(text)")
            // What comes out is what the rules allow: sanitising it again changes nothing.
            #expect(try Self.sanitized(text, leak: "") == text, "\(name)")
            #expect(!text.lowercased().contains("import") && !text.contains("script") && !text.contains("javascript"), "\(name): \(text)")
            // What is kept still draws: the document's own rectangle and its class rule survive.
            #expect(text.contains(##"fill="#0a0""##), "\(name)")
        }
    }

    @Test func cssIsWrittenBackOnlyFromWhatWasParsed() {
        // Allowed declarations survive, re-serialised; anything else goes whole.
        #expect(SVGStyleSanitizer.sanitizedDeclarations("fill:red;stroke : url( #a ) ;opacity:.5 !important") ==
                "fill: red; stroke: url(#a); opacity: .5 !important")
        #expect(SVGStyleSanitizer.sanitizedDeclarations(#"fill: \75rl(http://x); stroke: blue"#) == "stroke: blue")
        #expect(SVGStyleSanitizer.sanitizedDeclarations(#"font-family: 'a;b'; fill: url(http://x)"#) == #"font-family: "a;b""#)
        #expect(SVGStyleSanitizer.sanitizedDeclarations("font-family: \"x\n; fill: url(http://x); stroke: red") == "stroke: red")
        #expect(SVGStyleSanitizer.sanitizedDeclarations("fill: u/**/rl(http://x); stroke: u/**/rl") == "stroke: u/**/rl")
        #expect(SVGStyleSanitizer.sanitizedDeclarations("transform: rotate(45deg) translate(1px,2px)")
                == "transform: rotate(45deg) translate(1px,2px)")
        #expect(SVGStyleSanitizer.sanitizedValue("translate(1 2)") == "translate(1 2)")
        #expect(SVGStyleSanitizer.sanitizedValue("url(#a);url(#b)") == "url(#a);url(#b)")
        #expect(SVGStyleSanitizer.sanitizedValue(#"\75rl(#a)"#) == "url(#a)")
        #expect(SVGStyleSanitizer.sanitizedValue("url(http://x)") == nil)
        #expect(SVGStyleSanitizer.sanitizedValue("var(--x)") == nil)
        #expect(SVGStyleSanitizer.sanitizedStyleSheet("@import 'x'; rect, .a > g:not(.b) { fill: red; filter: blur(2px) } @media all { g { fill: red } }")
                == "rect, .a > g:not(.b) { fill: red }")
        #expect(SVGStyleSanitizer.sanitizedStyleSheet(#"a[href^="http"] { fill: red } b { background: url(x) }"#)
                == #"a[href^="http"] { fill: red }"#)
        // Tokens that would read as one are kept apart.
        #expect(SVGStyleSanitizer.sanitizedDeclarations(#"font-family: a\ b"#) == #"font-family: a\ b"#)
        #expect(SVGStyleSanitizer.sanitizedDeclarations(#"font-family: \31 a"#) == #"font-family: \31 a"#)
    }

    // MARK: In a browser

    /// Debian's headless Chromium, when installed (`scripts/install-system-packages chromium`).
    static let chromium: String? = ["/usr/bin/chromium", "/usr/bin/chromium-browser"].first {
        FileManager.default.isExecutableFile(atPath: $0)
    }

    /// Loads `page` in headless Chromium (a fresh profile, at most 60 s, killed after).
    /// Its exit is awaited, not waited for on a thread: a test thread blocked for a
    /// minute starves the other suites of the runner's few threads.
    static func browse(_ page: URL) async throws {
        guard let chromium else { return }
        let profile = FileManager.default.temporaryDirectory.appendingPathComponent("imago-chromium-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: profile) }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/timeout")
        process.arguments = ["--kill-after=5", "60", chromium, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                             "--user-data-dir=\(profile.path)", "--virtual-time-budget=4000", "--dump-dom", page.absoluteString]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try await process.runToExit()
    }

    /// A page that shows each document as an `<img>` and loads it as a document (an `<iframe>`, an `<object>`).
    static func page(_ names: [String]) -> Data {
        let items = names.map { name in
            #"<img src="/svg/\#(name).svg"><iframe src="/svg/\#(name).svg"></iframe><object data="/svg/\#(name).svg" type="image/svg+xml"></object>"#
        }
        return Data("<!DOCTYPE html><html><body>\(items.joined(separator: "\n"))</body></html>".utf8)
    }

    @Test(.enabled(if: chromium != nil, "Debian's chromium is not installed"))
    func chromiumLoadsEverySanitisedDocumentAndReachesNothing() async throws {
        let listener = try await LoopbackServer.start(routes: [:])
        let leak = listener.url("/leak").absoluteString
        var routes: [String: ServedResponse] = [:]
        for (name, svg) in Self.corpus {
            routes["/svg/\(name).svg"] = .ok(Data(try Self.sanitized(svg, leak: leak + "/" + name).utf8), contentType: "image/svg+xml")
            // The control: the same documents unsanitised, which must reach the listener (or the test proves nothing).
            routes["/raw/\(name).svg"] = .ok(Data(svg.replacingOccurrences(of: "{{LEAK}}", with: leak + "/raw-" + name).utf8),
                                            contentType: "image/svg+xml")
        }
        let names = Self.corpus.keys.sorted()
        routes["/sanitised.html"] = .ok(Self.page(names), contentType: "text/html")
        routes["/raw.html"] = .ok(Data(String(decoding: Self.page(names), as: UTF8.self).replacingOccurrences(of: "/svg/", with: "/raw/").utf8),
                                  contentType: "text/html")
        listener.route(routes)

        try await Self.browse(listener.url("/sanitised.html"))
        let served = listener.requests.map(\.path)
        #expect(served.contains("/sanitised.html") && served.contains { $0.hasPrefix("/svg/") }, "Chromium loaded the page: \(served)")
        let leaked = served.filter { $0.hasPrefix("/leak") }
        #expect(leaked.isEmpty, "requests from sanitised documents: \(leaked)")

        try await Self.browse(listener.url("/raw.html"))
        let raw = listener.requests.map(\.path).filter { $0.hasPrefix("/leak/raw-") }
        #expect(raw.contains { $0.contains("script") }, "the unsanitised control runs its scripts: \(raw)")
        #expect(raw.contains { $0.contains("import") }, "and loads its imports: \(raw)")
        try await listener.stop()
    }
}
#endif
