import AsyncHTTPClient
import ChildProcesses
import Foundation
import Imago
import ImagoCodecs
import ImagoServer
import LoopbackServer
import S3Peer
import NIOCore
import NIOHTTP1
import ServeProcess
import Testing

/// imgproxy's own tests, ported as tables (`Cases/*.json`), run against a
/// real `imago serve` over HTTP: every case that is not listed in
/// `Cases/known-failures.txt` must pass, and every listed one must still
/// fail (so the list only shrinks, and names each open gap).
@Suite(.serialized) struct ImgproxyParityTests {
    static let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Cases")

    @Test func imgproxysTestsPassOverHTTP() async throws {
        let cases = try ParityCase.load(from: Self.folder)
        let repeated = Dictionary(grouping: cases, by: \.name).filter { $0.value.count > 1 }.keys
        try #require(repeated.isEmpty, "case names must be unique: \(repeated.sorted())")
        let known = try Self.knownFailures()
        let fixtures = try ParityFixtures.all()
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("imago-parity-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: root) }
        for (name, data) in fixtures {
            let file = root.appendingPathComponent(name)
            try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
            try data.write(to: file)
        }

        let origin = try await LoopbackServer.start(handler: { request in
            fixtures[String(request.path.dropFirst())].map { ServedResponse.ok($0, contentType: nil) }
        })
        // moto stands in for S3, and for GCS's XML API, when a case uses them: bucket test-bucket holds test1.png.
        let moto = try await Self.s3Peer(for: cases.filter(\.runs), fixtures: fixtures)
        let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: .init(redirectConfiguration: .disallow))
        var results: [(ParityCase, String?)] = []   // nil: passed
        // One server per environment, the cases in their files' order.
        let runnable = cases.filter(\.runs)
        for item in runnable {
            for (name, text) in item.files { try Data(text.utf8).write(to: root.appendingPathComponent(name)) }
        }
        let groups = Dictionary(grouping: runnable) { $0.serverEnvironment.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: "\n") }
        for key in groups.keys.sorted() {
            let group = groups[key]!
            var environment = group[0].serverEnvironment.mapValues { Self.expand($0, origin: origin, root: root) }
            if let moto, Self.usesS3(environment) {
                environment.merge(["IMGPROXY_S3_ENDPOINT": moto.endpoint.absoluteString, "AWS_ACCESS_KEY_ID": "testing",
                                   "AWS_SECRET_ACCESS_KEY": "testing"]) { given, _ in given }
            }
            if let moto, Self.usesGCS(environment) {
                environment.merge(["IMGPROXY_GCS_ENDPOINT": moto.endpoint.absoluteString, "IMAGO_GCS_HMAC_ACCESS_ID": "testing",
                                   "IMAGO_GCS_HMAC_SECRET": "testing"]) { given, _ in given }
            }
            let server: ServeProcess
            do {
                server = try await Self.serve(environment, root: root)
            } catch {
                results += group.map { ($0, $0.expect.startFails ? nil : "the server did not start: \(error)") }
                continue
            }
            for item in group {
                let failure = item.expect.startFails
                    ? "the server started"
                    : await Self.run(item, server: server, origin: origin, client: client, fixtures: fixtures, environment: environment)
                results.append((item, failure))
            }
            _ = await server.stop()
        }
        try await client.shutdown()
        try await origin.stop()

