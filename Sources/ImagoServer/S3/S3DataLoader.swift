#if Server
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Imago

/// Loads `s3://BUCKET/KEY` sources from S3 or an S3-compatible store,
/// signed with AWS Signature Version 4.
///
/// With an ``Configuration/endpoint`` (MinIO, moto, Ceph...), requests use
/// path-style addresses (`ENDPOINT/BUCKET/KEY`); without one, AWS's
/// virtual-hosted addresses (`https://BUCKET.s3.REGION.amazonaws.com/KEY`).
/// Without credentials, requests go unsigned (public buckets).
///
/// Answers keep their meaning: a missing key (404) is the source's 404; a
/// refusal (403: wrong credentials, no permission, a clock beyond S3's
/// window) is ``ImageServerError/Code/sourceAccessDenied`` with S3's own
/// code and message; 5xx answers are retried by the transport's policy.
public struct S3DataLoader: DataLoading {
    /// Where and as whom to load.
    public struct Configuration: Sendable {
        /// The store's base URL for path-style requests (`http://127.0.0.1:9000`);
        /// `nil` for AWS's virtual-hosted addresses.
        public var endpoint: URL?
        /// The region requests are signed for (`AWS_REGION`). Default: `us-east-1`.
        public var region: String
        /// The credentials; `nil` sends unsigned requests.
        public var credentials: AWSSignatureV4.Credentials?

        /// Creates a configuration.
        public init(endpoint: URL? = nil, region: String = "us-east-1", credentials: AWSSignatureV4.Credentials? = nil) {
            self.endpoint = endpoint
            self.region = region
            self.credentials = credentials
        }

        /// The region and credentials from the standard variables (`AWS_REGION`
        /// or `AWS_DEFAULT_REGION`, `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`,
        /// `AWS_SESSION_TOKEN`), with `endpoint`.
        public static func fromEnvironment(endpoint: URL?, _ environment: [String: String] = ProcessInfo.processInfo.environment) -> Configuration {
            Configuration(endpoint: endpoint, region: environment["AWS_REGION"] ?? environment["AWS_DEFAULT_REGION"] ?? "us-east-1",
                          credentials: .fromEnvironment(environment))
        }
    }

    /// Where and as whom.
    public let configuration: Configuration
    /// What sends the signed HTTP requests (retrying 5xx answers).
    public let transport: any DataLoading
    /// The clock requests are signed with.
    let now: @Sendable () -> Date

    /// Creates a loader.
    public init(configuration: Configuration, transport: any DataLoading) {
        self.init(configuration: configuration, transport: transport, now: { Date() })
    }

    init(configuration: Configuration, transport: any DataLoading, now: @escaping @Sendable () -> Date) {
        self.configuration = configuration
        self.transport = transport
        self.now = now
    }

    /// The HTTP URL of `s3://BUCKET/KEY`.
    ///
    /// - Throws: ``ImageServerError/Code/badOptions`` for a URL without a
    ///   bucket or key; ``ImageServerError/Code/forbiddenSource`` for a key
    ///   with a `.` or `..` segment (percent-encoded or not), which a store
    ///   or a proxy that normalises paths would read as another object, or
    ///   another bucket.
    public func objectURL(for source: URL) throws(ImageServerError) -> URL {
        guard source.scheme?.lowercased() == "s3", let bucket = source.host, !bucket.isEmpty,
              let key = URLComponents(url: source, resolvingAgainstBaseURL: false)?.percentEncodedPath, key.count > 1 else {
            throw ImageServerError(.badOptions, "an S3 source is s3://BUCKET/KEY")
        }
        // Each key segment percent-encoded once, as S3 signs it.
        let encodedKey = ([""] + (try Self.keySegments(of: source)).map(AWSSignatureV4.encode)).joined(separator: "/")
        let text: String
        if let endpoint = configuration.endpoint {
            let base = endpoint.absoluteString.hasSuffix("/") ? String(endpoint.absoluteString.dropLast()) : endpoint.absoluteString
            text = "\(base)/\(AWSSignatureV4.encode(bucket))\(encodedKey)"
        } else {
            text = "https://\(bucket).s3.\(configuration.region).amazonaws.com\(encodedKey)"
        }
        guard let url = URL(string: text) else { throw ImageServerError(.badOptions, "the S3 source's key cannot be addressed") }
        return url
    }

    /// The key of `s3://BUCKET/KEY`, split at `/` and percent-decoded.
    ///
    /// - Throws: ``ImageServerError/Code/forbiddenSource`` for a `.` or `..`
    ///   segment (percent-encoded or not): a store or a proxy that
    ///   normalises paths would read it as another object, or another bucket.
    static func keySegments(of source: URL) throws(ImageServerError) -> [String] {
        let key = URLComponents(url: source, resolvingAgainstBaseURL: false)?.percentEncodedPath ?? source.path
        let segments = key.split(separator: "/", omittingEmptySubsequences: false).dropFirst().map { segment in
            String(segment).removingPercentEncoding ?? String(segment)
        }
        guard !segments.contains(where: { $0 == "." || $0 == ".." }) else {
            throw ImageServerError(.forbiddenSource, "the S3 key \(key.prefix(200)) has a . or .. segment")
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
        // A range and conditions go on to S3 (unsigned: SigV4 signs the host and the x-amz headers).
        for name in ["Range", "If-None-Match", "If-Modified-Since"] {
            if let value = request.value(forHTTPHeaderField: name) { outgoing.setValue(value, forHTTPHeaderField: name) }
        }
        if let credentials = configuration.credentials {
            let signer = AWSSignatureV4(credentials: credentials, region: configuration.region, service: "s3")
            let headers = signer.signedHeaders(method: "GET", url: url, headers: [:], payloadHash: AWSSignatureV4.emptyPayloadHash, date: now())
            for (name, value) in headers where name != "host" { outgoing.setValue(value, forHTTPHeaderField: name) }
        }
        let loaded = try await transport.load(outgoing)
        guard let http = loaded.response as? HTTPURLResponse else { return loaded }
        if http.statusCode == 403 {
            let detail = await Self.errorDetail(loaded.body)
            throw ImageServerError(.sourceAccessDenied, "S3 refused access to \(source.absoluteString.prefix(300))\(detail)")
        }
        // Answered under the source's own URL, as every loader answers.
        return DataLoadingResponse(response: GuardedDataLoader.response(http, as: source), body: loaded.body)
    }

    /// `: CODE: MESSAGE` from S3's XML error body (its first 16 KB), or nothing.
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
        func element(_ name: String) -> String? {
            guard let start = text.range(of: "<\(name)>"), let end = text.range(of: "</\(name)>", range: start.upperBound..<text.endIndex) else { return nil }
            return String(text[start.upperBound..<end.lowerBound].prefix(300))
        }
        return [element("Code"), element("Message")].compactMap { $0 }.map { ": " + $0 }.joined()
    }
}
#endif
