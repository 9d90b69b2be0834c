#if Server && os(Linux)
import Foundation
import Imago
import ImagoServer
import Testing

/// The option table is where each imgproxy option is declared once: its
/// names, arguments, reader, writer and an example. These tests are made
/// from it, so a row added there is tested here.
@Suite struct OptionTableTests {
    static let presets = try! ImageServerPresets(parsing: ["thumb=rs:fill:64:64/q:70"])

    static func parse(_ segment: String) throws -> ProcessingOptions {
        try ImageServerPath(parsing: "/insecure/\(segment)/plain/http%3A%2F%2Fx%2Fa.png", presets: presets).options
    }

    static let rows = ProcessingOptionSpec.table.map { ($0.names, $0.example) }

    /// Each example, under each of its option's names, sets something, and
    /// the written path reads back as the same options.
    @Test(arguments: rows)
    func theExampleReadsWritesAndReadsBackTheSame(names: [String], example: String) throws {
        let arguments = example.split(separator: ":", maxSplits: 1).dropFirst().first.map { ":" + $0 } ?? ""
        for name in names {
            let options = try Self.parse(name + arguments)
            #expect(options != ProcessingOptions(), "\(name)\(arguments) set nothing")
            let written = ImageServerPath(source: URL(string: "http://x/a.png")!, options: options).path(signedWith: nil)
            let reread = try ImageServerPath(parsing: written, presets: Self.presets).options
            #expect(reread == options, "\(name)\(arguments) was written as \(written)")
        }
    }

    /// No name is taken twice; every row has a full name and an example of itself.
    @Test func namesAreUniqueAndExamplesNameTheirRow() {
        let names = ProcessingOptionSpec.table.flatMap(\.names)
        #expect(Set(names).count == names.count)
        for row in ProcessingOptionSpec.table {
            #expect(row.names.contains(String(row.example.prefix { $0 != ":" })), "\(row.example)")
            if let arity = row.arity {
                let count = row.example.split(separator: ":", omittingEmptySubsequences: false).count - 1
                #expect(arity.contains(count), "\(row.example) has \(count) arguments, outside \(arity)")
            }
        }
    }

    /// One argument too many is refused with the option's name and its arity.
    @Test(arguments: ProcessingOptionSpec.table.filter { $0.arity != nil }.map { ($0.names[0], $0.arity!.upperBound) })
    func tooManyArgumentsAreRefused(name: String, most: Int) {
        let segment = name + String(repeating: ":1", count: most + 1)
        #expect(throws: ImageServerError.self) { try Self.parse(segment) }
    }

    /// The security options are the ones the table marks: a path that sets
    /// one is refused where they are not allowed.
    @Test func securityOptionsComeFromTheTable() throws {
        let marked = ProcessingOptionSpec.table.filter(\.isSecurityOption)
        #expect(marked.map { $0.names[0] } == ["max_result_dimension", "max_src_resolution", "max_src_file_size",
                                               "max_animation_frames", "max_animation_frame_resolution"])
        for row in marked {
            #expect(ProcessingOptionSpec.securityOptions(in: try Self.parse(row.example)) == [row.names[0]])
        }
        #expect(ProcessingOptionSpec.securityOptions(in: try Self.parse("rs:fit:10:10")) == [])
        // A server's own defaults are not the path's: only what differs from them counts.
        let defaults = try Self.parse("msr:2")
        #expect(ProcessingOptionSpec.securityOptions(in: try Self.parse("msr:2/w:10"), beyond: defaults) == [])
        #expect(ProcessingOptionSpec.securityOptions(in: try Self.parse("msr:3"), beyond: defaults) == ["max_src_resolution"])
    }
}
#endif
