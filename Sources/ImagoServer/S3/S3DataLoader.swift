#if Server
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Imago

/// Loads `s3://BUCKET/KEY` sources from S3 or an S3-compatible store, and
/// `gs://BUCKET/KEY` sources from Google Cloud Storage through its XML API
/// (``Service/googleCloudStorage``), signed with AWS Signature Version 4.
///
/// With an ``Configuration/endpoint`` (MinIO, moto, Ceph, GCS...), requests use
/// path-style addresses (`ENDPOINT/BUCKET/KEY`); without one, AWS's
/// virtual-hosted addresses (`https://BUCKET.s3.REGION.amazonaws.com/KEY`),
/// or GCS's `https://storage.googleapis.com/BUCKET/KEY`.
/// Without credentials, requests go unsigned (public buckets).
///
/// Answers keep their meaning: a missing key (404) is the source's 404; a
/// refusal (403: wrong credentials, no permission, a clock beyond the
/// store's window) is ``ImageServerError/Code/sourceAccessDenied`` with the
/// store's own code and message; 5xx answers are retried by the transport's
/// policy; a redirect is not followed (the store is the operator's own).
///
/// GCS reads the same requests as S3 when they are signed with an HMAC key
/// of a service account (its access ID and secret in place of AWS's key
/// and secret) for the region `auto`:
///
/// ```swift
/// let gcs = S3DataLoader(configuration: .googleCloudStorage(credentials: hmacKey),
///                        transport: transport, service: .googleCloudStorage)
/// ```
public struct S3DataLoader: DataLoading {
    /// The store a loader reads: the scheme of its sources, the name its
    /// messages give, and where requests go without an endpoint.
    public enum Service: Sendable, Hashable, CaseIterable {
        /// Amazon S3 or an S3-compatible store: `s3://BUCKET/KEY`.
        case s3
        /// Google Cloud Storage through its S3-compatible XML API:
        /// `gs://BUCKET/KEY`, imgproxy's form.
        case googleCloudStorage

        /// The scheme of its sources: `s3`, `gs`.
        public var scheme: String {
            switch self {
            case .s3: "s3"
            case .googleCloudStorage: "gs"
            }
        }

        /// The name its messages give: `S3`, `GCS`.
        public var name: String {
            switch self {
            case .s3: "S3"
            case .googleCloudStorage: "GCS"
            }
        }

        /// The service whose scheme `scheme` is (any case), or `nil`.
        public init?(scheme: String?) {
            guard let scheme = scheme?.lowercased(), let service = Self.allCases.first(where: { $0.scheme == scheme }) else { return nil }
            self = service
        }
    }

    /// Where and as whom to load.
    public struct Configuration: Sendable {
        /// The store's base URL for path-style requests (`http://127.0.0.1:9000`);
        /// `nil` for AWS's virtual-hosted addresses (GCS:
        /// ``googleCloudStorageEndpoint``, path-style).
        public var endpoint: URL?
        /// The region requests are signed for (`AWS_REGION`; GCS: `auto`). Default: `us-east-1`.
        public var region: String
        /// The credentials; `nil` sends unsigned requests.
        public var credentials: AWSSignatureV4.Credentials?
        /// A role to sign as, assumed with ``credentials`` (S3 only).
        public var role: AWSAssumedRole?
        /// The only buckets sources may name; empty: any (imgproxy's
        /// `IMGPROXY_S3_ALLOWED_BUCKETS`, `_GCS_ALLOWED_BUCKETS`).
        public var allowedBuckets: Set<String> = []
        /// Buckets sources may not name (imgproxy's
        /// `IMGPROXY_S3_DENIED_BUCKETS`, `_GCS_DENIED_BUCKETS`). Another
        /// bucket is `404 forbidden_source`, and never asked.
        public var deniedBuckets: Set<String> = []
        /// What separates a source's key from the object's version
        /// (`s3://BUCKET/KEY?VERSION`): S3's `versionId`, GCS's
        /// `generation` (a positive number; anything else is ignored, as
        /// imgproxy does). `nil` or empty: none, the whole text is the key
        /// (imgproxy's `IMGPROXY_SOURCE_URL_QUERY_SEPARATOR`). Default: `?`.
        public var versionSeparator: String? = "?"

        /// Creates a configuration.
        public init(endpoint: URL? = nil, region: String = "us-east-1", credentials: AWSSignatureV4.Credentials? = nil) {
            self.endpoint = endpoint
            self.region = region
            self.credentials = credentials
        }

        /// Whether sources may name `bucket`.
        public func allows(bucket: String) -> Bool {
            (allowedBuckets.isEmpty || allowedBuckets.contains(bucket)) && !deniedBuckets.contains(bucket)
        }

