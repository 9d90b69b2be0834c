#if Server && os(Linux)
import Foundation
import HTTPTypes
import HummingbirdTesting
import HostileInputs
import Imago
import ImagoCodecs
import ImagoServer
import ImagoSVG
import ImagoTesting
import LoopbackServer
import Testing

/// SVG sources: sanitised (each rule), rasterised by librsvg at their own
/// size or resized, answered as SVG when no other format is asked for, and
/// hostile documents refused with their documented statuses, with nothing
/// loaded from the network or the file system.
@Suite struct SVGTests {
    static let namespaces = #"xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink""#

    /// A 40x30 document: red on the left half, blue on the right.
    static let halves = Data("""
        <?xml version="1.0" encoding="UTF-8"?>
        <!-- drawn by hand -->
        <svg \(namespaces) width="40" height="30">
          <rect x="0" y="0" width="20" height="30" fill="#ff0000"/>
          <rect x="20" y="0" width="20" height="30" fill="#0000ff"/>
        </svg>
        """.utf8)

    /// A solid red 8x8 PNG.
    static let redPNG = try! ImageEncoders.png().encode(Image(width: 8, height: 8, pixels: [UInt8](repeating: 0, count: 256).enumerated().map {
        $0.offset % 4 == 0 || $0.offset % 4 == 3 ? 255 : 0
    }))

