import Foundation
import Testing

/// Every Swift snippet in the README and the DocC articles is a region of
/// one of this folder's `*Snippets.swift` files, or of an example app's
/// sources (`Examples/*/Sources`, `Examples/*/Tests`, built and tested in
/// this package through links), which compile (and whose tests run): the
/// docs cannot drift from the API, nor an article from its example, without
/// this failing.
@Suite struct SnippetsMatchTheDocsTests {
    /// The repository's root, four folders above this file.
    static let root = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    /// The files that hold the snippets: every `*Snippets.swift` beside this
    /// one, and every Swift source of the example apps.
    static func snippetFiles() throws -> [URL] {
        let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        return try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted()
            .filter { $0.hasSuffix("Snippets.swift") }
            .map { folder.appendingPathComponent($0) } + exampleSources()
    }

    /// The Swift sources under `Examples/*/Sources` and `Examples/*/Tests`
    /// (not their manifests, nor what a build of one left in its folder).
    static func exampleSources() throws -> [URL] {
        let examples = root.appendingPathComponent("Examples")
        var found: [URL] = []
        for example in try FileManager.default.contentsOfDirectory(atPath: examples.path).sorted() {
            for part in ["Sources", "Tests"] {
                let folder = examples.appendingPathComponent(example).appendingPathComponent(part)
                guard let files = FileManager.default.enumerator(atPath: folder.path) else { continue }
                for case let file as String in files where file.hasSuffix(".swift") {
                    found.append(folder.appendingPathComponent(file))
                }
            }
        }
        return found.sorted { $0.path < $1.path }
    }

    /// The lines of every snippet file.
    static func snippetLines() throws -> [String] {
        try snippetFiles().flatMap { try String(contentsOf: $0, encoding: .utf8).components(separatedBy: "\n") }
    }

    /// A code block of a document.
    struct Block: CustomStringConvertible {
        let document: String
        let line: Int
        let lines: [String]
        var description: String { "\(document):\(line)" }
    }

    /// The documents with snippets: the README and every DocC article.
    static func documents() throws -> [URL] {
        var found = [root.appendingPathComponent("README.md")]
        let sources = root.appendingPathComponent("Sources")
        for module in try FileManager.default.contentsOfDirectory(atPath: sources.path).sorted() {
            let moduleURL = sources.appendingPathComponent(module)
            for entry in (try? FileManager.default.contentsOfDirectory(atPath: moduleURL.path)) ?? [] where entry.hasSuffix(".docc") {
                let catalog = moduleURL.appendingPathComponent(entry)
                for file in try FileManager.default.contentsOfDirectory(atPath: catalog.path).sorted() where file.hasSuffix(".md") {
                    found.append(catalog.appendingPathComponent(file))
                }
            }
        }
        return found
    }

    /// The ```swift blocks of a document.
    static func swiftBlocks(in url: URL) throws -> [Block] {
        let lines = try String(contentsOf: url, encoding: .utf8).components(separatedBy: "\n")
        var blocks: [Block] = []
        var current: (start: Int, lines: [String])?
        for (index, line) in lines.enumerated() {
            if current == nil, line.trimmingCharacters(in: .whitespaces) == "```swift" {
                current = (index + 1, [])
            } else if let open = current, line.trimmingCharacters(in: .whitespaces) == "```" {
                blocks.append(Block(document: url.lastPathComponent, line: open.start, lines: open.lines))
                current = nil
            } else if current != nil {
                current!.lines.append(line)
            }
        }
        return blocks
    }

    /// The regions of the snippet files, by name, dedented.
    static func regions() throws -> [String: [String]] {
        let lines = try snippetLines()
        var regions: [String: [String]] = [:]
        var current: (name: String, lines: [String])?
        for line in lines {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed.hasPrefix("// snippet: ") {
                let name = String(trimmed.dropFirst("// snippet: ".count))
                #expect(regions[name] == nil, "two snippet regions are named \(name)")
                current = (String(trimmed.dropFirst("// snippet: ".count)), [])
            } else if trimmed == "// end snippet", let open = current {
                regions[open.name] = dedented(open.lines)
                current = nil
            } else if current != nil {
                current!.lines.append(line)
            }
        }
        return regions
    }

    /// The lines without their common indentation, trailing spaces and blank ends.
    static func dedented(_ lines: [String]) -> [String] {
        var lines = lines.map { String($0.reversed().drop { $0 == " " }.reversed()) }
        while lines.first == "" { lines.removeFirst() }
        while lines.last == "" { lines.removeLast() }
        let indent = lines.filter { !$0.isEmpty }.map { $0.prefix { $0 == " " }.count }.min() ?? 0
        return lines.map { $0.isEmpty ? $0 : String($0.dropFirst(indent)) }
    }

    /// A manifest fragment (`// Package.swift`) is checked against the manifest, not compiled.
    static func isManifest(_ block: Block) -> Bool {
        block.lines.first?.trimmingCharacters(in: .whitespaces).hasPrefix("// Package.swift") == true
    }

    @Test func everySwiftSnippetInTheDocsIsACompiledRegion() throws {
        let regions = try Self.regions()
        let imports = Set(try Self.snippetLines().filter { $0.hasPrefix("import ") })
        var used = Set<String>()
        var blocks = 0
        for document in try Self.documents() {
            for block in try Self.swiftBlocks(in: document) where !Self.isManifest(block) {
                blocks += 1
                let code = Self.dedented(block.lines.filter { !$0.hasPrefix("import ") })
                for line in block.lines where line.hasPrefix("import ") {
                    #expect(imports.contains(line), "\(block): \(line) is not imported where the snippets compile")
                }
                let match = regions.first { $0.value == code }
                #expect(match != nil, "\(block) is not a compiled snippet; it reads:\n\(code.joined(separator: "\n"))")
                if let match { used.insert(match.key) }
            }
        }
        #expect(blocks >= 8)
        // No region is left behind by a snippet that changed or went away.
        #expect(Set(regions.keys).subtracting(used).sorted() == [])
    }

    @Test func manifestSnippetsNameTraitsThePackageDeclares() throws {
        let manifest = try String(contentsOf: Self.root.appendingPathComponent("Package.swift"), encoding: .utf8)
        var checked = 0
        for document in try Self.documents() {
            for block in try Self.swiftBlocks(in: document) where Self.isManifest(block) {
                for line in block.lines {
                    guard let range = line.range(of: #"traits: \[([^\]]*)\]"#, options: .regularExpression) else { continue }
                    let names = line[range].split(separator: "\"").enumerated().filter { $0.offset % 2 == 1 }.map(\.element)
                    for name in names {
                        #expect(manifest.contains(".trait(name: \"\(name)\""), "\(block): no trait \(name) in Package.swift")
                        checked += 1
                    }
                }
            }
        }
        #expect(checked >= 1)
    }
}
