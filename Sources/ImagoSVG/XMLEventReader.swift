#if Server
import CXML2

/// What ``XMLEventReader`` reports, in document order. Comments,
/// processing instructions and the `DOCTYPE` are not reported.
protocol XMLEventHandler: AnyObject {
    /// Whether the reader should stop now (the handler has refused the document).
    var wantsToStop: Bool { get }
    /// An element starts: its qualified name, and its attributes by
    /// qualified name (namespace declarations as `xmlns` and `xmlns:prefix`).
    func startElement(_ name: String, attributes: [String: String])
    /// An element ends.
    func endElement(_ name: String)
    /// Text, with character and predefined entity references replaced (CDATA sections too).
    func text(_ text: String)
    /// A markup declaration (`ENTITY`, `ELEMENT`, `ATTLIST`, `NOTATION`), described.
    func declaration(_ description: String)
    /// A reference to an entity that is not predefined.
    func undefinedEntity(_ name: String)
}

/// Reads an XML document with libxml2's SAX2 parser and reports its events
/// to an ``XMLEventHandler``. Nothing is loaded from outside the bytes: no
/// network (`XML_PARSE_NONET`), no DTD, no entity but XML's five and
/// character references (any other is reported and refused); libxml2's
/// default limits for huge documents hold (documents and attribute values
/// of at most 10 MB, names of at most 50,000 bytes) unless the caller lifts
/// them (`XML_PARSE_HUGE`: 1 GB each).
///
/// libxml2 directly rather than FoundationXML's `XMLParser`, which leaks a
/// string with each parse error and crashes on a processing instruction
/// without data (a NULL pointer to `strlen`).
enum XMLEventReader {
    /// Why libxml2 refused the document: its error code and the line.
    struct Failure: Error, Equatable {
        let code: Int32
        let line: Int32
    }

