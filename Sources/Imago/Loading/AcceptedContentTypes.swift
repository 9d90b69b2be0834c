import Foundation

/// Which `Content-Type` values a response may carry.
///
/// Types compare case-insensitively and ignore parameters such as
/// `; charset=utf-8`.
public struct AcceptedContentTypes: Sendable, Hashable {
    private enum Rule: Hashable {
        case images
        case json
        case anything
        case list([String], allowsMissing: Bool)
    }

    private let rule: Rule

    /// `image/*`, a generic binary type, or no type at all. For the last
    /// two the bytes decide: the decoder sniffs the magic number.
    ///
    /// The generic types are those stores and servers send for bytes of
    /// no known type (``genericBinaryTypes``): `application/octet-stream`,
    /// and `binary/octet-stream`, which S3 gives an object stored without a
    /// type, among them.
    public static let images = AcceptedContentTypes(rule: .images)
    /// `application/json`, `text/json`, `application/*+json`, or no type at
    /// all; also `text/javascript`, `application/javascript` and
    /// `application/x-javascript`, which real JSON APIs send (the iTunes
    /// feeds among them). HTML, plain text and every other type are rejected.
    public static let json = AcceptedContentTypes(rule: .json)
    /// Any type, or none.
    public static let anything = AcceptedContentTypes(rule: .anything)

    /// Exactly the listed types. An entry may end in `/*` to accept a whole family.
    ///
    /// - Parameter allowsMissing: Whether a response without a type is accepted.
    public static func only(_ types: [String], allowsMissing: Bool = false) -> AcceptedContentTypes {
        AcceptedContentTypes(rule: .list(types.map { $0.lowercased() }, allowsMissing: allowsMissing))
    }

    /// Whether a response with `contentType` is acceptable.
    ///
    /// - Parameter contentType: The raw `Content-Type` value, or `nil` when absent.
    public func accepts(contentType: String?) -> Bool {
        let type = contentType.flatMap(Self.essence)
        switch rule {
        case .anything:
            return true
        case .images:
            guard let type else { return true }
            return type.hasPrefix("image/") || Self.genericBinaryTypes.contains(type)
        case .json:
            guard let type else { return true }
            return Self.jsonTypes.contains(type) || (type.hasPrefix("application/") && type.hasSuffix("+json"))
        case .list(let types, let allowsMissing):
            guard let type else { return allowsMissing }
            return types.contains { pattern in
                pattern.hasSuffix("/*") ? type.hasPrefix(pattern.dropLast()) : type == pattern
            }
        }
    }

    /// The types that say "bytes of no known type", for which ``images``
    /// lets the bytes decide: `application/octet-stream` (RFC 2046),
    /// `binary/octet-stream` (S3 and stores that copy it), and the other
    /// spellings download servers use.
    public static let genericBinaryTypes: Set<String> = [
        "application/octet-stream", "binary/octet-stream", "application/binary", "application/x-binary",
        "application/unknown", "unknown/unknown", "application/download", "application/x-download",
        "application/force-download",
    ]

    /// The exact types ``json`` accepts, besides `application/*+json`.
    private static let jsonTypes: Set<String> = [
        "application/json", "text/json",
        "text/javascript", "application/javascript", "application/x-javascript",
    ]

    /// The lower-cased `type/subtype` of a `Content-Type` value, or `nil` when it is blank.
    static func essence(of contentType: String) -> String? {
        let essence = contentType
            .split(separator: ";", maxSplits: 1, omittingEmptySubsequences: false)[0]
            .trimmingCharacters(in: .whitespaces)
            .lowercased()
        return essence.isEmpty ? nil : essence
    }
}
