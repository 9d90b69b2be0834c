#if Server
/// Named sets of processing options that paths use with `preset:NAME` (or
/// `pr:NAME`), as imgproxy's presets: a preset called `default` applies to
/// every path before its own options, and in ``onlyPresets`` mode a path's
/// first segment lists presets (`/SIGNATURE/thumb:sharp/plain/...`) and
/// nothing else may set an option.
///
/// ```swift
/// let presets = try ImageServerPresets(["thumb": "rs:fill:200:200/q:70", "default": "el:0"])
/// configuration.presets = presets
/// // "/SIGNATURE/pr:thumb/plain/https%3A%2F%2Fimages.example%2Fcat.jpg"
/// ```
public struct ImageServerPresets: Sendable, Hashable {
    /// Each preset's options, as segments (`rs:fill:200:200`).
    let definitions: [String: [Substring]]
    /// Whether a path's options are only a list of presets.
    public var onlyPresets: Bool

    /// No presets.
    public static let none = ImageServerPresets(checked: [:], onlyPresets: false)

    /// Presets from their options, written as in a path (`rs:fill:200:200/q:70`).
    ///
    /// - Throws: ``ImageServerError`` (`bad_options`) naming the preset
    ///   whose options do not parse, or that uses a preset not defined.
    public init(_ definitions: [String: String], onlyPresets: Bool = false) throws(ImageServerError) {
        var segments: [String: [Substring]] = [:]
        for (name, options) in definitions {
            guard !name.isEmpty, !name.contains(":"), !name.contains("/") else {
                throw ImageServerError(.badOptions, "a preset name must not be empty or hold : or /, not \"\(name.prefix(40))\"")
            }
            segments[name] = options.split(separator: "/", omittingEmptySubsequences: true)
        }
        self.init(checked: segments, onlyPresets: onlyPresets)
        // Every preset must parse on its own, with the others defined.
        for name in segments.keys.sorted() {
            var options = ProcessingOptions()
            do {
                try ImageServerPath.applyPreset(name, to: &options, presets: self, used: [])
            } catch {
                throw ImageServerError(.badOptions, "preset \(name): \(error.message)")
            }
        }
    }

    /// Presets parsed from `NAME=OPTIONS` strings, as `--preset` takes them.
    public init(parsing definitions: [String], onlyPresets: Bool = false) throws(ImageServerError) {
        var named: [String: String] = [:]
        for definition in definitions {
            guard let equals = definition.firstIndex(of: "=") else {
                throw ImageServerError(.badOptions, "a preset is NAME=OPTIONS, not \"\(definition.prefix(60))\"")
            }
            // Spaces around the name and the options are dropped; options there must be (imgproxy refuses `NAME=`).
            let options = definition[definition.index(after: equals)...].trimmingCharacters(in: .whitespaces)
            guard !options.isEmpty, !options.contains("=") else {
                throw ImageServerError(.badOptions, "a preset is NAME=OPTIONS with options, not \"\(definition.prefix(60))\"")
            }
            named[definition[..<equals].trimmingCharacters(in: .whitespaces)] = options
        }
        try self.init(named, onlyPresets: onlyPresets)
    }

    private init(checked definitions: [String: [Substring]], onlyPresets: Bool) {
        self.definitions = definitions
        self.onlyPresets = onlyPresets
    }

    /// The names of the presets, sorted.
    public var names: [String] { definitions.keys.sorted() }

    /// The presets that set a security option (`max_result_dimension`; the
    /// option table's security options),
    /// sorted: a server that does not allow security options refuses them
    /// at start rather than answering 403 to every URL that uses them.
    public var namesSettingSecurityOptions: [String] {
        names.filter { name in
            var options = ProcessingOptions()
            return (try? ImageServerPath.applyPreset(name, to: &options, presets: self, used: [])) != nil
                && !ProcessingOptionSpec.securityOptions(in: options).isEmpty
        }
    }
}
#endif