    /// Reads `bytes` to their end or until `handler` wants to stop, with
    /// libxml2's limits for huge documents off when `liftsLimits`; the
    /// first error libxml2 reports (a warning is not one), if any.
    static func read(_ bytes: [UInt8], into handler: some XMLEventHandler, liftsLimits: Bool = false) -> Failure? {
        _ = initialized
        let reading = Reading(handler)
        var callbacks = makeCallbacks()
        let unmanaged = Unmanaged.passRetained(reading)
        defer { unmanaged.release() }
        guard let parser = xmlCreatePushParserCtxt(&callbacks, unmanaged.toOpaque(), nil, 0, nil) else {
            return Failure(code: Int32(XML_ERR_NO_MEMORY.rawValue), line: 0)
        }
        defer { xmlFreeParserCtxt(parser) }
        reading.parser = parser
        // Entities replaced (so `&amp;` in an attribute is `&`, not `&#38;`): with
        // declarations refused, only XML's own five and character references exist.
        let huge = liftsLimits ? XML_PARSE_HUGE.rawValue : 0
        _ = xmlCtxtUseOptions(parser, Int32(XML_PARSE_NONET.rawValue | XML_PARSE_NOENT.rawValue | huge))
        let finished = bytes.withUnsafeBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) { characters in
                xmlParseChunk(parser, characters.baseAddress, Int32(clamping: characters.count), 1)
            }
        }
        // Every error reaches `serror` first; the chunk's result is a last resort.
        if let failure = reading.failure { return failure }
        if reading.stopped || finished == 0 { return nil }
        return Failure(code: finished, line: 0)
    }

    /// A handler that takes every event and asks nothing: for a document
    /// read only for libxml2's verdict.
    final class Ignoring: XMLEventHandler {
        var wantsToStop: Bool { false }
        func startElement(_ name: String, attributes: [String: String]) {}
        func endElement(_ name: String) {}
        func text(_ text: String) {}
        func declaration(_ description: String) {}
        func undefinedEntity(_ name: String) {}
    }

    /// libxml2's global state, set up once (its documentation asks for it
    /// before the parser is used from several threads).
    private static let initialized: Void = xmlInitParser()

    /// One document being read: the handler, the parser, the first error.
    private final class Reading {
        let handler: any XMLEventHandler
        var parser: xmlParserCtxtPtr?
        var failure: Failure?
        var stopped = false

        init(_ handler: any XMLEventHandler) {
            self.handler = handler
        }

        static func from(_ context: UnsafeMutableRawPointer?) -> Reading {
            Unmanaged<Reading>.fromOpaque(context!).takeUnretainedValue()
        }

        /// Stops the parser when the handler asks to.
        func stopIfAsked() {
            guard !stopped, handler.wantsToStop, let parser else { return }
            stopped = true
            xmlStopParser(parser)
        }
    }

    /// The SAX2 callbacks: elements, text, declarations, entities and errors;
    /// everything else (comments, processing instructions, the DOCTYPE) is
    /// not set, so libxml2 reads it and reports nothing.
    private static func makeCallbacks() -> xmlSAXHandler {
        var callbacks = xmlSAXHandler()
        callbacks.initialized = XML_SAX2_MAGIC
        callbacks.startElementNs = { context, localName, prefix, _, namespaceCount, namespaces, attributeCount, _, attributes in
            let reading = XMLEventReader.Reading.from(context)
            var values: [String: String] = [:]
            for index in 0..<Int(max(0, namespaceCount)) {
                let declared = namespaces?[2 * index].map { "xmlns:" + String(cString: $0) } ?? "xmlns"
                values[declared] = namespaces?[2 * index + 1].map { String(cString: $0) } ?? ""
            }
            // Five pointers each: local name, prefix, URI, the value's start and end.
            for index in 0..<Int(max(0, attributeCount)) {
                guard let attributes, let local = attributes[5 * index],
                      let start = attributes[5 * index + 3], let end = attributes[5 * index + 4] else { continue }
                let value = String(decoding: UnsafeBufferPointer(start: start, count: max(0, end - start)), as: UTF8.self)
                values[XMLEventReader.qualifiedName(local, prefix: attributes[5 * index + 1])] = value
            }
            reading.handler.startElement(XMLEventReader.qualifiedName(localName, prefix: prefix), attributes: values)
            reading.stopIfAsked()
        }
        callbacks.endElementNs = { context, localName, prefix, _ in
            let reading = XMLEventReader.Reading.from(context)
            reading.handler.endElement(XMLEventReader.qualifiedName(localName, prefix: prefix))
            reading.stopIfAsked()
        }
        callbacks.characters = XMLEventReader.text
        callbacks.ignorableWhitespace = XMLEventReader.text
        callbacks.cdataBlock = XMLEventReader.text
        callbacks.getEntity = { context, name in
            let reading = XMLEventReader.Reading.from(context)
            reading.handler.undefinedEntity(name.map { String(cString: $0) } ?? "")
            reading.stopIfAsked()
            return nil
        }
        callbacks.entityDecl = { context, name, _, _, _, _ in XMLEventReader.declared("ENTITY", name, context) }
        callbacks.unparsedEntityDecl = { context, name, _, _, _ in XMLEventReader.declared("ENTITY", name, context) }
        callbacks.elementDecl = { context, name, _, _ in XMLEventReader.declared("ELEMENT", name, context) }
        callbacks.attributeDecl = { context, element, _, _, _, _, tree in
            xmlFreeEnumeration(tree)
            XMLEventReader.declared("ATTLIST", element, context)
        }
        callbacks.notationDecl = { context, name, _, _ in XMLEventReader.declared("NOTATION", name, context) }
        callbacks.serror = { context, error in
            guard let context, let error, error.pointee.level.rawValue >= XML_ERR_ERROR.rawValue else { return }
            let reading = XMLEventReader.Reading.from(context)
            guard reading.failure == nil, !reading.stopped else { return }
            reading.failure = Failure(code: error.pointee.code, line: error.pointee.line)
            reading.stopped = true
            if let parser = reading.parser { xmlStopParser(parser) }
        }
        return callbacks
    }

    /// Text, CDATA and whitespace: UTF-8 bytes with their length.
    private static let text: charactersSAXFunc = { context, characters, length in
        let reading = XMLEventReader.Reading.from(context)
        guard let characters, length > 0 else { return }
        reading.handler.text(String(decoding: UnsafeBufferPointer(start: characters, count: Int(length)), as: UTF8.self))
        reading.stopIfAsked()
    }

    /// A declaration reported to the handler.
    private static func declared(_ kind: String, _ name: UnsafePointer<xmlChar>?, _ context: UnsafeMutableRawPointer?) {
        let reading = Reading.from(context)
        reading.handler.declaration(kind + " " + (name.map { String(cString: $0) } ?? "").prefix(40))
        reading.stopIfAsked()
    }

    /// `prefix:local`, or `local` without a prefix.
    private static func qualifiedName(_ local: UnsafePointer<xmlChar>?, prefix: UnsafePointer<xmlChar>?) -> String {
        let name = local.map { String(cString: $0) } ?? ""
        guard let prefix else { return name }
        return String(cString: prefix) + ":" + name
    }
}
#endif
