import Foundation
import ChildProcesses
@testable import ImagoCLI
import LoopbackServer
import Testing
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `imago serve` with tracing: spans exported over OTLP/HTTP to a real
/// receiver on loopback (`scripts/otlp-receiver`, opentelemetry-proto's
/// decoder), the incoming `traceparent` continued, and the trace carried on
/// to the origins and the result store. Not in a build without the exporter
/// (`IMAGO_WITHOUT_OTLP`, the sanitizer builds').
@Suite(.enabled(if: ServeTracing.isBuiltIn, "built without the OTLP exporter (IMAGO_WITHOUT_OTLP)"))
struct TracingTests {
    /// One span as the receiver wrote it.
    struct ExportedSpan: CustomStringConvertible {
        let name: String
        let kind: String
        let service: String?
        let traceID: String
        let spanID: String
        let parentSpanID: String
        let status: String
        let attributes: [String: String]

        init(_ json: [String: Any]) {
            name = json["name"] as? String ?? ""
            kind = json["kind"] as? String ?? ""
            service = json["service"] as? String
            traceID = json["trace_id"] as? String ?? ""
            spanID = json["span_id"] as? String ?? ""
            parentSpanID = json["parent_span_id"] as? String ?? ""
            status = json["status"] as? String ?? ""
            attributes = (json["attributes"] as? [String: Any] ?? [:]).mapValues { "\($0)" }
        }

        var description: String { "\(name) (\(kind)) \(spanID) <- \(parentSpanID)" }
    }

    /// `scripts/otlp-receiver` on a free loopback port, writing to a file of its own.
    final class Receiver: @unchecked Sendable {
        let process = Process()
        let output = FileManager.default.temporaryDirectory.appendingPathComponent("imago-spans-\(UUID().uuidString).jsonl")
        private(set) var port = 0
        /// The collector's base URL, as `--otlp-endpoint` takes it.
        var endpoint: String { "http://127.0.0.1:\(port)" }

        /// Starts a receiver of OTLP/HTTP, or of OTLP/gRPC with `grpc`.
        init(grpc: Bool = false) throws {
            let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../..").standardized
            let python = ProcessInfo.processInfo.environment["IMAGO_PYTHON"] ?? root.appendingPathComponent(".build/python/bin/python").path
            guard FileManager.default.isExecutableFile(atPath: python) else { throw ReceiverMissing(detail: "no \(python)") }
            process.executableURL = URL(fileURLWithPath: python)
            process.arguments = [root.appendingPathComponent("scripts/otlp-receiver").path, "--out", output.path] + (grpc ? ["--grpc"] : [])
            let standardOutput = Pipe()
            process.standardOutput = standardOutput
            process.standardError = FileHandle.nullDevice
            try process.startTiedToThisProcess()
            let text = ServeTests.firstLine(of: standardOutput)
            guard text.hasPrefix("listening on "), let port = Int(text.dropFirst("listening on ".count)) else {
                process.terminate()
                throw ReceiverMissing(detail: "it printed \"\(text)\"")
            }
            self.port = port
        }

        /// Every line written so far: the spans, and anything posted elsewhere than /v1/traces.
        var records: [[String: Any]] {
            guard let text = try? String(contentsOf: output, encoding: .utf8) else { return [] }
            return text.split(separator: "\n").compactMap { line in
                (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any]
            }
        }

        var spans: [ExportedSpan] { records.filter { $0["unexpected"] == nil }.map(ExportedSpan.init) }

        /// The spans once every name of `names` is among them, or what there is after `timeout`.
        func spans(including names: Set<String>, timeout: Duration = .seconds(20)) async throws -> [ExportedSpan] {
            let deadline = ContinuousClock.now + timeout
            while ContinuousClock.now < deadline {
                let found = spans
                if names.isSubset(of: Set(found.map(\.name))) { return found }
                try await Task.sleep(for: .milliseconds(100))
            }
            return spans
        }

