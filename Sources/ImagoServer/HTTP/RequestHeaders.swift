#if Server
/// The request headers the server reads, by lower-cased name; a field sent
/// on several lines is one value, its lines joined with `, `.
struct RequestHeaders: Sendable {
    private var values: [String: String]

    /// Creates the headers from (name, value) pairs.
    init(_ fields: some Sequence<(name: String, value: String)>) {
        var values: [String: String] = [:]
        for (name, value) in fields {
            let key = name.lowercased()
            values[key] = values[key].map { $0 + ", " + value } ?? value
        }
        self.values = values
    }

    /// The value of `name` (any case), or `nil` when the request has none.
    subscript(_ name: String) -> String? { values[name.lowercased()] }
}
#endif
