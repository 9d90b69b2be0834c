#if Server && os(Linux)
import Foundation
import Imago
import ImagoServer
import Testing

/// The result store's key is made of `ProcessingOptions.canonicalFields`:
/// every option, written the same way on every replica. A property added
/// to the options (or to one of their parts) without a place there would
/// let two different renders share one stored object: these tests fail first.
@Suite struct CanonicalFieldsTests {
    /// The stored properties of `value`, by name.
    static func labels(_ value: Any) -> [String] {
        Mirror(reflecting: value).children.compactMap(\.label)
    }

    @Test func everyPropertyHasAField() {
        let names = ProcessingOptions().canonicalFields.map(\.name)
        #expect(Set(names).count == names.count, "a field is written twice")
        #expect(names.sorted() == Self.labels(ProcessingOptions()).sorted())
    }

    /// The parts are written as comma-separated values, one per property.
    @Test func everyPartWritesEachOfItsProperties() throws {
        var options = ProcessingOptions()
        options.trim = .init(threshold: 1, color: .white, equalHorizontal: true, equalVertical: true)
        options.crop = .init(width: 1, height: 2, gravity: .compass(.north), offset: .init(x: 1, y: 2))
        options.watermark = .init(opacity: 1, gravity: .compass(.east), tiles: true, offset: .init(x: 3, y: 4), scale: 0.5)
        options.extend = .init(gravity: .compass(.south), offset: .init(x: 5, y: 6))
        options.padding = .init(top: 1, right: 2, bottom: 3, left: 4)
        let fields = Dictionary(uniqueKeysWithValues: options.canonicalFields.map { ($0.name, $0.value) })
        // An offset is written as its two values, inside the part that holds it.
        let offsetWidth = Self.labels(ProcessingOptions.Offset.zero).count
        #expect(offsetWidth == 2)
        let parts: [(String, Any)] = [("trim", try #require(options.trim)), ("crop", try #require(options.crop)),
                                      ("watermark", try #require(options.watermark)), ("extend", try #require(options.extend)),
                                      ("padding", options.padding)]
        for (name, part) in parts {
            let properties = Self.labels(part)
            let offsets = properties.filter { $0 == "offset" }.count
            let written = try #require(fields[name]).split(separator: ",", omittingEmptySubsequences: false).count
            #expect(written == properties.count + offsets * (offsetWidth - 1), "\(name): \(properties)")
        }
    }

    /// Options that render differently have different fields; the parts of
    /// the path that only shape headers are in them too (the engine clears
    /// those before it keys a render).
    @Test func differentOptionsHaveDifferentFields() throws {
        var base = ProcessingOptions()
        base.width = 100
        var changes: [(String, (inout ProcessingOptions) -> Void)] = [
            ("width", { $0.width = 101 }), ("sharpen", { $0.sharpen = 0.5 }), ("zoom", { $0.zoomX = 2 }),
            ("formatQuality", { $0.formatQuality = [.webp: 70] }), ("skip", { $0.skipProcessingFormats = [.gif] }),
            ("background", { $0.background = ImageColor(red: 1, green: 2, blue: 3) }), ("cache buster", { $0.cacheBuster = "x" }),
            ("metadata", { $0.stripsMetadata = false }), ("watermark", { $0.watermark = .init(opacity: 0.5) }),
        ]
        changes.append(("watermark scale", { $0.watermark = .init(opacity: 0.5, scale: 0.2) }))
        var seen = Set([Self.text(base)])
        for (name, change) in changes {
            var options = base
            change(&options)
            #expect(seen.insert(Self.text(options)).inserted, "\(name) did not change the fields")
        }
    }

    /// Sets and dictionaries are written sorted: the same on every replica
    /// (whose hash seeds differ) and for every insertion order.
    @Test func setsAndDictionariesAreSorted() {
        var a = ProcessingOptions(), b = ProcessingOptions()
        a.formatQuality = [.webp: 70, .avif: 50, .jpeg: 80]
        b.formatQuality = [.jpeg: 80, .webp: 70, .avif: 50]
        a.skipProcessingFormats = [.gif, .png, .webp]
        b.skipProcessingFormats = [.webp, .gif, .png]
        #expect(Self.text(a) == Self.text(b))
        #expect(a.canonicalFields.first { $0.name == "formatQuality" }?.value == "avif:50,jpeg:80,webp:70")
    }

    static func text(_ options: ProcessingOptions) -> String {
        options.canonicalFields.map { "\($0.name)=\($0.value)" }.joined(separator: "\n")
    }
}
#endif
