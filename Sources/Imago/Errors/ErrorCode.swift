/// A code that names what failed in one layer: for example
/// ``DataLoadingError/Code`` is `ErrorCode<DataLoadingError>`.
///
/// Codes compare by name and print as their name (`timedOut`). They are
/// values, not enum cases, so a later release can add codes without
/// breaking a user's exhaustive `switch`: compare with `==` or match with
/// `~=` (see ``LayeredError``).
public struct ErrorCode<Layer>: Hashable, Sendable, CustomStringConvertible {
    /// The code's name, as it appears in messages and in `imago --json`.
    public let name: String

    /// A code named `name`; each layer declares its own as static members.
    package init(_ name: String) {
        self.name = name
    }

    public var description: String { name }
}
