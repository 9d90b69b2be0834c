#if Server
import Foundation
import Imago
import ImagoCodecs

/// Makes an SVG document safe to rasterise or to send to a browser: what
/// comes out refers to nothing outside itself and runs no script.
///
/// The document is read by a streaming XML parser (libxml2's SAX2, with
/// nothing loaded from outside the bytes) and written again from its
/// events, so only what the rules keep reaches the output:
///
/// - Declared markup is refused before parsing: a `DOCTYPE` with an
///   internal subset, or any `<!ENTITY`, `<!ELEMENT`, `<!ATTLIST` or
///   `<!NOTATION` (billion laughs and external entities need one). A
///   `DOCTYPE` without one is read but never loaded, and not written.
/// - Only UTF-8 (or ASCII, or ISO-8859-1) is read: an encoding that could
///   hide a declaration from that check is refused.
/// - The root element must be `svg` in the SVG namespace.
/// - Elements outside the SVG namespace (XHTML, XInclude's `xi:include`,
///   editors' metadata) are dropped with their content, and so are
///   `script`, `foreignObject`, `iframe`, `object`, `embed`, `audio`,
///   `video`, `handler`, `listener`, and animations (`set`, `animate...`)
///   of an `href`.
/// - Every `on*` attribute is dropped, and `xml:base`.
/// - `href` (with any prefix, such as `xlink:href`) is kept only when it is
///   a fragment (`#id`) or a `data:image/png`, `jpeg`, `gif` or `webp`
///   `;base64,` address whose image opens and stays within
///   ``maximumEmbeddedPixelCount`` (counted over all the document's images).
/// - `style` elements, `style` attributes and any attribute with a
///   function or an escape go through ``SVGStyleSanitizer``: no `@import`,
///   no `url(...)` but `url(#...)`.
/// - Comments and processing instructions (`<?xml-stylesheet?>`) are dropped.
/// - Elements nest at most ``maximumDepth`` deep, and there are at most
///   ``maximumElementCount`` of them; with every `use` expanded, at most
///   ``maximumInstanceCount`` are drawn, and no `use` draws itself.
/// - Filters stay within ``filterBudget`` (how many, how many primitives,
///   `feConvolveMatrix` orders, `feTurbulence` octaves, blur extents).
/// - Any XML error (a mismatched tag, an undefined entity or namespace
///   prefix) refuses the document, as browsers do, and so does a document
///   over libxml2's limits for huge documents, unless ``liftsXMLLimits``.
///
/// Text and attribute values are escaped again as they are written.
///
/// ```swift
/// let safe = try SVGSanitizer().sanitized(Data(#"<svg xmlns="http://www.w3.org/2000/svg" onload="x()"/>"#.utf8))
/// // <?xml version="1.0" encoding="UTF-8"?>\n<svg xmlns="http://www.w3.org/2000/svg"></svg>
/// ```
public struct SVGSanitizer: Sendable {
    /// The SVG namespace.
    public static let svgNamespace = "http://www.w3.org/2000/svg"
    /// How deep elements may nest. Default: 256.
    public var maximumDepth: Int
    /// How many elements a document may have. Default: 100,000.
    public var maximumElementCount: Int
    /// How many elements a document may draw, each `use` counting its
    /// target's elements again. Default: 100,000.
    public var maximumInstanceCount: Int
    /// How many pixels the embedded (`data:`) images may have together.
    /// Default: 50 megapixels, the decoders' default.
    public var maximumEmbeddedPixelCount: Int
    /// How much filter work the document may ask for. Default: ``SVGFilterBudget/init(maximumFilterCount:maximumPrimitiveCount:maximumFilteredElementCount:maximumConvolveOrder:maximumTurbulenceOctaves:maximumExtentPerCanvasSide:maximumExtent:)``'s defaults.
    public var filterBudget: SVGFilterBudget
    /// Whether libxml2's limits for huge documents are lifted
    /// (`XML_PARSE_HUGE`, what librsvg's `RSVG_HANDLE_FLAG_UNLIMITED` sets;
    /// imgproxy's `IMGPROXY_SVG_UNLIMITED`). Default: `false`: a document
    /// longer than 10 MB, an attribute value (a path's data, an embedded
    /// image) over 10 MB, or a name over 50,000 bytes is refused as
    /// ``SVGSanitizingError/overXMLLimits(_:)``. With `true` each may reach 1 GB
    /// (in practice, the source's size limit).
    ///
    /// The sanitizer's own limits stay as set: ``maximumDepth``,
    /// ``maximumElementCount``, ``maximumInstanceCount``,
    /// ``maximumEmbeddedPixelCount`` and ``filterBudget``. The default depth,
    /// 256, is also librsvg's without the flag; a caller that lifts the XML
    /// limits for deeper documents raises it too, to
    /// ``liftedMaximumDepth`` (as the image server does).
    public var liftsXMLLimits: Bool