        /// The region and credentials from the standard variables (`AWS_REGION`
        /// or `AWS_DEFAULT_REGION`, `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`,
        /// `AWS_SESSION_TOKEN`), with `endpoint`.
        public static func fromEnvironment(endpoint: URL?, _ environment: [String: String] = ProcessInfo.processInfo.environment) -> Configuration {
            Configuration(endpoint: endpoint, region: environment["AWS_REGION"] ?? environment["AWS_DEFAULT_REGION"] ?? "us-east-1",
                          credentials: .fromEnvironment(environment))
        }

        /// Google Cloud Storage's XML API: `https://storage.googleapis.com`.
        public static let googleCloudStorageEndpoint = URL(string: "https://storage.googleapis.com")!

        /// Google Cloud Storage through its XML API, signed for the region
        /// `auto` with an HMAC key (its access ID as
        /// ``AWSSignatureV4/Credentials/accessKeyID``, its secret as
        /// ``AWSSignatureV4/Credentials/secretAccessKey``), or unsigned
        /// without one (public buckets).
        ///
        /// - Parameter endpoint: The XML API's scheme, host and port; a path
        ///   is dropped, as imgproxy's reads drop it: its
        ///   `IMGPROXY_GCS_ENDPOINT` names the JSON API (`.../storage/v1/`),
        ///   and its client reads objects from the XML API at that host.
        ///   Default: ``googleCloudStorageEndpoint``.
        public static func googleCloudStorage(endpoint: URL = googleCloudStorageEndpoint, credentials: AWSSignatureV4.Credentials?) -> Configuration {
            var origin = URLComponents(url: endpoint, resolvingAgainstBaseURL: true)
            origin?.percentEncodedPath = ""
            origin?.query = nil
            origin?.fragment = nil
            return Configuration(endpoint: origin?.url ?? endpoint, region: "auto", credentials: credentials)
        }
    }

    /// Where and as whom.
    public let configuration: Configuration
    /// The store it reads, and so the scheme of its sources.
    public let service: Service
    /// What sends the signed HTTP requests (retrying 5xx answers).
    public let transport: any DataLoading
    /// The clock requests are signed with.
    let now: @Sendable () -> Date
    /// The assumed role's credentials, when there is a role.
    private let assumedRole: AssumedRoleCredentials?

    /// Creates a loader of `service`'s sources (`s3://` by default).
    public init(configuration: Configuration, transport: any DataLoading, service: Service = .s3) {
        self.init(configuration: configuration, transport: transport, service: service, now: { Date() })
    }

    /// Creates a loader that signs with the time `now` gives (tests check signatures against fixed vectors).
    package init(configuration: Configuration, transport: any DataLoading, service: Service = .s3, now: @escaping @Sendable () -> Date) {
        self.configuration = configuration
        self.transport = transport
        self.service = service
        self.now = now
        assumedRole = configuration.role.map {
            AssumedRoleCredentials(role: $0, base: configuration.credentials, region: configuration.region, transport: transport, now: now)
        }
    }

    /// What requests are signed with: the assumed role's credentials with a
    /// role, else the configured ones; `nil`: unsigned.
    ///
    /// - Throws: ``ImageServerError`` when STS does not give the role's credentials.
    public func signingCredentials() async throws -> AWSSignatureV4.Credentials? {
        if let assumedRole { return try await assumedRole.current() }
        return configuration.credentials
    }

    /// The HTTP URL of `s3://BUCKET/KEY` (`gs://BUCKET/KEY` for GCS).
    ///
    /// - Throws: ``ImageServerError/Code/badOptions`` for a URL of another
    ///   scheme, or without a bucket or key; ``ImageServerError/Code/forbiddenSource`` for a key
    ///   with a `.` or `..` segment (percent-encoded or not), which a store
    ///   or a proxy that normalises paths would read as another object, or
    ///   another bucket.
    public func objectURL(for source: URL) throws(ImageServerError) -> URL {
        let (key, version) = Self.keyAndVersion(of: source, separator: configuration.versionSeparator)
        guard source.scheme?.lowercased() == service.scheme, let bucket = source.host, !bucket.isEmpty, key.count > 1 else {
            throw ImageServerError(.badOptions, "\(service.name) sources are \(service.scheme)://BUCKET/KEY")
        }
        guard configuration.allows(bucket: bucket) else {
            throw ImageServerError(.forbiddenSource, "the \(service.name) bucket \(bucket.prefix(100)) is not served")
        }
        // Each key segment percent-encoded once, as S3 signs it.
        let encodedKey = ([""] + (try Self.keySegments(ofKey: key)).map(AWSSignatureV4.encode)).joined(separator: "/")
        let versionQuery: String = switch (service, version) {
        case (.s3, let version?) where !version.isEmpty: "?versionId=" + AWSSignatureV4.encode(version)
        case (.googleCloudStorage, let version?) where (Int64(version) ?? 0) > 0: "?generation=" + version
        default: ""
        }
        let text: String
        if let endpoint = configuration.endpoint ?? (service == .googleCloudStorage ? Configuration.googleCloudStorageEndpoint : nil) {
            let base = endpoint.absoluteString.hasSuffix("/") ? String(endpoint.absoluteString.dropLast()) : endpoint.absoluteString
            text = "\(base)/\(AWSSignatureV4.encode(bucket))\(encodedKey)\(versionQuery)"
        } else {
            text = "https://\(bucket).s3.\(configuration.region).amazonaws.com\(encodedKey)\(versionQuery)"
        }
        guard let url = URL(string: text) else { throw ImageServerError(.badOptions, "the \(service.name) source's key cannot be addressed") }
        return url
    }

