#if Server
import Foundation
import Imago

/// The arguments of one `name:arg:arg` path segment, with what presets need.
struct OptionArguments {
    /// The option's name as the path spells it.
    let name: Substring
    /// The arguments after it; empty ones included.
    let values: [Substring]
    /// The server's presets, for `preset`.
    let presets: ImageServerPresets
    /// The presets being applied, innermost last (a preset that uses itself stops).
    let used: [String]

    var count: Int { values.count }
    subscript(index: Int) -> Substring { values[index] }

    /// Argument `index`, or `nil` when it is missing or empty (empty keeps the current value).
    func argument(_ index: Int) -> Substring? {
        index < values.count && !values[index].isEmpty ? values[index] : nil
    }
}

/// One of imgproxy's processing options: its names, how many arguments it
/// takes, whether it is a security option, how its arguments set
/// ``ProcessingOptions``, how the options write it back into a path, and
/// an example. The parser, the path writer, the security check of paths
/// and presets, and the round-trip test all read ``ProcessingOptionSpec/table``.
///
/// Adding an imgproxy option is one row here (plus a field of
/// ``ProcessingOptions`` and the step that uses it).
package struct ProcessingOptionSpec: Sendable {
    typealias Reader = @Sendable (inout ProcessingOptions, OptionArguments) throws(ImageServerError) -> Void
    typealias Writer = @Sendable (ProcessingOptions) -> String?

    /// The full name first, then the short ones.
    package let names: [String]
    /// How many arguments it takes; `nil` when the reader checks.
    package let arity: ClosedRange<Int>?
    /// Whether a path may set it only when the server allows security options.
    package let isSecurityOption: Bool
    /// Sets the options from the arguments.
    let read: Reader
    /// The segment that gives the options' value back, such as
    /// `rs:fill:300:200:0`; `nil` at the default. `nil` for an option that
    /// another one writes (`width` is written by `rs`).
    let write: Writer?
    /// A segment that sets it, for the documentation and the round-trip test.
    package let example: String

    init(_ names: [String], arity: ClosedRange<Int>?, security: Bool = false, example: String,
         read: @escaping Reader, write: Writer? = nil) {
        self.names = names
        self.arity = arity
        self.isSecurityOption = security
        self.read = read
        self.write = write
        self.example = example
    }

    /// The options by every name they answer to.
    static let byName: [String: ProcessingOptionSpec] = {
        var byName: [String: ProcessingOptionSpec] = [:]
        for spec in table {
            for name in spec.names {
                precondition(byName[name] == nil, "two processing options are named \(name)")
                byName[name] = spec
            }
        }
        return byName
    }()

    /// The security options `options` sets beyond `defaults` (a server's
    /// own), by their full names.
    package static func securityOptions(in options: ProcessingOptions, beyond defaults: ProcessingOptions = ProcessingOptions()) -> [String] {
        table.filter { spec in
            guard spec.isSecurityOption, let written = spec.write?(options) else { return false }
            return written != spec.write?(defaults)
        }.map { $0.names[0] }
    }

    /// Applies one `name:arg:arg` segment.
    static func apply(_ segment: Substring, to options: inout ProcessingOptions, presets: ImageServerPresets, used: [String]) throws(ImageServerError) {
        let parts = segment.split(separator: ":", omittingEmptySubsequences: false)
        let name = parts[0]
        guard let spec = byName[String(name)] else { throw OptionValue.bad("unknown option \"\(name.prefix(40))\"") }
        let arguments = OptionArguments(name: name, values: Array(parts.dropFirst()), presets: presets, used: used)
        if let arity = spec.arity, !arity.contains(arguments.count) {
            let expected = arity.lowerBound == arity.upperBound ? "\(arity.lowerBound)" : "\(arity.lowerBound) to \(arity.upperBound)"
            throw OptionValue.bad("\(name) takes \(expected) arguments, not \(arguments.count)")
        }
        try spec.read(&options, arguments)
    }

    /// The path segments that give `options` back, in the table's order.
    static func segments(for options: ProcessingOptions) -> [String] {
        table.compactMap { $0.write?(options) }
    }
}
#endif