    /// The depth libxml2 allows with `XML_PARSE_HUGE` (from 2.11 on; 2.9
    /// has no limit with it): ``maximumDepth`` for a sanitizer that lifts
    /// the XML limits. 2048.
    public static let liftedMaximumDepth = 2048

    /// Creates a sanitizer with these limits.
    public init(maximumDepth: Int = 256, maximumElementCount: Int = 100_000, maximumInstanceCount: Int = 100_000,
                maximumEmbeddedPixelCount: Int = ImageDecodingOptions.defaultMaximumPixelCount,
                filterBudget: SVGFilterBudget = SVGFilterBudget(), liftsXMLLimits: Bool = false) {
        self.maximumDepth = maximumDepth
        self.maximumElementCount = maximumElementCount
        self.maximumInstanceCount = maximumInstanceCount
        self.maximumEmbeddedPixelCount = maximumEmbeddedPixelCount
        self.filterBudget = filterBudget
        self.liftsXMLLimits = liftsXMLLimits
    }

    /// `data` made safe, as UTF-8 with an XML declaration.
    ///
    /// - Throws: ``SVGSanitizingError`` when the document is refused.
    public func sanitized(_ data: Data) throws(SVGSanitizingError) -> Data {
        let bytes = [UInt8](data)
        try Self.checkEncoding(bytes)
        try Self.checkDeclarations(bytes)
        let writer = SVGEventWriter(sanitizer: self)
        let failure = XMLEventReader.read(bytes, into: writer, liftsLimits: liftsXMLLimits)
        if let refused = writer.failure { throw refused }
        if let failure {
            let detail = "XML error \(failure.code) at line \(failure.line)"
            // Whether the limits refused it: read again without them, events ignored (only a refused document costs this).
            if !liftsXMLLimits, XMLEventReader.read(bytes, into: XMLEventReader.Ignoring(), liftsLimits: true) == nil {
                throw .overXMLLimits(detail)
            }
            throw .malformed(detail)
        }
        guard writer.sawRoot else { throw .notSVG("the document has no root element") }
        guard let drawn = writer.instances.total(limit: maximumInstanceCount), drawn <= maximumInstanceCount else {
            throw .tooManyInstances(limit: maximumInstanceCount)
        }
        return Data(writer.output.utf8)
    }