    /// The key of `s3://BUCKET/KEY` (or `gs://`), split at `/` and percent-decoded.
    ///
    /// - Throws: ``ImageServerError/Code/forbiddenSource`` for a `.` or `..`
    ///   segment (percent-encoded or not): a store or a proxy that
    ///   normalises paths would read it as another object, or another bucket.
    static func keySegments(of source: URL) throws(ImageServerError) -> [String] {
        try keySegments(ofKey: URLComponents(url: source, resolvingAgainstBaseURL: false)?.percentEncodedPath ?? source.path)
    }

    /// The key, percent-encoded as in the source, and the version after
    /// `separator` (percent-decoded), if any.
    static func keyAndVersion(of source: URL, separator: String?) -> (key: String, version: String?) {
        let components = URLComponents(url: source, resolvingAgainstBaseURL: false)
        let path = components?.percentEncodedPath ?? source.path
        let text = path + (components?.percentEncodedQuery.map { "?" + $0 } ?? "")
        guard let separator, !separator.isEmpty else { return (text, nil) }
        guard let cut = text.range(of: separator) else { return (text, nil) }
        let version = String(text[cut.upperBound...])
        return (String(text[..<cut.lowerBound]), version.removingPercentEncoding ?? version)
    }

    /// A percent-encoded key split at `/` and percent-decoded.
    static func keySegments(ofKey key: String) throws(ImageServerError) -> [String] {
        let segments = key.split(separator: "/", omittingEmptySubsequences: false).dropFirst().map { segment in
            String(segment).removingPercentEncoding ?? String(segment)
        }
        guard !segments.contains(where: { $0 == "." || $0 == ".." }) else {
            throw ImageServerError(.forbiddenSource, "the object key \(key.prefix(200)) has a . or .. segment")
        }
        return segments
    }

    /// Loads the object; the request's `Range`, `If-None-Match` and
    /// `If-Modified-Since` are sent with it.
    ///
    /// - Throws: ``ImageServerError`` (`sourceAccessDenied` for a 403), or the transport's errors.
    public func load(_ request: URLRequest) async throws -> DataLoadingResponse {
        guard let source = request.url else { throw ImageServerError(.badOptions, "the source has no URL") }
        let url = try objectURL(for: source)
        var outgoing = URLRequest(url: url)
        outgoing.timeoutInterval = request.timeoutInterval
        // A range and conditions go on to the store (unsigned: SigV4 signs the host and the x-amz headers).
        for name in ["Range", "If-None-Match", "If-Modified-Since"] {
            if let value = request.value(forHTTPHeaderField: name) { outgoing.setValue(value, forHTTPHeaderField: name) }
        }
        if let credentials = try await signingCredentials() {
            let signer = AWSSignatureV4(credentials: credentials, region: configuration.region, service: "s3")
            let headers = signer.signedHeaders(method: "GET", url: url, headers: [:], payloadHash: AWSSignatureV4.emptyPayloadHash, date: now())
            for (name, value) in headers where name != "host" { outgoing.setValue(value, forHTTPHeaderField: name) }
        }
        let loaded = try await transport.load(outgoing)
        guard let http = loaded.response as? HTTPURLResponse else { return loaded }
        if http.statusCode == 403 {
            let detail = await Self.errorDetail(loaded.body)
            throw ImageServerError(.sourceAccessDenied, "\(service.name) refused access to \(source.absoluteString.prefix(300))\(detail)")
        }
        // Answered under the source's own URL, as every loader answers.
        return DataLoadingResponse(response: GuardedDataLoader.response(http, as: source), body: loaded.body)
    }

    /// `: CODE: MESSAGE` from the store's XML error body (its first 16 KB), or nothing.
    static func errorDetail(_ body: AsyncThrowingStream<Data, any Error>) async -> String {
        var data = Data()
        do {
            for try await chunk in body {
                data.append(chunk)
                if data.count > 16_384 { break }
            }
        } catch {
            return ""
        }
        let text = String(decoding: data, as: UTF8.self)
        return [element("Code", in: text), element("Message", in: text)].compactMap { $0?.prefix(300) }.map { ": " + $0 }.joined()
    }

    /// The text of the first `<name>` element of an AWS XML answer (S3's,
    /// STS's), trimmed; `nil` when there is none.
    static func element(_ name: String, in text: String) -> String? {
        guard let start = text.range(of: "<\(name)>"), let end = text.range(of: "</\(name)>", range: start.upperBound..<text.endIndex) else { return nil }
        return text[start.upperBound..<end.lowerBound].trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
#endif
