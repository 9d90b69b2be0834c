#if Server
import Foundation
import Imago
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// An IAM role that S3 requests are signed as: its temporary credentials
/// come from AWS STS's `AssumeRole`, asked with the configured credentials
/// (imgproxy's `IMGPROXY_S3_ASSUME_ROLE_ARN` and
/// `IMGPROXY_S3_ASSUME_ROLE_EXTERNAL_ID`), kept until five minutes before
/// they expire, then asked again (one request however many loads wait).
///
/// ```swift
/// var s3 = S3DataLoader.Configuration.fromEnvironment(endpoint: nil)
/// s3.role = AWSAssumedRole(arn: "arn:aws:iam::123456789012:role/image-reader", externalID: "thumbs")
/// ```
public struct AWSAssumedRole: Sendable, Hashable {
    /// The role's ARN.
    public var arn: String
    /// The external ID the role's trust policy asks for, if any.
    public var externalID: String?
    /// The session's name, shown in CloudTrail. Default: `imago`.
    public var sessionName: String
    /// How long the credentials are asked for, in seconds (STS allows 900
    /// to the role's maximum). Default: 3600.
    public var duration: Int
    /// STS's URL; `nil`: `https://sts.REGION.amazonaws.com` (the standard
    /// `AWS_ENDPOINT_URL_STS` names another, such as a test server).
    public var endpoint: URL?

    /// Creates a role to assume.
    public init(arn: String, externalID: String? = nil, sessionName: String = "imago", duration: Int = 3600, endpoint: URL? = nil) {
        self.arn = arn
        self.externalID = externalID
        self.sessionName = sessionName
        self.duration = duration
        self.endpoint = endpoint
    }
}

/// The assumed role's credentials, asked of STS when missing or about to
/// expire; concurrent callers share one request.
final class AssumedRoleCredentials: Sendable {
    private struct State {
        var credentials: AWSSignatureV4.Credentials?
        var expires = Date.distantPast
        var pending: Task<(AWSSignatureV4.Credentials, Date), any Error>?
    }

    let role: AWSAssumedRole
    let base: AWSSignatureV4.Credentials?
    let region: String
    let transport: any DataLoading
    let now: @Sendable () -> Date
    private let state = Locked(State())

    init(role: AWSAssumedRole, base: AWSSignatureV4.Credentials?, region: String, transport: any DataLoading, now: @escaping @Sendable () -> Date) {
        self.role = role
        self.base = base
        self.region = region
        self.transport = transport
        self.now = now
    }

    /// Valid credentials for at least five more minutes.
    ///
    /// - Throws: ``ImageServerError``: `sourceAccessDenied` when STS refuses
    ///   (with its code and message) or there are no credentials to ask
    ///   with; `sourceFailed` for an answer that holds no credentials.
    func current() async throws -> AWSSignatureV4.Credentials {
        let moment = now()
        let task = state.withLock { state -> Task<(AWSSignatureV4.Credentials, Date), any Error>? in
            if state.credentials != nil, state.expires.timeIntervalSince(moment) > 300 { return nil }
            if let pending = state.pending { return pending }
            let pending = Task { try await self.assume() }
            state.pending = pending
            return pending
        }
        guard let task else { return state.withLock { $0.credentials! } }
        do {
            let (credentials, expires) = try await task.value
            state.withLock { state in
                state.credentials = credentials
                state.expires = expires
                state.pending = nil
            }
            return credentials
        } catch {
            state.withLock { $0.pending = nil }
            throw error
        }
    }

    /// One `AssumeRole` request to STS.
    private func assume() async throws -> (AWSSignatureV4.Credentials, Date) {
        guard let base else {
            throw ImageServerError(.sourceAccessDenied, "assuming the role \(role.arn) needs credentials (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY)")
        }
        let endpoint = role.endpoint ?? URL(string: "https://sts.\(region).amazonaws.com/")!
        let url = endpoint.path.isEmpty ? endpoint.appendingPathComponent("") : endpoint
        var parameters = [("Action", "AssumeRole"), ("DurationSeconds", String(role.duration)), ("RoleArn", role.arn),
                          ("RoleSessionName", role.sessionName), ("Version", "2011-06-15")]
        if let externalID = role.externalID { parameters.append(("ExternalId", externalID)) }
        let body = Data(parameters.map { AWSSignatureV4.encode($0.0) + "=" + AWSSignatureV4.encode($0.1) }.joined(separator: "&").utf8)
        var request = URLRequest(url: url)
        request.httpMethod = "POST"
        request.httpBody = body
        let contentType = ["Content-Type": "application/x-www-form-urlencoded; charset=utf-8"]
        let signer = AWSSignatureV4(credentials: base, region: region, service: "sts")
        let headers = signer.signedHeaders(method: "POST", url: url, headers: contentType, payloadHash: AWSSignatureV4.payloadHash(of: body), date: now())
        for (name, value) in headers where name != "host" { request.setValue(value, forHTTPHeaderField: name) }
        let loaded = try await transport.load(request)
        let status = (loaded.response as? HTTPURLResponse)?.statusCode ?? 0
        var data = Data()
        for try await chunk in loaded.body {
            data.append(chunk)
            // An answer is a few kilobytes; a larger one is not STS's.
            guard data.count <= 65_536 else { throw ImageServerError(.sourceFailed, "STS's answer to AssumeRole is over 64 KB") }
        }
        let text = String(decoding: data, as: UTF8.self)
        func element(_ name: String) -> String? { S3DataLoader.element(name, in: text) }
        guard (200...299).contains(status) else {
            let detail = [element("Code"), element("Message")].compactMap { $0?.prefix(300) }.map { ": " + $0 }.joined()
            throw ImageServerError(.sourceAccessDenied, "STS refused to assume the role \(role.arn.prefix(200)) (\(status))\(detail)")
        }
        guard let id = element("AccessKeyId"), let secret = element("SecretAccessKey"), let token = element("SessionToken"),
              let expiration = element("Expiration").flatMap(Self.date) else {
            throw ImageServerError(.sourceFailed, "STS's answer to AssumeRole holds no credentials")
        }
        return (AWSSignatureV4.Credentials(accessKeyID: id, secretAccessKey: secret, sessionToken: token), expiration)
    }

    /// An ISO 8601 time, with or without fractions of a second.
    static func date(_ text: String) -> Date? {
        let plain = ISO8601DateFormatter()
        if let date = plain.date(from: text) { return date }
        let fractional = ISO8601DateFormatter()
        fractional.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return fractional.date(from: text)
    }
}
#endif