    /// Whether `data` looks like an SVG document: after an optional byte
    /// order mark, whitespace, the XML declaration, comments, processing
    /// instructions and a `DOCTYPE`, the first element is `svg` (with any
    /// prefix), within the first 64 KiB. The `Content-Type` is not asked.
    public static func looksLikeSVG(_ data: Data) -> Bool {
        let bytes = [UInt8](data.prefix(65_536))
        var index = bytes.starts(with: [0xEF, 0xBB, 0xBF]) ? 3 : 0
        func starts(with text: String, caseInsensitive: Bool = false) -> Bool {
            let expected = Array(text.utf8)
            guard index + expected.count <= bytes.count else { return false }
            return zip(bytes[index..<(index + expected.count)], expected).allSatisfy { actual, wanted in
                caseInsensitive ? lowercased(actual) == wanted : actual == wanted
            }
        }
        while index < bytes.count {
            if isWhitespace(bytes[index]) {
                index += 1
            } else if starts(with: "<?") {
                guard let end = find(Array("?>".utf8), in: bytes, from: index + 2) else { return false }
                index = end
            } else if starts(with: "<!--") {
                guard let end = find(Array("-->".utf8), in: bytes, from: index + 4) else { return false }
                index = end
            } else if starts(with: "<!doctype", caseInsensitive: true) {
                guard let end = doctypeEnd(bytes, from: index + 9) else { return false }
                index = end
            } else if starts(with: "<") {
                var end = index + 1
                while end < bytes.count, isNameByte(bytes[end]) { end += 1 }
                let name = bytes[(index + 1)..<end]
                let local = name.lastIndex(of: UInt8(ascii: ":")).map { name[($0 + 1)...] } ?? name
                guard Array(local) == Array("svg".utf8), end < bytes.count else { return false }
                return isWhitespace(bytes[end]) || bytes[end] == UInt8(ascii: ">") || bytes[end] == UInt8(ascii: "/")
            } else {
                return false
            }
        }
        return false
    }

    // MARK: Checks before parsing

    /// Refuses byte order marks and declarations of encodings other than
    /// UTF-8, ASCII and ISO-8859-1, and NUL bytes: in any other encoding a
    /// declaration could be spelled so that ``checkDeclarations(_:)`` does
    /// not see it.
    static func checkEncoding(_ bytes: [UInt8]) throws(SVGSanitizingError) {
        if bytes.starts(with: [0xFE, 0xFF]) || bytes.starts(with: [0xFF, 0xFE]) || bytes.starts(with: [0, 0, 0xFE, 0xFF]) {
            throw .unsupportedEncoding("a UTF-16 or UTF-32 byte order mark")
        }
        if bytes.contains(0) { throw .unsupportedEncoding("a NUL byte") }
        let start = bytes.starts(with: [0xEF, 0xBB, 0xBF]) ? 3 : 0
        guard bytes[start...].starts(with: Array("<?xml".utf8)),
              let end = find(Array("?>".utf8), in: bytes, from: start) else { return }
        let declaration = String(decoding: bytes[start..<end], as: UTF8.self)
        guard let range = declaration.range(of: "encoding") else { return }
        let rest = declaration[range.upperBound...].drop { $0 == " " || $0 == "=" || $0 == "\t" || $0 == "\n" || $0 == "\r" }
        guard let quote = rest.first, quote == "\"" || quote == "'" else { return }
        let name = rest.dropFirst().prefix { $0 != quote }.lowercased()
        let allowed: Set<String> = ["utf-8", "utf8", "us-ascii", "ascii", "iso-8859-1", "latin1", "iso_8859-1"]
        guard allowed.contains(name) else { throw .unsupportedEncoding("the declared encoding \"\(name.prefix(40))\"") }
    }