        deinit {
            // SIGKILL: the receiver keeps nothing to flush (each export is written as it arrives).
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
            process.waitUntilExit()
            try? FileManager.default.removeItem(at: output)
        }
    }

    struct ReceiverMissing: Error, CustomStringConvertible {
        let detail: String
        var description: String {
            "scripts/otlp-receiver did not start (\(detail)); scripts/test installs its Python with scripts/install-python-tools"
        }
    }

    /// A W3C trace context of random ids: `traceparent`'s value and its parts.
    struct IncomingTrace {
        let traceID = Self.hex(bytes: 16)
        let parentID = Self.hex(bytes: 8)
        var traceparent: String { "00-\(traceID)-\(parentID)-01" }

        static func hex(bytes: Int) -> String {
            (0..<bytes).map { _ in String(format: "%02x", UInt8.random(in: 0...255)) }.joined()
        }
    }

    /// A GET to `server` with `traceparent`.
    static func get(_ path: String, from server: ServeTests.Running, trace: IncomingTrace) async throws -> Int {
        var request = URLRequest(url: server.url(path))
        request.setValue(trace.traceparent, forHTTPHeaderField: "traceparent")
        let (_, response) = try await URLSession.shared.data(for: request)
        return (response as? HTTPURLResponse)?.statusCode ?? 0
    }

    /// Ends a test whose spans (found by name) are missing.
    struct MissingSpan: Error, CustomStringConvertible {
        let name: String
        let spans: [ExportedSpan]
        var description: String { "no span \(name) among \(spans)" }
    }

    static func span(_ name: String, in spans: [ExportedSpan], parent: String? = nil) throws -> ExportedSpan {
        guard let span = spans.first(where: { $0.name == name && (parent == nil || $0.parentSpanID == parent) }) else {
            throw MissingSpan(name: name + (parent.map { " under \($0)" } ?? ""), spans: spans)
        }
        return span
    }

    static let renderChildren = ["store.lookup", "source.fetch", "decode", "process", "encode", "store.write"]

