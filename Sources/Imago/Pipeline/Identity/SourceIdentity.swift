import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What a request's bytes are: the caller's ``ImageRequest/imageID``, or
/// the URL together with the credentials it is loaded with. Two requests
/// share a download or a cache entry only when their source identities are
/// equal.
struct SourceIdentity: Hashable, Sendable, CustomStringConvertible {
    enum Name: Hashable, Sendable {
        /// The caller said which image this is; URL and credentials do not matter.
        case imageID(String)
        /// The URL, and a fingerprint of its credential headers when it has any.
        case url(String, credentials: CredentialFingerprint?)
    }

    let name: Name

    /// The identity of `request`, or `nil` when it has neither an image ID nor a URL.
    ///
    /// - Parameter credentialHeaders: Header names (lower-case) whose values
    ///   make two requests for one URL different images.
    init?(_ request: ImageRequest, credentialHeaders: Set<String>) {
        if let imageID = request.imageID {
            name = .imageID(imageID)
        } else if let url = request.urlRequest.url {
            name = .url(url.absoluteString, credentials: CredentialFingerprint(request.urlRequest, headers: credentialHeaders))
        } else {
            return nil
        }
    }

    /// The disk-cache key: the SHA-256 of an unambiguous encoding of the
    /// identity, so no URL can spell another request's key and no secret
    /// reaches the cache's files.
    var diskKey: String {
        var encoding = IdentityEncoding(domain: "imago.source.v1")
        switch name {
        case .imageID(let id):
            encoding.append("id")
            encoding.append(id)
        case .url(let url, let credentials):
            encoding.append("url")
            encoding.append(url)
            encoding.append(credentials?.digest ?? [])
        }
        return SHA256.hex(of: encoding.bytes)
    }

    var description: String {
        switch name {
        case .imageID(let id): "id:\(id)"
        case .url(let url, nil): url
        case .url(let url, let credentials?): "\(url) (\(credentials))"
        }
    }
}

/// The SHA-256 of a request's credential header fields (names lower-cased,
/// sorted): tells requests with different credentials apart without keeping
/// the secrets themselves in keys and logs.
struct CredentialFingerprint: Hashable, Sendable, CustomStringConvertible {
    /// The header fields that always carry credentials.
    static let standardHeaders: Set<String> = ["authorization", "cookie", "proxy-authorization"]

    let digest: [UInt8]

    /// The fingerprint of `request`'s values for `headers`; `nil` when it sends none of them.
    init?(_ request: URLRequest, headers: Set<String>) {
        let fields = (request.allHTTPHeaderFields ?? [:])
            .map { (name: $0.key.lowercased(), value: $0.value) }
            .filter { headers.contains($0.name) }
            .sorted { ($0.name, $0.value) < ($1.name, $1.value) }
        guard !fields.isEmpty else { return nil }
        var encoding = IdentityEncoding(domain: "imago.credentials.v1")
        for field in fields {
            encoding.append(field.name)
            encoding.append(field.value)
        }
        digest = SHA256.digest(of: encoding.bytes)
    }

    var description: String { "credentials " + digest.prefix(4).lowercaseHex }
}

/// Fields written with their lengths, so that no two different lists of
/// fields encode to the same bytes (`"ab", "c"` is not `"a", "bc"`).
struct IdentityEncoding {
    private(set) var bytes: [UInt8] = []

    init(domain: String) {
        append(domain)
    }

    mutating func append(_ field: String) {
        append(Array(field.utf8))
    }

    mutating func append(_ field: [UInt8]) {
        let count = UInt64(field.count)
        for shift in stride(from: 56, through: 0, by: -8) { bytes.append(UInt8(truncatingIfNeeded: count >> UInt64(shift))) }
        bytes.append(contentsOf: field)
    }
}
