import AsyncHTTPClient
import ChildProcesses
import Foundation
import LoopbackServer
import NIOCore
#if canImport(Glibc)
import Glibc
#endif

/// moto's S3-compatible server (from PyPI) on a free loopback port, for
/// tests of S3 sources and result stores against a real peer: started tied
/// to the test process, killed when this object goes.
public final class MotoServer: @unchecked Sendable {
    // @unchecked: `process` is started once, in `init`, and only killed after.
    public let process: Process
    /// The port it listens on.
    public let port: Int
    /// `http://127.0.0.1:PORT`.
    public var endpoint: URL { URL(string: "http://127.0.0.1:\(port)")! }

    /// Where `moto_server` is: `MOTO_SERVER`, else the virtual environment
    /// `scripts/install-python-tools` makes in the root package's `.build`.
    public static var executable: String {
        ProcessInfo.processInfo.environment["MOTO_SERVER"]
            ?? URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../../.build/python/bin/moto_server").standardized.path
    }

    /// Starts moto and returns once it answers. moto imports boto and
    /// much else before it listens, which takes tens of seconds on a
    /// loaded two-core machine, so it is given two minutes; if it exits
    /// instead (another process took the port between the probe and its
    /// bind), it is started again on a new port, up to three times, and
    /// the error carries the end of what it printed.
    public init() async throws {
        let path = Self.executable
        guard FileManager.default.isExecutableFile(atPath: path) else { throw Missing(path: path) }
        var lastFailure = ""
        for _ in 0..<3 {
            // A free port: bind one, note it, let it go.
            let probe = try await LoopbackServer.start(routes: [:])
            let port = probe.port
            try await probe.stop()
            let log = FileManager.default.temporaryDirectory.appendingPathComponent("imago-moto-\(UUID().uuidString).log")
            _ = FileManager.default.createFile(atPath: log.path, contents: nil)
            defer { try? FileManager.default.removeItem(at: log) }
            let process = Process()
            process.executableURL = URL(fileURLWithPath: path)
            process.arguments = ["-H", "127.0.0.1", "-p", String(port)]
            process.standardOutput = FileHandle.nullDevice
            // What moto prints while it starts, for the error; the file is
            // deleted at the end of the attempt (moto's later request lines
            // go to the deleted file, which goes with moto).
            let logHandle = try FileHandle(forWritingTo: log)
            process.standardError = logHandle
            try process.startTiedToThisProcess()
            try? logHandle.close()
            if await Self.answers(port: port, process: process, within: .seconds(120)) {
                self.process = process
                self.port = port
                return
            }
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
            await process.exited()
            process.waitUntilExit()
            let printed = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
            lastFailure = "port \(port), exit status \(process.terminationStatus): " + printed.suffix(400)
        }
        throw Missing(path: "\(path) did not start (\(lastFailure))")
    }

    /// Whether moto's API answers on `port` before `limit` passes or the process exits.
    private static func answers(port: Int, process: Process, within limit: Duration) async -> Bool {
        let deadline = ContinuousClock.now + limit
        let ready = "http://127.0.0.1:\(port)/moto-api/"
        while ContinuousClock.now < deadline, process.isRunning {
            if let response = try? await HTTPClient.shared.execute(HTTPClientRequest(url: ready), timeout: .seconds(5)) {
                _ = try? await response.body.collect(upTo: 1 << 20)
                if response.status == .ok { return true }
            }
            try? await Task.sleep(for: .milliseconds(100))
        }
        return false
    }

    deinit {
        // SIGKILL: moto's server does not always stop on SIGTERM.
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }

