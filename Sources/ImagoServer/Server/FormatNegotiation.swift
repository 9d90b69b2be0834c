#if Server
/// Which output formats the server picks from the client's `Accept`, as
/// imgproxy's `IMGPROXY_AUTO_*` and `IMGPROXY_ENFORCE_*` settings do.
///
/// - An *automatic* format is used when the path names no format and the
///   client accepts it.
/// - An *enforced* format is used when the client accepts it even when the
///   path names another format.
///
/// Among several, JPEG XL is preferred to AVIF, and AVIF to WebP (as imgproxy). Every answer whose format
/// could depend on `Accept` says `Vary: Accept`, and the format chosen is
/// part of the output's cache key and ETag.
///
/// ```swift
/// configuration.formatNegotiation = FormatNegotiation(automatic: [.avif, .webp])
/// ```
public struct FormatNegotiation: Sendable, Hashable {
    /// Formats used when the path names none and the client accepts them.
    public var automatic: Set<ProcessingOptions.OutputFormat>
    /// Formats used whenever the client accepts them, over the path's format.
    public var enforced: Set<ProcessingOptions.OutputFormat>

    /// Formats in the order they are preferred, as imgproxy prefers them.
    static let preference: [ProcessingOptions.OutputFormat] = [.jxl, .avif, .webp]

    /// Creates a negotiation; by default none (the path or the source decides).
    public init(automatic: Set<ProcessingOptions.OutputFormat> = [], enforced: Set<ProcessingOptions.OutputFormat> = []) {
        self.automatic = automatic
        self.enforced = enforced
    }

    /// The format for a path that names `requested` (or none), for a
    /// client that sent `accept`; `nil` when the source's format decides.
    ///
    /// - Parameter animated: Whether the choice is for an animated source:
    ///   then formats the server writes no animations in (AVIF, JPEG XL) are never
    ///   picked, as imgproxy does.
    /// - Returns: The format, and whether the choice depended on `Accept`.
    public func format(requested: ProcessingOptions.OutputFormat?, accept: String?, animated: Bool = false)
        -> (format: ProcessingOptions.OutputFormat?, variesWithAccept: Bool) {
        var candidates = requested == nil ? automatic.union(enforced) : enforced
        if animated { candidates = candidates.filter(\.isAnimatable) }
        guard !candidates.isEmpty else { return (requested, false) }
        let accepted = Self.preference.first { candidates.contains($0) && ProcessingOptions.accepts($0.mimeType, in: accept) }
        return (accepted ?? requested, true)
    }
}
#endif