    /// `svg` wrapped in an SVG root with the usual namespaces.
    static func document(_ body: String, attributes: String = #"width="20" height="20""#) -> Data {
        Data(#"<svg \#(namespaces) \#(attributes)>\#(body)</svg>"#.utf8)
    }

    /// The sanitised text of `svg`.
    func sanitized(_ svg: String) throws -> String {
        String(decoding: try SVGSanitizer().sanitized(Data(svg.utf8)), as: UTF8.self)
    }

    /// Whether any pixel of `image` is mostly red.
    func hasRed(_ image: Image) -> Bool {
        let pixels = image.converted(to: .rgba8).pixels
        return stride(from: 0, to: pixels.count, by: 4).contains { index in
            pixels[index + 3] > 128 && pixels[index] > 200 && pixels[index + 1] < 60 && pixels[index + 2] < 60
        }
    }

    // MARK: Rasterising

    @Test func aPlainSVGIsRasterisedAtItsSizeAndColours() async throws {
        let origin = try await Fixture.origin(["/a.svg": .ok(Self.halves, contentType: "image/svg+xml")])
        try await Fixture.withServer(Fixture.configuration()) { client, _ in
            let response = try await client.execute(uri: Fixture.path("", origin.url("/a.svg"), extension: "png"), method: .get)
            #expect(response.status == .ok)
            #expect(response.header("Content-Type") == "image/png")
            #expect(response.header("Content-Disposition") == "inline; filename=\"a.png\"")
            let image = try response.image()
            #expect((image.width, image.height) == (40, 30))
            #expect(image.pixel(x: 5, y: 5) == [255, 0, 0, 255])
            #expect(image.pixel(x: 34, y: 25) == [0, 0, 255, 255])
        }
    }

    @Test func transparencyIsStraightAlpha() async throws {
        let svg = Self.document(##"<rect width="10" height="20" fill="#00ff00" fill-opacity="0.5"/>"##)
        let origin = try await Fixture.origin(["/half.svg": .ok(svg, contentType: "image/svg+xml")])
        try await Fixture.withServer(Fixture.configuration()) { client, _ in
            let image = try await client.execute(uri: Fixture.path("", origin.url("/half.svg"), extension: "png"), method: .get).image()
            let half = image.pixel(x: 5, y: 5)
            #expect(half[1] >= 254 && half[0] <= 1 && half[2] <= 1, "un-premultiplied: \(half)")
            #expect((127...128).contains(half[3]))
            #expect(image.pixel(x: 15, y: 5)[3] == 0, "nothing drawn is transparent")
        }
    }

    @Test func theSizeComesFromTheViewBoxOrTheDefault() throws {
        let rasterizer = SVGRasterizer()
        #expect(try rasterizer.size(of: Self.document("", attributes: #"viewBox="0 0 60 20""#)) == (60, 20))
        #expect(try rasterizer.size(of: Self.document("", attributes: #"width="30" viewBox="0 0 60 20""#)) == (30, 10))
        #expect(try rasterizer.size(of: Self.document("", attributes: #"width="1in" height="2pt""#)) == (96, 3))
        #expect(try rasterizer.size(of: Self.document("", attributes: "")) == (300, 150))
        #expect(try rasterizer.size(of: Self.document("", attributes: #"width="100%" height="100%""#)) == (300, 150))
        #expect(throws: SVGRasterizingError.tooLarge(width: 100_000, height: 100_000, limit: 50_000_000)) {
            try rasterizer.size(of: Self.document("", attributes: #"width="100000" height="100000""#))
        }
        #expect(throws: SVGRasterizingError.tooLarge(width: 40_000, height: 10, limit: 50_000_000), "over cairo's side") {
            try rasterizer.size(of: Self.document("", attributes: #"width="40000" height="10""#))
        }
    }

    @Test func svgSourcesAreResized() async throws {
        let origin = try await Fixture.origin(["/a.svg": .ok(Self.halves, contentType: "application/octet-stream")])
        try await Fixture.withServer(Fixture.configuration()) { client, _ in
            let fitted = try await client.execute(uri: Fixture.path("rs:fit:20:20", origin.url("/a.svg"), extension: "png"), method: .get).image()
            #expect((fitted.width, fitted.height) == (20, 15))
            #expect(fitted.pixel(x: 2, y: 7) == [255, 0, 0, 255])
            #expect(fitted.pixel(x: 17, y: 7) == [0, 0, 255, 255])
            // Filled and cut to the centre: a quarter of each colour is cut away.
            let filled = try await client.execute(uri: Fixture.path("rs:fill:10:10", origin.url("/a.svg"), extension: "png"), method: .get).image()
            #expect((filled.width, filled.height) == (10, 10))
            #expect(filled.pixel(x: 1, y: 5) == [255, 0, 0, 255])
            #expect(filled.pixel(x: 8, y: 5) == [0, 0, 255, 255])
            // Options that get no decode hint resize the full drawing.
            let turned = try await client.execute(uri: Fixture.path("rot:90/w:15", origin.url("/a.svg"), extension: "webp"), method: .get)
            #expect(turned.header("Content-Type") == "image/webp")
            let image = try turned.image()
            #expect((image.width, image.height) == (15, 20))
        }
    }

    @Test func textGradientsAndUsesAreDrawn() async throws {
        let svg = Self.document(##"""
            <defs><linearGradient id="g"><stop offset="0" stop-color="#fff"/><stop offset="1" stop-color="#000"/></linearGradient>
            <rect id="r" width="10" height="10"/></defs><rect width="80" height="40" fill="url(#g)"/>
            <use href="#r" x="65" y="0" fill="#ff0000"/><text x="4" y="30" font-size="20" font-family="sans-serif">Imago</text>
            """##, attributes: #"width="80" height="40""#)
        let origin = try await Fixture.origin(["/text.svg": .ok(svg, contentType: "image/svg+xml")])
        try await Fixture.withServer(Fixture.configuration()) { client, _ in
            let response = try await client.execute(uri: Fixture.path("", origin.url("/text.svg"), extension: "png"), method: .get)
            #expect(response.status == .ok)
            let image = try response.image()
            #expect((image.width, image.height) == (80, 40))
            #expect(image.pixel(x: 70, y: 5) == [255, 0, 0, 255], "the use of #r, filled red")
            #expect(image.pixel(x: 1, y: 38)[0] > image.pixel(x: 78, y: 38)[0] + 100, "the gradient, white to black")
        }
    }

    // MARK: SVG answered as SVG

    /// imgproxy's `IMGPROXY_SANITIZE_SVG=false`: the document as it came,
    /// still sandboxed by the answer's headers.
    @Test func withoutSanitisingTheDocumentGoesOutAsItCameSandboxed() async throws {
        let hostile = Self.document(#"<script>alert(1)</script><rect width="20" height="20" fill="red"/>"#, attributes: #"width="20" height="20""#)
        let origin = try await Fixture.origin(["/x.svg": .ok(hostile, contentType: "image/svg+xml")])
        try await Fixture.withServer(Fixture.configuration { $0.sanitizesSVG = false }) { client, _ in
            let response = try await client.execute(uri: Fixture.path("", origin.url("/x.svg")), method: .get)
            #expect(response.status == .ok)
            #expect(response.data == hostile)
            #expect(response.header("Content-Security-Policy")?.contains("sandbox") == true)
            #expect(response.header("X-Content-Type-Options") == "nosniff")
        }
    }

    @Test func anSVGSourceAskedForAsSVGIsSanitised() async throws {
        let hostile = Self.document("""
            <script>alert(1)</script><rect width="20" height="20" fill="red" onclick="alert(2)"/>
            """, attributes: #"width="20" height="20" onload="alert(3)""#)
        let origin = try await Fixture.origin([
            "/x.svg": .ok(hostile, contentType: "image/svg+xml"),
            "/drawing": .ok(hostile, contentType: "image/svg+xml"),
            "/a.png": .ok(Fixture.png, contentType: "image/png"),
        ])
        try await Fixture.withServer(Fixture.configuration { $0.outputPolicy = OutputPolicy(automatic: [.webp]) }) { client, _ in
            for path in [Fixture.path("", origin.url("/x.svg")), Fixture.path("", origin.url("/x.svg"), extension: "svg"),
                         Fixture.path("f:svg/rs:fit:5:5", origin.url("/x.svg"))] {
                let response = try await client.execute(uri: path, method: .get, headers: [.accept: "image/svg+xml"])
                #expect(response.status == .ok, "\(path)")
                #expect(response.header("Content-Type") == "image/svg+xml")
                #expect(response.header("Content-Disposition") == "inline; filename=\"x.svg\"")
                #expect(response.header("X-Content-Type-Options") == "nosniff")
                #expect(response.header("Content-Security-Policy")?.contains("sandbox") == true)
                let text = String(decoding: response.data, as: UTF8.self)
                #expect(!text.contains("script") && !text.contains("alert") && !text.contains("onload"), "\(text)")
                #expect(text.contains(#"<rect fill="red" height="20" width="20"></rect>"#), "\(text)")
            }
            // At an address without .svg, the bytes still decide (the pipeline draws it, then it is read again).
            let unnamed = try await client.execute(uri: Fixture.path("", origin.url("/drawing")), method: .get)
            #expect(unnamed.header("Content-Type") == "image/svg+xml")
            #expect(unnamed.header("Content-Disposition") == "inline; filename=\"drawing.svg\"")
            #expect(!String(decoding: unnamed.data, as: UTF8.self).contains("script"))
            // A client that takes WebP gets one when the path names no format.
            let negotiated = try await client.execute(uri: Fixture.path("", origin.url("/x.svg")), method: .get, headers: [.accept: "image/webp"])
            #expect(negotiated.header("Content-Type") == "image/webp")
            #expect(negotiated.header("Vary") == "Accept")
            #expect(try negotiated.image().width == 20)
            // A raster source cannot be answered as SVG.
            let raster = try await client.execute(uri: Fixture.path("", origin.url("/a.png"), extension: "svg"), method: .get)
            #expect(raster.status == .unprocessableContent)   // imgproxy's "can't save"
            #expect(raster.errorCode == "cannot_write")
            #expect(String(decoding: raster.data, as: UTF8.self).contains("only an SVG source"))
        }
    }

    @Test func svgIsAFormatInPaths() throws {
        for path in ["/insecure/plain/http%3A%2F%2Fx%2Fa.svg@svg", "/insecure/f:svg/plain/http%3A%2F%2Fx%2Fa.svg",
                     "/insecure/f:png/ext:svg/plain/http%3A%2F%2Fx%2Fa.svg"] {
            let options = try ImageServerPath(parsing: path).options
            #expect(options.requestsSVG && options.format == nil, "\(path)")
            let written = ImageServerPath(source: URL(string: "http://x/a.svg")!, options: options).path(signedWith: nil)
            #expect(written.hasSuffix("@svg"))
            #expect(try ImageServerPath(parsing: written).options == options)
        }
        let overridden = try ImageServerPath(parsing: "/insecure/f:svg/plain/http%3A%2F%2Fx%2Fa.svg@png").options
        #expect(!overridden.requestsSVG && overridden.format == .png)
    }

    // MARK: Sanitising, rule by rule

    @Test func scriptsAndEventHandlersAreDropped() throws {
        let text = try sanitized(#"""
            <svg xmlns="http://www.w3.org/2000/svg" onload="a()"><script>b()</script><g onclick="c()" onmouseover="d()" id="g">
            <foreignObject><div xmlns="http://www.w3.org/1999/xhtml" onclick="e()">f</div></foreignObject>
            <iframe/><object/><embed/><audio/><video/><handler>g()</handler>
            <html:script xmlns:html="http://www.w3.org/1999/xhtml">h()</html:script></g></svg>
            """#)
        for word in ["a()", "b()", "c()", "d()", "e()", "f<", "g()", "h()", "onload", "onclick", "script", "foreignObject", "iframe",
                     "object", "embed", "audio", "video", "handler"] {
            #expect(!text.contains(word), "\(word) in \(text)")
        }
        #expect(text.contains(#"<g id="g">"#))
        #expect(text.hasPrefix(#"<?xml version="1.0" encoding="UTF-8"?>"#))
    }

    @Test func referencesAreKeptOnlyToTheDocumentOrEmbeddedImages() throws {
        let png = Self.redPNG.base64EncodedString()
        let text = try sanitized(#"""
            <svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" xmlns:l="http://www.w3.org/1999/xlink">
            <use href="#a"/><use xlink:href=" #b "/>
            <image href="http://evil.example/x.png"/><image xlink:href="file:///etc/passwd"/><image l:href="//evil.example/y"/>
            <image href="data:image/png;base64,\#(png)"/><image href="data:image/svg+xml;base64,PHN2Zy8+"/>
            <image href="data:image/png;base64,bm90IGFuIGltYWdl"/><a href="javascript:alert(1)">x</a><g xml:base="http://evil.example/"/>
            <set attributeName="href" to="javascript:alert(1)"/><animate attributeName="xlink:href" values="x"/>
            <animate attributeName="opacity" values="0;1"/></svg>
            """#)
        #expect(text.contains(##"<use href="#a">"##))
        #expect(text.contains(#"<use xlink:href=" #b ">"#))
        #expect(text.contains("data:image/png;base64,\(png)"))
        for word in ["evil", "passwd", "svg+xml;base64", "bm90IGFuIGltYWdl", "javascript", "xml:base", "<set"] {
            #expect(!text.contains(word), "\(word) in \(text)")
        }
        #expect(text.contains(#"<animate attributeName="opacity" values="0;1">"#))
    }

    @Test func embeddedImagesStayWithinThePixelLimit() throws {
        let png = Self.redPNG.base64EncodedString()
        let svg = Data(#"""
            <svg xmlns="http://www.w3.org/2000/svg"><image href="data:image/png;base64,\#(png)"/><image href="data:image/png;base64,\#(png)"/></svg>
            """#.utf8)
        let text = String(decoding: try SVGSanitizer(maximumEmbeddedPixelCount: 100).sanitized(svg), as: UTF8.self)
        #expect(text.components(separatedBy: "data:image/png").count == 2, "the second 64 pixels go over 100: \(text)")
    }

    /// A progressive JPEG of a few hundred bytes can hold thousands of scans (seconds of CPU
    /// to decode): embedded in an SVG, it is dropped like one over the pixel budget.
    @Test func embeddedJPEGsWithTooManyScansAreDropped() throws {
        let jpeg = [UInt8](try JPEGEncoder(quality: 85, progressive: true).encode(TestImages.gradient(width: 16, height: 16)))
        let lastScan = (0..<jpeg.count - 1).last { jpeg[$0] == 0xFF && jpeg[$0 + 1] == 0xDA }!
        let scan = jpeg[lastScan..<(jpeg.count - 2)]
        let heavy = Data(jpeg[..<(jpeg.count - 2)] + Array(repeating: Array(scan), count: 500).joined() + [0xFF, 0xD9])
        let text = try sanitized(#"""
            <svg xmlns="http://www.w3.org/2000/svg"><image href="data:image/jpeg;base64,\#(Data(jpeg).base64EncodedString())"/>\#
            <image href="data:image/jpeg;base64,\#(heavy.base64EncodedString())"/></svg>
            """#)
        #expect(text.components(separatedBy: "data:image/jpeg").count == 2, "only the ordinary one stays")
    }

    @Test func xIncludeIsDropped() throws {
        let text = try sanitized(#"""
            <svg xmlns="http://www.w3.org/2000/svg" xmlns:xi="http://www.w3.org/2001/XInclude">
            <xi:include href="file:///etc/passwd" parse="text"><xi:fallback>none</xi:fallback></xi:include>
            <x:include xmlns:x="http://www.w3.org/2001/XInclude" href="/etc/hosts"/><g/></svg>
            """#)
        #expect(!text.contains("include") && !text.contains("passwd") && !text.contains("hosts") && !text.contains("none"), "\(text)")
        #expect(text.contains("<g></g>"))
    }

    @Test func stylesLoseImportsAndExternalURLs() throws {
        let text = try sanitized(#"""
            <svg xmlns="http://www.w3.org/2000/svg"><style>
            @import url(http://evil.example/a.css); @IMPORT "http://evil.example/b.css";
            rect { fill: url(http://evil.example/c.svg#p); stroke: url( "#grad" ); background: image-set("http://evil.example/d.png" 1x) }
            .e { background: \75 rl(http://evil.example/e.png) } /* url(http://evil.example/f) */
            @font-face { font-family: x; src: url('http://evil.example/g.woff') }
            </style><rect style="fill: url(http://evil.example/h.svg#p); stroke: url(#ok)" filter="url(http://evil.example/i#f)"
            mask="url(#m)" transform="translate(1 2)"/></svg>
            """#)
        #expect(!text.contains("evil") && !text.lowercased().contains("import"), "\(text)")
        #expect(text.contains(##"rect { stroke: url(#grad) }"##), "\(text)")
        #expect(text.contains(#"style="stroke: url(#ok)""#))
        #expect(text.contains(#"mask="url(#m)""#) && text.contains(#"transform="translate(1 2)""#) && !text.contains("filter="), "\(text)")
    }

    @Test func textAndAttributesAreEscapedAgain() throws {
        let text = try sanitized(#"""
            <svg xmlns="http://www.w3.org/2000/svg"><text id="a&amp;&quot;&lt;">1 &lt; 2 &amp; <![CDATA[3 > </text> 2]]></text><style><![CDATA[
            text { font-family: "a<b" }]]></style></svg>
            """#)
        #expect(text.contains(#"<text id="a&amp;&quot;&lt;">1 &lt; 2 &amp; 3 &gt; &lt;/text&gt; 2</text>"#), "\(text)")
        #expect(text.contains(#"font-family: "a\3c b""#), "CSS's own escape: no markup in the text")
        // What comes out parses again to the same document.
        #expect(try sanitized(text) == text)
    }

    @Test func documentsThatAreNotSafeSVGAreRefused() throws {
        let sanitizer = SVGSanitizer()
        func refusal(_ svg: String) -> SVGSanitizingError? {
            do { _ = try sanitizer.sanitized(Data(svg.utf8)) } catch { return error }
            return nil
        }
        #expect(refusal(#"<html xmlns="http://www.w3.org/1999/xhtml"/>"#)
            == .notSVG("the root element is html in namespace http://www.w3.org/1999/xhtml"))
        #expect(refusal("<svg/>") == .notSVG("the root element is svg in namespace none"))
        #expect(refusal(#"<svg xmlns="http://www.w3.org/2000/svg"><g></svg>"#).map { if case .malformed = $0 { true } else { false } } == true)
        #expect(refusal(#"<svg xmlns="http://www.w3.org/2000/svg">&nbsp;</svg>"#).map { if case .malformed = $0 { true } else { false } } == true)
        #expect(refusal(#"<?xml version="1.0" encoding="UTF-7"?><svg xmlns="http://www.w3.org/2000/svg"/>"#)
            == .unsupportedEncoding("the declared encoding \"utf-7\""))
        #expect(refusal("<!DOCTYPE svg [ ]><svg/>") == .markupDeclaration("a DOCTYPE with an internal subset"))
        #expect(refusal(#"<svg xmlns="http://www.w3.org/2000/svg"><!-- <!ENTITY --></svg>"#) == .markupDeclaration("ENTITY declaration"))
        let deep = String(repeating: "<g>", count: 300) + String(repeating: "</g>", count: 300)
        #expect(refusal(#"<svg xmlns="http://www.w3.org/2000/svg">\#(deep)</svg>"#) == .tooDeep(limit: 256))
        let loop = ##"<g id="a"><use href="#b"/></g><g id="b"><use href="#a"/></g>"##
        #expect(refusal(#"<svg xmlns="http://www.w3.org/2000/svg">\#(loop)</svg>"#) == .tooManyInstances(limit: 100_000))
        let shared = ##"<g id="a"><rect/></g><use href="#a"/><use href="#a"/><g id="b"><use href="#a"/></g><use href="#b"/>"##
        #expect(refusal(#"<svg xmlns="http://www.w3.org/2000/svg">\#(shared)</svg>"#) == nil, "a target used often is no loop")
        let many = String(repeating: "<g/>", count: 20)
        #expect(throws: SVGSanitizingError.tooManyElements(limit: 10)) {
            try SVGSanitizer(maximumElementCount: 10).sanitized(Data(#"<svg xmlns="http://www.w3.org/2000/svg">\#(many)</svg>"#.utf8))
        }
        // A document cut short, an empty one, an undefined prefix, an undefined entity in an attribute.
        for malformed in [#"<svg xmlns="http://www.w3.org/2000/svg"><g>"#, "", " ", #"<svg xmlns="http://www.w3.org/2000/svg"><x:g/></svg>"#,
                          #"<svg xmlns="http://www.w3.org/2000/svg"><rect fill="&x;"/></svg>"#] {
            #expect(refusal(malformed).map { if case .malformed = $0 { true } else { false } } == true, "\(malformed)")
        }
        var utf16 = Data([0xFF, 0xFE])
        utf16.append(#"<svg xmlns="http://www.w3.org/2000/svg"/>"#.data(using: .utf16LittleEndian)!)
        #expect(throws: SVGSanitizingError.unsupportedEncoding("a UTF-16 or UTF-32 byte order mark")) { try sanitizer.sanitized(utf16) }
    }

    @Test func latin1IsWrittenAsUTF8AndReferencesAreReplaced() throws {
        var latin1 = Data(#"<?xml version="1.0" encoding="ISO-8859-1"?><svg xmlns="http://www.w3.org/2000/svg"><text id="&#233;&amp;">caf"#.utf8)
        latin1.append(0xE9)
        latin1.append(contentsOf: Array("&#x263A;&lt;</text></svg>".utf8))
        let text = String(decoding: try SVGSanitizer().sanitized(latin1), as: UTF8.self)
        #expect(text.contains("<text id=\"é&amp;\">café☺&lt;</text>"), "\(text)")
    }

    @Test func svgIsRecognisedByItsBytes() {
        for svg in ["<svg/>",
                    "\u{FEFF} \n<?xml version=\"1.0\"?><!-- c --><!DOCTYPE svg PUBLIC \"-//W3C//DTD SVG 1.1//EN\" \"x.dtd\">\n<svg a=\"1\">",
                    "<!DOCTYPE svg [<!ENTITY a \"]>\"> <!-- ] -->]><svg>", "<s:svg xmlns:s=\"http://www.w3.org/2000/svg\">"] {
            #expect(SVGSanitizer.looksLikeSVG(Data(svg.utf8)), "\(svg)")
        }
        for other in ["<svgx/>", "<html><svg/></html>", "svg", "", "<?xml version=\"1.0\"?>", "<!-- <svg> "] {
            #expect(!SVGSanitizer.looksLikeSVG(Data(other.utf8)), "\(other)")
        }
        #expect(!SVGSanitizer.looksLikeSVG(Fixture.png))
    }

    // MARK: Hostile documents, over HTTP

    /// The billion laughs, and again with `use` (HostileInputs).
    static let billionLaughs = HostileInputs.billionLaughs
    static let useBomb = HostileInputs.useBomb

    @Test func hostileDocumentsGetTheirStatusesAndLoadNothing() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("imago-svg-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let redFile = directory.appendingPathComponent("red.png")
        try Self.redPNG.write(to: redFile)
        let origin = try await Fixture.origin(["/red.png": .ok(Self.redPNG, contentType: "image/png"),
                                               "/secret.txt": .ok(Data("secret".utf8), contentType: "text/plain"),
                                               "/evil.dtd": .ok(Data(#"<!ENTITY x "y">"#.utf8), contentType: "application/xml-dtd"),
                                               "/evil.css": .ok(Data("rect { fill: red }".utf8), contentType: "text/css")])
        let red = origin.url("/red.png").absoluteString
        let white = ##"<rect width="40" height="40" fill="#ffffff"/>"##
        let size = #"width="40" height="40""#
        let documents: [String: Data] = [
            "/laughs.svg": Self.billionLaughs,
            "/uses.svg": Self.useBomb,
            "/entity.svg": Data(#"""
                <?xml version="1.0"?><!DOCTYPE svg [<!ENTITY xxe SYSTEM "\#(origin.url("/secret.txt"))">]>
                <svg xmlns="http://www.w3.org/2000/svg"><text>&xxe;</text></svg>
                """#.utf8),
            "/dtd.svg": Data(#"""
                <?xml version="1.0"?><!DOCTYPE svg SYSTEM "\#(origin.url("/evil.dtd"))">
                <svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><rect width="10" height="10"/></svg>
                """#.utf8),
            // An entity the unloaded DTD would declare is undefined.
            "/dtd-entity.svg": Data(#"""
                <?xml version="1.0"?><!DOCTYPE svg SYSTEM "\#(origin.url("/evil.dtd"))">
                <svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><text>&x;</text><rect fill="&x;"/></svg>
                """#.utf8),
            "/file.svg": Self.document(white + #"""
                <image href="\#(redFile.absoluteString)" width="40" height="40"/><image xlink:href="\#(redFile.path)" width="40" height="40"/>
                """#, attributes: size),
            "/http.svg": Self.document(white + """
                <style>@import url(\(origin.url("/evil.css"))); rect { fill: url(\(red)) }</style>
                <image href="\(red)" width="40" height="40"/><image xlink:href="\(red)" width="40" height="40"/>
                <rect width="40" height="40" style="fill: url('\(red)')"/><feImage href="\(red)"/>
                """, attributes: size),
            "/data.svg": Self.document(
                #"<image href="data:image/png;base64,\#(Self.redPNG.base64EncodedString())" width="40" height="40"/>"#, attributes: size),
            "/huge.svg": Self.document("<rect width=\"100000\" height=\"100000\"/>", attributes: #"width="100000" height="100000""#),
            "/deep.svg": Self.document(String(repeating: "<g>", count: 10_000) + String(repeating: "</g>", count: 10_000)),
        ]
        origin.route(documents.mapValues { ServedResponse.ok($0, contentType: "image/svg+xml") })
        try await Fixture.withServer(Fixture.configuration()) { client, _ in
            func get(_ path: String, _ format: String?) async throws -> TestResponse {
                try await client.execute(uri: Fixture.path("", origin.url(path), extension: format), method: .get)
            }
            for format in ["png", nil] as [String?] {
                for (path, code) in [("/laughs.svg", "undecodable"), ("/entity.svg", "undecodable"), ("/deep.svg", "undecodable"),
                                     ("/dtd-entity.svg", "undecodable"),
                                     ("/uses.svg", "undecodable"),
                                     ("/huge.svg", "source_too_large")] {
                    let response = try await get(path, format)
                    #expect(response.errorCode == code, "\(path)@\(format ?? "-"): \(String(decoding: response.data, as: UTF8.self))")
                    #expect(response.status.code == 422)
                }
                // A DOCTYPE without declarations is read, and its DTD never loaded.
                #expect(try await get("/dtd.svg", format).status == .ok)
                // Nothing the documents point at is drawn, or answered.
                for path in ["/file.svg", "/http.svg"] {
                    let response = try await get(path, format)
                    #expect(response.status == .ok, "\(path)")
                    if format == nil {
                        let text = String(decoding: response.data, as: UTF8.self)
                        #expect(!text.contains("red.png") && !text.contains("evil.css"), "\(text)")
                    } else {
                        #expect(try !hasRed(response.image()), "\(path) drew red")
                    }
                }
            }
            // An embedded image is drawn: the test above would see its red.
            #expect(try await hasRed(get("/data.svg", "png").image()))
        }
        // The origin served the documents, and nothing they point at.
        let asked = Set(origin.requests.map(\.path))
        #expect(asked.isSubset(of: Set(documents.keys)), "\(asked)")
        #expect(origin.requestCount(for: "/red.png") == 0 && origin.requestCount(for: "/secret.txt") == 0)
        #expect(origin.requestCount(for: "/evil.dtd") == 0 && origin.requestCount(for: "/evil.css") == 0)
    }
}
#endif
