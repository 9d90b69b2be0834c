/// An error reported by one of the C codec libraries: the library's own
/// status code and message, mapped in one place per library.
public struct CodecError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The library that reported the error, such as `"libspng"`.
    public let library: String
    /// The library's status code.
    public let code: Int
    /// The library's message for that code.
    public let message: String

    /// Creates a codec error.
    public init(library: String, code: Int, message: String) {
        self.library = library
        self.code = code
        self.message = message
    }

    public var description: String { "\(library) error \(code): \(message)" }
}
