#if Server
import Crypto
import Foundation
import Imago

/// AWS Signature Version 4 (`AWS4-HMAC-SHA256`) for one request, as AWS's
/// published specification builds it: a canonical request, a string to
/// sign over its hash, and a key derived from the secret for the date,
/// region and service.
///
/// ```swift
/// let signer = AWSSignatureV4(credentials: credentials, region: "us-east-1", service: "s3")
/// let headers = signer.signedHeaders(method: "GET", url: url, headers: [:], payloadHash: AWSSignatureV4.emptyPayloadHash, date: Date())
/// ```
public struct AWSSignatureV4: Sendable {
    /// An access key, its secret, and the session token of temporary credentials.
    public struct Credentials: Sendable, Hashable {
        /// The access key ID (`AWS_ACCESS_KEY_ID`).
        public var accessKeyID: String
        /// The secret access key (`AWS_SECRET_ACCESS_KEY`).
        public var secretAccessKey: String
        /// The session token of temporary credentials (`AWS_SESSION_TOKEN`).
        public var sessionToken: String?

        /// Creates credentials.
        public init(accessKeyID: String, secretAccessKey: String, sessionToken: String? = nil) {
            self.accessKeyID = accessKeyID
            self.secretAccessKey = secretAccessKey
            self.sessionToken = sessionToken
        }

        /// The credentials in the standard variables, or `nil` when the key or secret is missing.
        public static func fromEnvironment(_ environment: [String: String] = ProcessInfo.processInfo.environment) -> Credentials? {
            guard let key = environment["AWS_ACCESS_KEY_ID"], !key.isEmpty,
                  let secret = environment["AWS_SECRET_ACCESS_KEY"], !secret.isEmpty else { return nil }
            return Credentials(accessKeyID: key, secretAccessKey: secret, sessionToken: environment["AWS_SESSION_TOKEN"].flatMap { $0.isEmpty ? nil : $0 })
        }
    }

    /// The SHA-256 of an empty payload, in hex: what a GET signs.
    public static let emptyPayloadHash = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

    /// The hex SHA-256 of a payload, as `X-Amz-Content-Sha256` and the canonical request carry it.
    public static func payloadHash(of payload: Data) -> String {
        hex(SHA256.hash(data: payload))
    }

    /// The credentials requests are signed with.
    public var credentials: Credentials
    /// The region (`us-east-1`).
    public var region: String
    /// The service (`s3`).
    public var service: String

    /// Creates a signer.
    public init(credentials: Credentials, region: String, service: String) {
        self.credentials = credentials
        self.region = region
        self.service = service
    }

    /// The headers to send: `headers`, plus `Host`, `X-Amz-Date`,
    /// `X-Amz-Content-Sha256` (S3 only), `X-Amz-Security-Token` (with a
    /// session token) and `Authorization`, every one of them signed.
    public func signedHeaders(method: String, url: URL, headers: [String: String], payloadHash: String, date: Date) -> [String: String] {
        var all = headers
        let (longDate, shortDate) = Self.dates(date)
        all["host"] = Self.host(of: url)
        all["x-amz-date"] = longDate
        if service == "s3" { all["x-amz-content-sha256"] = payloadHash }
        if let token = credentials.sessionToken { all["x-amz-security-token"] = token }
        let parts = canonicalRequest(method: method, url: url, headers: all, payloadHash: payloadHash)
        let scope = "\(shortDate)/\(region)/\(service)/aws4_request"
        let toSign = "AWS4-HMAC-SHA256\n\(longDate)\n\(scope)\n\(Self.hex(SHA256.hash(data: Data(parts.request.utf8))))"
        let signature = Self.hex(HMAC<SHA256>.authenticationCode(for: Data(toSign.utf8), using: signingKey(shortDate: shortDate)))
        all["authorization"] = "AWS4-HMAC-SHA256 Credential=\(credentials.accessKeyID)/\(scope), SignedHeaders=\(parts.signedHeaders), Signature=\(signature)"
        return all
    }

    /// The canonical request and its `SignedHeaders` list.
    func canonicalRequest(method: String, url: URL, headers: [String: String], payloadHash: String) -> (request: String, signedHeaders: String) {
        let components = URLComponents(url: url, resolvingAgainstBaseURL: false)
        // The path as sent (already percent-encoded once, as S3 wants it).
        let path = components?.percentEncodedPath ?? "/"
        var pairs: [(name: String, value: String)] = []
        for item in components?.percentEncodedQueryItems ?? [] {
            let name = item.name.removingPercentEncoding ?? item.name
            let value = (item.value ?? "").removingPercentEncoding ?? ""
            pairs.append((Self.encode(name), Self.encode(value)))
        }
        pairs.sort { $0.name == $1.name ? $0.value < $1.value : $0.name < $1.name }
        let query = pairs.map { $0.name + "=" + $0.value }.joined(separator: "&")
        var canonical: [String: String] = [:]
        for (name, value) in headers {
            canonical[name.lowercased()] = value.split(separator: " ", omittingEmptySubsequences: true).joined(separator: " ")
        }
        let names = canonical.keys.sorted()
        let headerLines = names.map { "\($0):\(canonical[$0]!)\n" }.joined()
        let signed = names.joined(separator: ";")
        return ([method, path.isEmpty ? "/" : path, query, headerLines, signed, payloadHash].joined(separator: "\n"), signed)
    }

    /// `HMAC(HMAC(HMAC(HMAC("AWS4" + secret, date), region), service), "aws4_request")`.
    func signingKey(shortDate: String) -> SymmetricKey {
        var key = SymmetricKey(data: Data(("AWS4" + credentials.secretAccessKey).utf8))
        for part in [shortDate, region, service, "aws4_request"] {
            key = SymmetricKey(data: Data(HMAC<SHA256>.authenticationCode(for: Data(part.utf8), using: key)))
        }
        return key
    }

    /// `YYYYMMDDTHHMMSSZ` and `YYYYMMDD`, in UTC.
    static func dates(_ date: Date) -> (long: String, short: String) {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let c = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: date)
        let short = String(format: "%04d%02d%02d", c.year!, c.month!, c.day!)
        return (short + String(format: "T%02d%02d%02dZ", c.hour!, c.minute!, c.second!), short)
    }

    /// `host` or `host:port` when the port is not the scheme's default.
    static func host(of url: URL) -> String {
        let host = url.host ?? ""
        guard let port = url.port, !(url.scheme == "https" && port == 443), !(url.scheme == "http" && port == 80) else { return host }
        return "\(host):\(port)"
    }

    /// RFC 3986 unreserved characters kept, everything else `%XX`.
    static func encode(_ text: String) -> String {
        let allowed = CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
        return text.addingPercentEncoding(withAllowedCharacters: allowed) ?? text
    }

    static func hex(_ bytes: some Sequence<UInt8>) -> String {
        bytes.lowercaseHex
    }
}
#endif