    /// An unsigned PUT of a bucket (`/BUCKET`) or an object (`/BUCKET/KEY`),
    /// as moto accepts by default (until ``requireSignatures()``), with
    /// `headers` added (`x-amz-acl: public-read` for an object anyone may
    /// read unsigned); the status.
    public func put(_ path: String, _ body: Data = Data(), contentType: String? = nil, headers: [String: String] = [:]) async throws -> Int {
        var request = HTTPClientRequest(url: endpoint.absoluteString + path)
        request.method = .PUT
        request.body = .bytes(ByteBuffer(bytes: body))
        if let contentType { request.headers.replaceOrAdd(name: "Content-Type", value: contentType) }
        for (name, value) in headers { request.headers.replaceOrAdd(name: name, value: value) }
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(30))
        _ = try await response.body.collect(upTo: 1 << 20)
        return Int(response.status.code)
    }

    /// Makes moto check every later request as S3 does: a signature made
    /// with a key it knows, by a user allowed the action. Creates an IAM
    /// user allowed everything on S3 and an access key for it, then turns
    /// moto's authentication on; returns the key. From then on a wrong
    /// secret is S3's `403 SignatureDoesNotMatch`, and unsigned requests
    /// reach only objects put `public-read` before.
    public func requireSignatures() async throws -> (accessKeyID: String, secretAccessKey: String) {
        let policy = #"{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"s3:*","Resource":"*"}]}"#
        let key = try await createUser("imago", policy: policy)
        try await requireAuthentication()
        return key
    }

    /// An IAM user allowed what `policy` (a JSON policy document) allows,
    /// and an access key for it; call before ``requireAuthentication()``.
    public func createUser(_ name: String, policy: String) async throws -> (accessKeyID: String, secretAccessKey: String) {
        _ = try await iam([("Action", "CreateUser"), ("UserName", name)])
        _ = try await iam([("Action", "PutUserPolicy"), ("UserName", name), ("PolicyName", "policy"), ("PolicyDocument", policy)])
        let created = try await iam([("Action", "CreateAccessKey"), ("UserName", name)])
        guard let id = Self.element("AccessKeyId", in: created), let secret = Self.element("SecretAccessKey", in: created) else {
            throw Refused(step: "CreateAccessKey", answer: created)
        }
        return (id, secret)
    }

    /// An IAM role anyone may assume, allowed what `policy` allows; its ARN.
    /// Call before ``requireAuthentication()``.
    public func createRole(_ name: String, policy: String) async throws -> String {
        let trust = #"{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"AWS":"*"},"Action":"sts:AssumeRole"}]}"#
        let created = try await iam([("Action", "CreateRole"), ("RoleName", name), ("AssumeRolePolicyDocument", trust)])
        _ = try await iam([("Action", "PutRolePolicy"), ("RoleName", name), ("PolicyName", "policy"), ("PolicyDocument", policy)])
        guard let arn = Self.element("Arn", in: created) else { throw Refused(step: "CreateRole", answer: created) }
        return arn
    }

    /// Turns moto's authentication on: from the next request, every
    /// request must be signed with a key it knows, by a user (or an
    /// assumed role) allowed the action.
    public func requireAuthentication() async throws {
        // Authentication on from the next request (moto counts requests made without it).
        var reset = HTTPClientRequest(url: endpoint.absoluteString + "/moto-api/reset-auth")
        reset.method = .POST
        reset.body = .bytes(ByteBuffer(string: "0"))
        let response = try await HTTPClient.shared.execute(reset, timeout: .seconds(30))
        let text = String(buffer: try await response.body.collect(upTo: 1 << 20))
        guard response.status == .ok else { throw Refused(step: "reset-auth", answer: text) }
    }

    /// One IAM query (while authentication is off, moto reads the service
    /// from the credential scope only); the answer's XML.
    private func iam(_ parameters: [(String, String)]) async throws -> String {
        var form = URLComponents()
        form.queryItems = ([("Version", "2010-05-08")] + parameters).map { URLQueryItem(name: $0.0, value: $0.1) }
        // A form body: `+` is a space there, so it is encoded.
        let body = (form.percentEncodedQuery ?? "").replacingOccurrences(of: "+", with: "%2B")
        var request = HTTPClientRequest(url: endpoint.absoluteString + "/")
        request.method = .POST
        request.headers.replaceOrAdd(name: "Content-Type", value: "application/x-www-form-urlencoded")
        request.headers.replaceOrAdd(name: "Authorization",
                                     value: "AWS4-HMAC-SHA256 Credential=setup/20260101/us-east-1/iam/aws4_request, SignedHeaders=host, Signature=0")
        request.body = .bytes(ByteBuffer(string: body))
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(30))
        let text = String(buffer: try await response.body.collect(upTo: 1 << 20))
        guard response.status == .ok else { throw Refused(step: parameters.first?.1 ?? "?", answer: text) }
        return text
    }

    private static func element(_ name: String, in text: String) -> String? {
        guard let start = text.range(of: "<\(name)>"), let end = text.range(of: "</\(name)>", range: start.upperBound..<text.endIndex) else { return nil }
        return String(text[start.upperBound..<end.lowerBound])
    }

    /// moto refused a step of ``requireSignatures()``.
    public struct Refused: Error, CustomStringConvertible {
        public let step: String
        public let answer: String
        public var description: String { "moto refused \(step): \(answer.prefix(500))" }
    }

    /// moto is not installed, or did not start.
    public struct Missing: Error, CustomStringConvertible {
        public let path: String
        public var description: String { "moto_server is missing or did not start (\(path)); scripts/test installs it with scripts/install-python-tools" }
    }
}
