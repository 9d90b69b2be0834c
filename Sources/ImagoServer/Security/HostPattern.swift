#if Server
/// A host a source may come from: `images.example.com` (that host only) or
/// `*.example.com` (any host under `example.com`, not `example.com` itself).
/// Compared without regard to case.
public struct HostPattern: Sendable, Hashable, CustomStringConvertible, ExpressibleByStringLiteral {
    /// The pattern as written, lowercased.
    public let pattern: String

    /// Creates a pattern.
    public init(_ pattern: String) {
        self.pattern = pattern.lowercased()
    }

    public init(stringLiteral value: String) {
        self.init(value)
    }

    /// Whether `host` matches.
    public func matches(_ host: String) -> Bool {
        let host = host.lowercased()
        if pattern.hasPrefix("*.") {
            return host.hasSuffix(pattern.dropFirst()) && host.count > pattern.count - 1
        }
        return host == pattern
    }

    public var description: String { pattern }
}
#endif