    @Test func aRequestIsOneSpanTreeInTheIncomingTraceCarriedOnToTheOrigin() async throws {
        let receiver = try Receiver()
        let origin = try await LoopbackServer.start(routes: ["/photo.jpg": .ok(ServeTests.jpeg, contentType: "image/jpeg")])
        let store = FileManager.default.temporaryDirectory.appendingPathComponent("imago-trace-store-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: store) }
        let server = try await ServeTests.Running(
            ["--unsigned", "--allow-private-networks", "--otlp-endpoint", receiver.endpoint, "--result-store", store.absoluteString,
             "--otlp-propagate-external"],
            environment: ["OTEL_BSP_SCHEDULE_DELAY": "100", "OTEL_SERVICE_NAME": "imago-under-test"]
        )
        let trace = IncomingTrace()
        #expect(try await Self.get(ServeTests.imagePath("rs:fit:60:60", origin.url("/photo.jpg")), from: server, trace: trace) == 200)
        let spans = try await receiver.spans(including: Set(Self.renderChildren + ["GET /**", "GET"]))
        #expect(await server.stop() == 0)

        // The request's span continues the client's trace, under its span.
        let request = try Self.span("GET /**", in: spans)
        #expect(request.kind == "server")
        #expect(request.traceID == trace.traceID)
        #expect(request.parentSpanID == trace.parentID)
        #expect(request.service == "imago-under-test")
        #expect(request.attributes["http.response.status_code"] == "200")
        #expect(request.attributes["imago.outcome"] == "miss")
        // Its children, one of each, in the same trace.
        for name in Self.renderChildren {
            let child = try Self.span(name, in: spans)
            #expect(child.parentSpanID == request.spanID, "\(name)'s parent: \(spans)")
            #expect(child.traceID == trace.traceID, "\(name)")
            #expect(spans.filter { $0.name == name }.count == 1, "\(name)")
        }
        #expect(try Self.span("store.lookup", in: spans).attributes["imago.result_store.result"] == "miss")
        #expect(try Self.span("source.fetch", in: spans).attributes["imago.source.layer"] == "network")
        // The origin's request is a client span below the fetch, and the origin got its context.
        let fetch = try Self.span("source.fetch", in: spans)
        let client = try Self.span("GET", in: spans, parent: fetch.spanID)
        #expect(client.kind == "client")
        #expect(client.attributes["http.response.status_code"] == "200")
        let sent = origin.requests(for: "/photo.jpg").first?.header("traceparent")
        #expect(sent == "00-\(trace.traceID)-\(client.spanID)-01")
        // Nothing but traces was posted.
        #expect(receiver.records.allSatisfy { $0["unexpected"] == nil }, "\(receiver.records)")
        // The request's log line carries the trace.
        let line = server.log.split(separator: "\n").first { $0.contains("GET /insecure/rs:fit:60:60/") }
        #expect(line?.contains("trace_id=\(trace.traceID)") == true, "\(server.log)")
        try await origin.stop()
    }

    /// S3 sources and an S3 result store, here a loopback stand-in for S3
    /// that keeps every request: each of them carries the trace on.
    @Test func s3SourcesAndTheS3ResultStoreGetTheTraceToo() async throws {
        let receiver = try Receiver()
        let s3 = try await LoopbackServer.start(routes: ["/photos/photo.jpg": .ok(ServeTests.jpeg, contentType: "image/jpeg")])
        let server = try await ServeTests.Running(
            ["--unsigned", "--use-s3", "--s3-endpoint", s3.baseURL.absoluteString, "--result-store", "s3://store/renders",
             "--otlp-endpoint", receiver.endpoint, "--otlp-propagate-external"],
            environment: ["OTEL_BSP_SCHEDULE_DELAY": "100", "AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing"]
        )
        let trace = IncomingTrace()
        let path = "/insecure/rs:fit:40:40/plain/" + "s3://photos/photo.jpg".addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
        #expect(try await Self.get(path, from: server, trace: trace) == 200)
        let spans = try await receiver.spans(including: Set(Self.renderChildren + ["PUT"]))
        #expect(await server.stop() == 0)

        let request = try Self.span("GET /**", in: spans)
        #expect(request.traceID == trace.traceID)
        // One client span for each request to S3, below the span that made it, whose id the request carried.
        for (parent, method, path) in [("store.lookup", "GET", "/store/renders/"), ("source.fetch", "GET", "/photos/photo.jpg"),
                                       ("store.write", "PUT", "/store/renders/")] {
            let owner = try Self.span(parent, in: spans, parent: request.spanID)
            let client = try Self.span(method, in: spans, parent: owner.spanID)
            #expect(client.kind == "client")
            let sent = s3.requests.filter { $0.method == method && $0.path.hasPrefix(path) }.compactMap { $0.header("traceparent") }
            #expect(sent == ["00-\(trace.traceID)-\(client.spanID)-01"], "\(method) \(path)")
        }
        try await s3.stop()
    }

    /// How a test configures tracing, and whether spans go out.
    enum Setting: String, CaseIterable, CustomTestStringConvertible {
        /// No endpoint anywhere: no tracing.
        case nothing
        /// OTEL_EXPORTER_OTLP_ENDPOINT alone: exported over HTTP (protobuf).
        case standardVariable
        /// OTEL_EXPORTER_OTLP_ENDPOINT with OTEL_SDK_DISABLED=true: no tracing.
        case disabled
        /// OTEL_EXPORTER_OTLP_PROTOCOL=grpc: exported over gRPC.
        case grpc
        /// OTEL_EXPORTER_OTLP_TRACES_PROTOCOL=http/json: exported as OTLP's JSON.
        case json
        /// imgproxy's IMGPROXY_OPEN_TELEMETRY_ENABLE with the standard
        /// endpoint and no protocol: gRPC, imgproxy's default.
        case imgproxyEnable
        /// IMGPROXY_OPEN_TELEMETRY_ENABLE=false with no endpoint: no tracing.
        case imgproxyDisabled
        /// imgproxy 3's IMGPROXY_OPEN_TELEMETRY_ENDPOINT (host:port),
        /// _PROTOCOL=http and _SERVICE_NAME: exported over HTTP, named.
        case imgproxy3

        var testDescription: String { rawValue }
        var exports: Bool { ![.nothing, .disabled, .imgproxyDisabled].contains(self) }
        var usesGRPC: Bool { self == .grpc || self == .imgproxyEnable }
        var service: String { self == .imgproxy3 ? "thumbnails" : "imago" }

        func environment(_ receiver: Receiver) -> [String: String] {
            let endpoint = ["OTEL_EXPORTER_OTLP_ENDPOINT": receiver.endpoint]
            let variables: [String: String] = switch self {
            case .nothing: [:]
            case .standardVariable: endpoint
            case .disabled: endpoint.merging(["OTEL_SDK_DISABLED": "true"]) { $1 }
            case .grpc: endpoint.merging(["OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"]) { $1 }
            case .json: endpoint.merging(["OTEL_EXPORTER_OTLP_PROTOCOL": "grpc", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "http/json"]) { $1 }
            case .imgproxyEnable: endpoint.merging(["IMGPROXY_OPEN_TELEMETRY_ENABLE": "true"]) { $1 }
            case .imgproxyDisabled: ["IMGPROXY_OPEN_TELEMETRY_ENABLE": "false", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"]
            case .imgproxy3: ["IMGPROXY_OPEN_TELEMETRY_ENDPOINT": "127.0.0.1:\(receiver.port)", "IMGPROXY_OPEN_TELEMETRY_PROTOCOL": "http",
                              "IMGPROXY_OPEN_TELEMETRY_SERVICE_NAME": "thumbnails"]
            }
            return variables.merging(["OTEL_BSP_SCHEDULE_DELAY": "100"]) { $1 }
        }
    }

    @Test(arguments: Setting.allCases)
    func exportingIsOffUnlessAnEndpointIsConfigured(setting: Setting) async throws {
        let receiver = try Receiver(grpc: setting.usesGRPC)
        let origin = try await LoopbackServer.start(routes: ["/photo.jpg": .ok(ServeTests.jpeg, contentType: "image/jpeg")])
        let server = try await ServeTests.Running(["--unsigned", "--allow-private-networks", "--otlp-propagate-external"],
                                                  environment: setting.environment(receiver))
        let trace = IncomingTrace()
        #expect(try await Self.get(ServeTests.imagePath("rs:fit:30:30", origin.url("/photo.jpg")), from: server, trace: trace) == 200)
        if setting.exports { _ = try await receiver.spans(including: ["GET /**", "encode"]) }
        // Stopping sends what the exporter still holds.
        #expect(await server.stop() == 0)
        let spans = receiver.spans
        let sent = origin.requests(for: "/photo.jpg").first?.header("traceparent")
        if setting.exports {
            #expect(try Self.span("GET /**", in: spans).traceID == trace.traceID)
            #expect(try Self.span("GET /**", in: spans).service == setting.service)
            #expect(!server.log.contains("imgproxy setting"), "every imgproxy variable used is read: \(server.log)")
            #expect(sent?.contains(trace.traceID) == true)
            #expect(server.log.contains("trace_id=\(trace.traceID)"))
        } else {
            #expect(spans.isEmpty, "\(spans)")
            #expect(sent == nil)
            #expect(!server.log.contains("trace_id="), "\(server.log)")
        }
        #expect(receiver.records.allSatisfy { $0["unexpected"] == nil }, "\(receiver.records)")
        try await origin.stop()
    }

    /// Without `--otlp-propagate-external` (imgproxy's default), a client's
    /// `traceparent` is not continued: the request starts a trace of its
    /// own, which the origin is sent; with it, the client's trace goes on.
    @Test(arguments: [false, true])
    func aClientsTraceIsContinuedOnlyWhenPropagationIsOn(propagates: Bool) async throws {
        let receiver = try Receiver()
        let origin = try await LoopbackServer.start(routes: ["/photo.jpg": .ok(ServeTests.jpeg, contentType: "image/jpeg")])
        let server = try await ServeTests.Running(["--unsigned", "--allow-private-networks"] + (propagates ? ["--otlp-propagate-external"] : []),
                                                  environment: ["IMGPROXY_OPEN_TELEMETRY_ENABLE": "true", "IMGPROXY_OPEN_TELEMETRY_PROTOCOL": "http",
                                                                "OTEL_EXPORTER_OTLP_ENDPOINT": receiver.endpoint, "OTEL_BSP_SCHEDULE_DELAY": "100"])
        let trace = IncomingTrace()
        #expect(try await Self.get(ServeTests.imagePath("rs:fit:30:30", origin.url("/photo.jpg")), from: server, trace: trace) == 200)
        let spans = try await receiver.spans(including: ["GET /**"])
        #expect(await server.stop() == 0)
        let request = try Self.span("GET /**", in: spans)
        let sent = origin.requests(for: "/photo.jpg").first?.header("traceparent") ?? ""
        #expect((request.traceID == trace.traceID) == propagates, "\(request.traceID) against the client's \(trace.traceID)")
        #expect(sent.contains(request.traceID), "the origin is sent the request's trace: \(sent)")
        try await origin.stop()
    }

    /// `--otlp-metrics` and `--otlp-logs` (imgproxy's `_ENABLE_METRICS` and
    /// `_ENABLE_LOGS`) send the server's metrics and log lines to the
    /// collector too, while /metrics and standard error keep theirs.
    @Test func metricsAndLogLinesGoToTheCollectorWhenAskedFor() async throws {
        let receiver = try Receiver()
        let origin = try await LoopbackServer.start(routes: ["/photo.jpg": .ok(ServeTests.jpeg, contentType: "image/jpeg")])
        let server = try await ServeTests.Running(["--unsigned", "--allow-private-networks"], environment: [
            "IMGPROXY_OPEN_TELEMETRY_ENABLE": "true", "IMGPROXY_OPEN_TELEMETRY_PROTOCOL": "http",
            "IMGPROXY_OPEN_TELEMETRY_ENABLE_METRICS": "true", "IMGPROXY_OPEN_TELEMETRY_ENABLE_LOGS": "true",
            "OTEL_EXPORTER_OTLP_ENDPOINT": receiver.endpoint, "OTEL_BSP_SCHEDULE_DELAY": "100",
            "OTEL_METRIC_EXPORT_INTERVAL": "200", "OTEL_BLRP_SCHEDULE_DELAY": "100",
        ])
        #expect(try await Self.get(ServeTests.imagePath("rs:fit:30:30", origin.url("/photo.jpg")), from: server, trace: IncomingTrace()) == 200)
        let deadline = ContinuousClock.now + .seconds(20)
        while ContinuousClock.now < deadline {
            let records = receiver.records
            if records.contains(where: { $0["metric"] != nil }) && records.contains(where: { $0["log"] != nil }) { break }
            try await Task.sleep(for: .milliseconds(100))
        }
        #expect(await server.stop() == 0)
        let records = receiver.records
        let metricNames = Set(records.compactMap { $0["metric"] as? String })
        let lines = records.compactMap { $0["log"] as? String }
        #expect(metricNames.contains { $0.hasPrefix("imago_") }, "\(metricNames)")
        #expect(lines.contains { $0.contains("GET") }, "the request's line: \(lines)")
        #expect(records.allSatisfy { $0["unexpected"] == nil }, "\(records.filter { $0["unexpected"] != nil })")
        // Prometheus's /metrics and standard error still have theirs.
        #expect(server.log.contains("GET"))
        try await origin.stop()
    }

    /// Without a collector, metrics and logs over OTLP cannot start.
    @Test func metricsOverOTLPNeedACollector() async throws {
        let run = try await ServeTests.serveToExit(["--unsigned", "--otlp-metrics"])
        #expect(run.status == 1)
        #expect(run.stderr.contains("--otlp-metrics"), "\(run.stderr)")
    }

    @Test func printConfigNamesTheEndpointAndWhereItCameFrom() async throws {
        func printed(_ arguments: [String], _ environment: [String: String]) async throws -> String {
            let run = try await CLITests().imago(["serve", "--print-config", "--unsigned"] + arguments, environment: environment)
            return run.stdout.split(separator: "\n").first { $0.hasPrefix("otlp-endpoint = ") }.map(String.init) ?? run.stdout
        }
        #expect(try await printed([], [:]) == "otlp-endpoint = (none: no tracing)")
        #expect(try await printed(["--otlp-endpoint", "http://collector:4318"], ["OTEL_EXPORTER_OTLP_ENDPOINT": "http://other:4318"])
            == "otlp-endpoint = http://collector:4318/v1/traces")
        #expect(try await printed([], ["IMAGO_OTLP_ENDPOINT": "http://collector:4318"]) == "otlp-endpoint = http://collector:4318/v1/traces")
        #expect(try await printed([], ["OTEL_EXPORTER_OTLP_ENDPOINT": "http://other:4318"])
            == "otlp-endpoint = http://other:4318/v1/traces (OTEL_EXPORTER_OTLP_ENDPOINT)")
        #expect(try await printed([], ["OTEL_EXPORTER_OTLP_ENDPOINT": "http://other:4318", "OTEL_SDK_DISABLED": "true"])
            == "otlp-endpoint = (none: no tracing)")
        #expect(try await ServeTests.serveToExit(["--unsigned", "--otlp-endpoint", "collector:4318"]).status == 2)
    }

    /// The protocol, where it came from, and the endpoint it implies;
    /// imgproxy's variables mean what they mean to imgproxy.
    @Test func printConfigNamesTheProtocolAndImgproxysVariablesApply() async throws {
        func printed(_ arguments: [String], _ environment: [String: String]) async throws -> [String: String] {
            let run = try await CLITests().imago(["serve", "--print-config", "--unsigned"] + arguments, environment: environment)
            #expect(run.status == 0, "\(run.stderr)")
            var lines: [String: String] = [:]
            for line in run.stdout.split(separator: "\n") where line.hasPrefix("otlp") {
                let parts = line.split(separator: " = ", maxSplits: 1).map(String.init)
                if parts.count == 2, ["otlp", "otlp-endpoint", "otlp-protocol"].contains(parts[0]) { lines[parts[0]] = parts[1] }
            }
            return lines
        }
        #expect(try await printed([], [:]) == ["otlp": "false", "otlp-endpoint": "(none: no tracing)", "otlp-protocol": "(none: no tracing)"])
        #expect(try await printed(["--otlp-endpoint", "http://collector:4318"], [:])["otlp-protocol"] == "http/protobuf (the default)")
        #expect(try await printed(["--otlp-endpoint", "http://collector:4318"], [:])["otlp-endpoint"] == "http://collector:4318/v1/traces")
        // gRPC sends to the endpoint as it is; the flag wins over the variables.
        #expect(try await printed(["--otlp-endpoint", "http://collector:4317"], ["OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"])
            == ["otlp": "false", "otlp-endpoint": "http://collector:4317", "otlp-protocol": "grpc (OTEL_EXPORTER_OTLP_PROTOCOL)"])
        #expect(try await printed(["--otlp-protocol", "http/json"], ["OTEL_EXPORTER_OTLP_PROTOCOL": "grpc", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318/"])
            == ["otlp": "false", "otlp-endpoint": "http://c:4318/v1/traces (OTEL_EXPORTER_OTLP_ENDPOINT)", "otlp-protocol": "http/json"])
        #expect(try await printed([], ["OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://c:4318/custom"])["otlp-endpoint"]
            == "http://c:4318/custom (OTEL_EXPORTER_OTLP_TRACES_ENDPOINT)")
        // --otlp alone: the protocol's collector on localhost.
        #expect(try await printed(["--otlp"], [:])
            == ["otlp": "true", "otlp-endpoint": "http://localhost:4318/v1/traces (the default for http/protobuf)", "otlp-protocol": "http/protobuf (the default)"])
        // imgproxy's switch: gRPC to localhost, as imgproxy; its protocol names; its 3.x endpoint, with the scheme its protocol implies.
        #expect(try await printed([], ["IMGPROXY_OPEN_TELEMETRY_ENABLE": "true"])
            == ["otlp": "true", "otlp-endpoint": "http://localhost:4317 (the default for grpc)", "otlp-protocol": "grpc"])
        #expect(try await printed([], ["IMGPROXY_OPEN_TELEMETRY_ENABLE": "true", "OTEL_EXPORTER_OTLP_PROTOCOL": "https"])["otlp-protocol"]
            == "http/protobuf (OTEL_EXPORTER_OTLP_PROTOCOL)")
        #expect(try await printed([], ["IMGPROXY_OPEN_TELEMETRY_ENDPOINT": "collector:4318", "IMGPROXY_OPEN_TELEMETRY_PROTOCOL": "https"])
            == ["otlp": "false", "otlp-endpoint": "https://collector:4318/v1/traces", "otlp-protocol": "http/protobuf"])
        #expect(try await printed([], ["IMGPROXY_OPEN_TELEMETRY_ENDPOINT": "collector:4317", "IMGPROXY_OPEN_TELEMETRY_GRPC_INSECURE": "false"])
            == ["otlp": "false", "otlp-endpoint": "https://collector:4317", "otlp-protocol": "grpc"])
        #expect(try await printed([], ["IMGPROXY_OPEN_TELEMETRY_ENDPOINT": "collector:4317", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://other:4318"])["otlp-endpoint"]
            == "http://other:4318/v1/traces (OTEL_EXPORTER_OTLP_ENDPOINT)", "the standard variable wins over imgproxy 3's")
    }

    /// A protocol or an endpoint that is not one is a usage error naming
    /// where it came from, before anything starts (a protocol even with
    /// tracing off).
    @Test func anUnknownProtocolOrEndpointIsAUsageError() async throws {
        for (arguments, environment, named) in [
            (["--otlp-protocol", "thrift"], [String: String](), "--otlp-protocol thrift"),
            ([], ["OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_EXPORTER_OTLP_PROTOCOL": "zipkin"], "OTEL_EXPORTER_OTLP_PROTOCOL zipkin"),
            ([], ["OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "collector:4318"], "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT collector:4318"),
            ([], ["IMGPROXY_OPEN_TELEMETRY_ENABLE": "1", "IMGPROXY_OPEN_TELEMETRY_PROTOCOL": "udp"], "--otlp-protocol udp"),
            (["--otlp"], ["OTEL_TRACES_EXPORTER": "console"], "OTEL_TRACES_EXPORTER console"),
        ] {
            // --print-config: the server never starts, whatever the checks say.
            let run = try await CLITests().imago(["serve", "--print-config", "--unsigned"] + arguments, environment: environment)
            #expect(run.status == 2, "\(arguments) \(environment): \(run.stderr)")
            #expect(run.stderr.contains(named), "\(run.stderr)")
        }
    }
}