    /// Refuses declared markup: `<!ENTITY`, `<!ELEMENT`, `<!ATTLIST`,
    /// `<!NOTATION` anywhere (in any case), and a `DOCTYPE` with an
    /// internal subset.
    static func checkDeclarations(_ bytes: [UInt8]) throws(SVGSanitizingError) {
        let lowered = bytes.map(lowercased)
        for keyword in ["<!entity", "<!element", "<!attlist", "<!notation"] where find(Array(keyword.utf8), in: lowered, from: 0) != nil {
            throw .markupDeclaration("\(keyword.dropFirst(2).uppercased()) declaration")
        }
        var from = 0
        while let start = find(Array("<!doctype".utf8), in: lowered, from: from) {
            var quote: UInt8?
            var index = start
            while index < bytes.count {
                let byte = bytes[index]
                if let open = quote {
                    if byte == open { quote = nil }
                } else if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "'") {
                    quote = byte
                } else if byte == UInt8(ascii: "[") {
                    throw .markupDeclaration("a DOCTYPE with an internal subset")
                } else if byte == UInt8(ascii: ">") {
                    break
                }
                index += 1
            }
            from = index
        }
    }

    // MARK: Attribute rules

    /// Whether an `href` may stay: a fragment, or an embedded PNG, JPEG, GIF
    /// or WebP that opens within `budget` pixels (which it then spends).
    func allowsReference(_ value: String, budget: inout Int) -> Bool {
        let address = value.trimmingCharacters(in: .whitespacesAndNewlines)
        if address.hasPrefix("#") { return true }
        let lowered = address.prefix(64).lowercased()
        guard let prefix = ["png", "jpeg", "gif", "webp"].lazy.map({ "data:image/\($0);base64," }).first(where: lowered.hasPrefix) else {
            return false
        }
        let payload = address.dropFirst(prefix.count)
        guard payload.unicodeScalars.allSatisfy({ $0.isASCII && (Self.base64Scalars.contains($0) || $0.properties.isWhitespace) }),
              let image = Data(base64Encoded: String(payload), options: .ignoreUnknownCharacters),
              let info = try? ImageDecoders.info(for: image),
              [ImageFormat.png, .jpeg, .gif, .webp].contains(info.format) else { return false }
        let pixels = info.width.multipliedReportingOverflow(by: info.height)
        let total = pixels.partialValue.multipliedReportingOverflow(by: max(1, info.frameCount))
        guard !pixels.overflow, !total.overflow, total.partialValue <= budget else { return false }
        budget -= total.partialValue
        return true
    }

    /// The characters of base64's alphabet, with padding.
    private static let base64Scalars = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=".unicodeScalars)

    // MARK: Bytes

    /// The index after the first `needle` in `bytes` from `start`, or `nil`.
    static func find(_ needle: [UInt8], in bytes: [UInt8], from start: Int) -> Int? {
        guard !needle.isEmpty, bytes.count >= needle.count, start <= bytes.count - needle.count else { return nil }
        var index = start
        while index <= bytes.count - needle.count {
            if bytes[index] == needle[0], bytes[index..<(index + needle.count)].elementsEqual(needle) { return index + needle.count }
            index += 1
        }
        return nil
    }

    /// The index after a `DOCTYPE` whose text after the keyword starts at
    /// `start`, past quoted strings, an internal subset and its comments;
    /// `nil` when it does not end within `bytes`.
    private static func doctypeEnd(_ bytes: [UInt8], from start: Int) -> Int? {
        var index = start
        var quote: UInt8?
        var subset = false
        while index < bytes.count {
            let byte = bytes[index]
            if let open = quote {
                if byte == open { quote = nil }
            } else if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "'") {
                quote = byte
            } else if subset, bytes[index...].starts(with: Array("<!--".utf8)) {
                guard let end = find(Array("-->".utf8), in: bytes, from: index + 4) else { return nil }
                index = end
                continue
            } else if byte == UInt8(ascii: "[") {
                subset = true
            } else if byte == UInt8(ascii: "]") {
                subset = false
            } else if byte == UInt8(ascii: ">"), !subset {
                return index + 1
            }
            index += 1
        }
        return nil
    }

    /// An ASCII letter lower-cased; any other byte unchanged.
    private static func lowercased(_ byte: UInt8) -> UInt8 {
        (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) ? byte + 32 : byte
    }

    /// XML's whitespace: space, tab, carriage return, line feed.
    private static func isWhitespace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x09 || byte == 0x0D || byte == 0x0A
    }

    /// Whether `byte` can be part of an element's qualified name (ASCII
    /// letters, digits, `-`, `_`, `.`, `:`, and anything beyond ASCII).
    private static func isNameByte(_ byte: UInt8) -> Bool {
        byte >= 0x80 || (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(lowercased(byte))
            || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_")
            || byte == UInt8(ascii: ".") || byte == UInt8(ascii: ":")
    }
}
#endif