        var unexpected: [String] = []
        var fixed: [String] = []
        for (item, failure) in results {
            if let failure, known[item.name] == nil { unexpected.append("\(item.name): \(failure)") }
            if failure == nil, known[item.name] != nil { fixed.append(item.name) }
        }
        let stale = Set(known.keys).subtracting(results.map(\.0.name))
        print(Self.summary(cases: cases, results: results))
        if ProcessInfo.processInfo.environment["IMAGO_PARITY_RECORD"] != nil {
            // Rewrites the list from this run: a developer's tool after a fix, never in CI.
            let lines = results.compactMap { item, failure in
                failure.map { "\(item.name)  # \(String($0.replacingOccurrences(of: "\n", with: " ").prefix(160)))" }
            }
            try (Self.knownFailuresHeader + lines.sorted().joined(separator: "\n") + "\n")
                .write(to: Self.folder.appendingPathComponent("known-failures.txt"), atomically: true, encoding: .utf8)
            return
        }
        #expect(unexpected.isEmpty, "cases that fail and are not in known-failures.txt:\n\(unexpected.joined(separator: "\n"))")
        #expect(fixed.isEmpty, "cases that pass now: take them out of known-failures.txt:\n\(fixed.joined(separator: "\n"))")
        #expect(stale.isEmpty, "known-failures.txt names cases that do not run: \(stale.sorted())")
    }

    static let knownFailuresHeader = """
    # The ported imgproxy cases that fail today, one a line: FILE/TEST  # what differs.
    # The parity test fails when a case not listed here fails, and when a listed one passes.
    # IMAGO_PARITY_RECORD=1 swift test --package-path Tools --filter ImgproxyParityTests rewrites it.

    """

    /// `Cases/known-failures.txt`: `file/test  # why` (two spaces before the `#`), one a line.
    static func knownFailures() throws -> [String: String] {
        let text = (try? String(contentsOf: folder.appendingPathComponent("known-failures.txt"), encoding: .utf8)) ?? ""
        var known: [String: String] = [:]
        for line in text.split(separator: "\n") where !line.hasPrefix("#") && !line.trimmingCharacters(in: .whitespaces).isEmpty {
            // The name may hold a "#"; the reason follows "  # ".
            let parts = line.components(separatedBy: "  # ")
            known[parts[0].trimmingCharacters(in: .whitespaces)] = parts.dropFirst().joined(separator: "  # ")
        }
        return known
    }

    /// `imago serve` with the case's variables and the runner's own, and
    /// Whether `environment` turns imgproxy's S3 sources on.
    static func usesS3(_ environment: [String: String]) -> Bool {
        ["1", "t", "true", "yes", "on"].contains(environment["IMGPROXY_USE_S3"]?.lowercased() ?? "")
    }

    /// Whether `environment` turns imgproxy's GCS sources on.
    static func usesGCS(_ environment: [String: String]) -> Bool {
        ["1", "t", "true", "yes", "on"].contains(environment["IMGPROXY_USE_GCS"]?.lowercased() ?? "")
    }

    /// moto, started when a case turns S3 or GCS on, with bucket `test-bucket`
    /// holding `test1.png` (imgproxy's storage tests' object); else `nil`.
    static func s3Peer(for cases: [ParityCase], fixtures: [String: Data]) async throws -> MotoServer? {
        guard cases.contains(where: { usesS3($0.serverEnvironment) || usesGCS($0.serverEnvironment) }) else { return nil }
        let moto = try await MotoServer()
        #expect(try await moto.put("/test-bucket") == 200)
        #expect(try await moto.put("/test-bucket/test1.png", fixtures["test1.png"]!, contentType: "image/png") == 200)
        return moto
    }

    /// nothing from this process's environment but the system's.
    static func serve(_ environment: [String: String], root: URL) async throws -> ServeProcess {
        var variables = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("IMGPROXY_") && !$0.key.hasPrefix("IMAGO_") }
        variables["IMGPROXY_LOCAL_FILESYSTEM_ROOT"] = root.path
        variables["IMGPROXY_ALLOW_LOOPBACK_SOURCE_ADDRESSES"] = "true"
        variables.merge(environment) { $1 }
        let signed = variables["IMGPROXY_KEY"] != nil || variables["IMAGO_KEY"] != nil
        return try await ServeProcess(signed ? [] : ["--unsigned"], environment: variables, replacingEnvironment: true)
    }

    /// Runs one case: `nil` when it passes, else what differed.
    static func run(_ item: ParityCase, server: ServeProcess, origin: LoopbackServer, client: HTTPClient,
                    fixtures: [String: Data], environment: [String: String]) async -> String? {
        for (path, route) in item.origin {
            let body = route.file.flatMap { fixtures[$0] } ?? Data((route.body ?? "").utf8)
            origin.route(path, ServedResponse(status: route.status, headers: route.headers.map { (name: $0.0, value: $0.1) }, body: body))
        }
        let path = expand(item.path, origin: origin, environment: environment)
        let before = origin.requests.count
        var request = HTTPClientRequest(url: "http://127.0.0.1:\(server.port)\(path)")
        request.method = HTTPMethod(rawValue: item.method)
        for (name, value) in item.requestHeaders { request.headers.add(name: name, value: value) }
        let status: Int
        let headers: HTTPHeaders
        let body: Data
        do {
            let response = try await client.execute(request, timeout: .seconds(60))
            status = Int(response.status.code)
            headers = response.headers
            body = Data(buffer: try await response.body.collect(upTo: 64 << 20))
        } catch {
            return "no answer: \(error)"
        }
        var wrong: [String] = []
        let expect = item.expect
        if let expected = expect.status, expected != status {
            let text = String(decoding: body.prefix(200), as: UTF8.self)
            wrong.append("status \(status), not \(expected)" + (status >= 400 ? " (\(text))" : ""))
        }
        for (name, value) in expect.headers where headers[name].joined(separator: ", ") != value {
            wrong.append("\(name): \(headers[name].first ?? "(none)"), not \(value)")
        }
        for (name, pattern) in expect.headersMatching {
            let value = headers[name].joined(separator: ", ")
            if value.range(of: pattern, options: .regularExpression) == nil { wrong.append("\(name): \"\(value)\" does not match \(pattern)") }
        }
        for name in expect.headersAbsent where !headers[name].isEmpty {
            wrong.append("\(name) is there (\(headers[name].joined(separator: ", ")))")
        }
        if let image = expect.image {
            if let info = try? ImageDecoders.info(for: body) {
                if let format = image.format, !Self.sameFormat(info.format, format) { wrong.append("format \(info.format), not \(format)") }
                if let width = image.width, width != info.width { wrong.append("width \(info.width), not \(width)") }
                if let height = image.height, height != info.height { wrong.append("height \(info.height), not \(height)") }
            } else {
                wrong.append("the body is not an image Imago reads (\(body.count) bytes)")
            }
        }
        if let file = expect.bodyEqualsFile, fixtures[file] != body { wrong.append("the body is not \(file)") }
        let received = origin.requests.dropFirst(before)
        for (name, value) in expect.originRequestHeaders where !received.contains(where: { $0.header(name) == value }) {
            wrong.append("the origin did not receive \(name): \(value) (it got \(received.compactMap { $0.header(name) }))")
        }
        for name in expect.originRequestHeadersAbsent {
            let sent = received.compactMap { $0.header(name) }
            if !sent.isEmpty { wrong.append("the origin received \(name): \(sent)") }
        }
        return wrong.isEmpty ? nil : wrong.joined(separator: "; ")
    }

    static func sameFormat(_ format: ImageFormat, _ name: String) -> Bool {
        let aliases = ["jpg": "jpeg", "tif": "tiff", "heif": "heic"]
        let wanted = aliases[name.lowercased()] ?? name.lowercased()
        return "\(format)".lowercased() == wanted
    }

    /// A variable's value with `{origin}` and `{fixtures}` (the local root's path) filled in.
    static func expand(_ value: String, origin: LoopbackServer, root: URL) -> String {
        value.replacingOccurrences(of: "{origin}", with: origin.baseURL.absoluteString).replacingOccurrences(of: "{fixtures}", with: root.path)
    }

    /// The path with `{origin}`, `{origin:encoded}`, `{origin:base64:PATH}` and `{signature}` filled in.
    static func expand(_ template: String, origin: LoopbackServer, environment: [String: String]) -> String {
        let base = origin.baseURL.absoluteString
        var path = template
        while let range = path.range(of: #"\{origin:base64:[^}]*\}"#, options: .regularExpression) {
            let tail = path[range].dropFirst("{origin:base64:".count).dropLast()
            let encoded = Data((base + tail).utf8).base64EncodedString()
                .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
            path.replaceSubrange(range, with: encoded)
        }
        path = path.replacingOccurrences(of: "{origin:encoded}", with: base.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!)
        path = path.replacingOccurrences(of: "{origin}", with: base)
        if let range = path.range(of: "{signature}") {
            let rest = String(path[range.upperBound...])
            let key = environment["IMGPROXY_KEY"]?.split(separator: ",").first.map(String.init) ?? ""
            let salt = environment["IMGPROXY_SALT"]?.split(separator: ",").first.map(String.init) ?? ""
            let size = environment["IMGPROXY_SIGNATURE_SIZE"].flatMap(Int.init) ?? SigningKey.digestSize
            let signature = (try? SigningKey(hexKey: key, hexSalt: salt))?.signature(forPath: rest, size: size) ?? "unsigned"
            path.replaceSubrange(range, with: signature)
        }
        return path
    }

    /// Counts per file: passed, failed, differences, unobservable.
    static func summary(cases: [ParityCase], results: [(ParityCase, String?)]) -> String {
        var lines = ["imgproxy parity: file | cases | pass | fail | difference (passing with its setting) | unobservable | superseded by v4"]
        for file in Set(cases.map(\.file)).sorted() {
            let all = cases.filter { $0.file == file }
            let ran = results.filter { $0.0.file == file }
            let passed = ran.filter { $0.1 == nil }
            let differences = passed.filter { if case .difference = $0.0.verdict { true } else { false } }.count
            let unobservable = all.filter { if case .unobservable = $0.verdict { true } else { false } }.count
            let superseded = all.filter { if case .superseded = $0.verdict { true } else { false } }.count
            lines.append("\(file) | \(all.count) | \(passed.count) | \(ran.count - passed.count) | \(differences) | \(unobservable) | \(superseded)")
        }
        return lines.joined(separator: "\n")
    }
}
