import ChildProcesses
import Foundation
#if canImport(Glibc)
import Glibc
#endif
@testable import ImagoCLI
import ImagoCodecs
import LoopbackServer
import ServeProcess
import Testing
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// imgproxy's metrics variables in `imago serve`: DogStatsD datagrams
/// caught by a real UDP listener on loopback, an agent that is not there,
/// the Prometheus namespace and listener, and the values that stop the start.
@Suite struct ServeMetricsTests {
    /// A DogStatsD agent's port on loopback: a UDP socket whose thread keeps every datagram it receives until ``stop()``.
    final class UDPReceiver: @unchecked Sendable {
        let port: Int
        private let descriptor: Int32
        private let lock = NSLock()
        private var received: [Data] = []
        private var stopped = false

        init() throws {
            (descriptor, port) = try Self.boundSocket()
            // recv wakes every 50 ms to see whether the test has stopped it.
            var wake = timeval(tv_sec: 0, tv_usec: 50_000)
            setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &wake, socklen_t(MemoryLayout<timeval>.size))
            Thread { [self] in receive() }.start()
        }

        /// Ends the receiving thread (within 50 ms), which closes the socket.
        func stop() { lock.withLock { stopped = true } }

        private func receive() {
            var buffer = [UInt8](repeating: 0, count: 65_536)
            while !lock.withLock({ stopped }) {
                let count = recv(descriptor, &buffer, buffer.count, 0)
                if count > 0 { lock.withLock { received.append(Data(buffer[..<count])) } }
            }
            close(descriptor)
        }

        /// The datagrams received so far.
        var datagrams: [Data] { lock.withLock { received } }

        /// The lines of every datagram so far.
        var lines: [Substring] {
            datagrams.flatMap { String(decoding: $0, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false) }
        }

        /// The lines, once `done` holds of them (parsed), or after `timeout`.
        func lines(until done: ([StatsLine]) -> Bool, timeout: Duration = .seconds(20)) async throws -> [Substring] {
            let deadline = ContinuousClock.now + timeout
            while ContinuousClock.now < deadline, !done(lines.compactMap(StatsLine.init)) {
                try await Task.sleep(for: .milliseconds(100))
            }
            return lines
        }

        /// A UDP port on loopback that nothing listens on (bound, then closed).
        static func unusedPort() throws -> Int {
            let (descriptor, port) = try boundSocket()
            close(descriptor)
            return port
        }

        /// A UDP socket bound to 127.0.0.1 on a free port, and that port.
        private static func boundSocket() throws -> (Int32, Int) {
            #if canImport(Glibc)
            let descriptor = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
            #else
            let descriptor = socket(AF_INET, SOCK_DGRAM, 0)
            #endif
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            let bound = withUnsafeMutablePointer(to: &address) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, length) == 0 && getsockname(descriptor, $0, &length) == 0 }
            }
            guard descriptor >= 0, bound else {
                close(descriptor)
                throw CannotListen(reason: String(cString: strerror(errno)))
            }
            return (descriptor, Int(UInt16(bigEndian: address.sin_port)))
        }

        struct CannotListen: Error {
            let reason: String
        }
    }

    /// One DogStatsD line, `name:value|type|#tag,tag` (`|@rate` allowed); `nil` for anything else.
    struct StatsLine: CustomStringConvertible {
        let name: String
        let value: Double
        let type: String
        let tags: Set<String>

        init?(_ text: Substring) {
            let fields = text.split(separator: "|", omittingEmptySubsequences: false)
            guard fields.count >= 2, let colon = fields[0].firstIndex(of: ":"), let value = Double(fields[0][colon...].dropFirst()) else { return nil }
            let name = fields[0][..<colon]
            guard let first = name.unicodeScalars.first, CharacterSet.letters.contains(first),
                  name.unicodeScalars.allSatisfy({ $0.isASCII && (CharacterSet.alphanumerics.contains($0) || $0 == "_" || $0 == ".") }),
                  ["c", "g", "h", "ms", "d", "s"].contains(fields[1]) else { return nil }
            var tags = Set<String>()
            for field in fields.dropFirst(2) {
                if field.hasPrefix("#") {
                    tags = Set(field.dropFirst().split(separator: ",").map(String.init))
                } else if !field.hasPrefix("@") {
                    return nil
                }
            }
            (self.name, self.value, self.type, self.tags) = (String(name), value, String(fields[1]), tags)
        }

        var description: String { "\(name):\(value)|\(type)|#\(tags.sorted().joined(separator: ","))" }
    }

    /// What the lines named `name` with every tag of `tags` add up to.
    static func total(_ lines: [StatsLine], _ name: String, _ tags: Set<String> = []) -> Double {
        lines.filter { $0.name == name && tags.isSubset(of: $0.tags) }.map(\.value).reduce(0, +)
    }

    static let photo = ServeTests.jpeg

    @Test func datagramsArriveAsDogStatsDWithTheAgentAndTagsOfImgproxysVariables() async throws {
        let receiver = try UDPReceiver()
        defer { receiver.stop() }
        let origin = try await LoopbackServer.start(routes: ["/photo.jpg": .ok(Self.photo, contentType: "image/jpeg")])
        let server = try await ServeTests.Running(["--unsigned", "--allow-private-networks"], environment: [
            "IMGPROXY_DATADOG_ENABLE_ADDITIONAL_METRICS": "true", "DD_AGENT_HOST": "127.0.0.1", "DD_DOGSTATSD_PORT": "\(receiver.port)",
            "DD_SERVICE": "imago-test", "DD_ENV": "ci", "DD_VERSION": "1.2.3",
        ])
        for _ in 0..<2 { #expect(try await server.get(ServeTests.imagePath("rs:fit:40:40", origin.url("/photo.jpg"))).status == 200) }
        // The origin has no such image: imgproxy's status is the source's own 404.
        #expect(try await server.get(ServeTests.imagePath("rs:fit:40:40", origin.url("/missing.jpg"))).status == 404)

        let ok: Set = ["status:200"], missing: Set = ["status:404"]
        var lines = try await receiver.lines { parsed in
            Self.total(parsed, "imago_server_responses", ok) == 2 && Self.total(parsed, "imago_server_responses", missing) == 1
                && parsed.contains { $0.name == "imago_server_failures" } && parsed.contains { $0.name == "imago_server_in_flight" }
        }
        var parsed = lines.compactMap(StatsLine.init)
        #expect(parsed.count == lines.count, "every line is DogStatsD: \(lines.filter { StatsLine($0) == nil })")
        #expect(receiver.datagrams.allSatisfy { $0.count <= DogStatsDSender.maximumPayload })
        #expect(Self.total(parsed, "imago_server_responses", ok) == 2, "\(parsed)")
        #expect(Self.total(parsed, "imago_server_responses", missing) == 1, "\(parsed)")
        // Each kind with its DogStatsD type; every line carries DD_SERVICE, DD_ENV and DD_VERSION.
        let types = Dictionary(parsed.map { ($0.name, [$0.type]) }, uniquingKeysWith: +).mapValues { Set($0) }
        #expect(types["imago_server_responses"] == ["c"])
        #expect(types["imago_server_failures"] == ["c"])
        #expect(types["imago_server_request_duration"] == ["ms"])
        #expect(types["imago_server_render_duration"] == ["ms"])
        #expect(types["imago_server_in_flight"] == ["g"])
        #expect(parsed.filter { $0.name == "imago_server_request_duration" }.count == 3, "one sample a request")
        #expect(parsed.contains { $0.name == "imago_server_failures" && $0.tags.contains { $0.hasPrefix("code:") } })
        #expect(parsed.allSatisfy { Set(["service:imago-test", "env:ci", "version:1.2.3"]).isSubset(of: $0.tags) }, "\(parsed)")
        // /metrics is still Prometheus's, beside DogStatsD.
        let metrics = String(decoding: try await server.get("/metrics").body, as: UTF8.self)
        #expect(metrics.contains(#"imago_server_responses{status="200"} 2"#), "\(metrics)")

        // A request just before SIGTERM is still sent: the flusher stops last and flushes.
        #expect(try await server.get(ServeTests.imagePath("rs:fit:30:30", origin.url("/photo.jpg"))).status == 200)
        #expect(await server.stop() == 0)
        lines = try await receiver.lines(until: { Self.total($0, "imago_server_responses", ok) == 3 }, timeout: .seconds(5))
        parsed = lines.compactMap(StatsLine.init)
        #expect(Self.total(parsed, "imago_server_responses", ok) == 3, "\(parsed)")
        try await origin.stop()
    }

    @Test func anAgentThatIsNotThereNeitherSlowsNorFailsRequests() async throws {
        let origin = try await LoopbackServer.start(routes: ["/photo.jpg": .ok(Self.photo, contentType: "image/jpeg")])
        let nobody = try UDPReceiver.unusedPort()
        let server = try await ServeTests.Running(["--unsigned", "--allow-private-networks", "--dogstatsd", "127.0.0.1:\(nobody)"])
        let clock = ContinuousClock()
        var slowest = Duration.zero
        let started = clock.now
        // Over more than two flushes: loopback answers the first datagram with "port unreachable", so later sends fail.
        while clock.now - started < .milliseconds(2500) {
            let requestStarted = clock.now
            #expect(try await server.get(ServeTests.imagePath("rs:fit:40:40", origin.url("/photo.jpg"))).status == 200)
            #expect(try await server.get(ServeTests.imagePath("rs:fit:40:40", origin.url("/missing.jpg"))).status == 404)
            slowest = max(slowest, clock.now - requestStarted)
            try await Task.sleep(for: .milliseconds(100))
        }
        // Not a timing test: only a send that waits for the missing agent
        // (for the request's whole deadline) fails this bound, however loaded the machine.
        #expect(slowest < .seconds(30), "the slowest pair of requests took \(slowest)")
        // The datagrams that could not be sent are counted.
        var dropped = 0
        for _ in 0..<50 where dropped == 0 {
            let metrics = String(decoding: try await server.get("/metrics").body, as: UTF8.self)
            dropped = Int(metrics.split(separator: "\n").first { $0.hasPrefix("imago_dogstatsd_dropped_datagrams ") }?.split(separator: " ").last ?? "") ?? 0
            if dropped == 0 { try await Task.sleep(for: .milliseconds(200)) }
        }
        #expect(dropped > 0)
        #expect(await server.stop() == 0)
        try await origin.stop()
    }

    @Test func thePrometheusNamespacePrefixesNamesAndItsOwnListenerServesMetrics() async throws {
        let origin = try await LoopbackServer.start(routes: ["/photo.jpg": .ok(Self.photo, contentType: "image/jpeg")])
        let server = try await ServeTests.Running(["--unsigned", "--allow-private-networks"], environment: [
            "IMGPROXY_PROMETHEUS_BIND": "127.0.0.1:0", "IMGPROXY_PROMETHEUS_NAMESPACE": "imgproxy",
        ])
        // Its port, from the line it logs (port 0: any free one).
        var metricsPort: Int?
        for _ in 0..<100 where metricsPort == nil {
            metricsPort = server.log.split(separator: "\n").lazy.compactMap { line -> Int? in
                guard let range = line.range(of: "metrics listening on http://127.0.0.1:") else { return nil }
                return Int(line[range.upperBound...].prefix { $0.isNumber })
            }.first
            if metricsPort == nil { try await Task.sleep(for: .milliseconds(100)) }
        }
        let port = try #require(metricsPort, "no listening line in \(server.log)")
        #expect(port != server.port)

        let image = try await server.get(ServeTests.imagePath("rs:fit:60:60", origin.url("/photo.jpg")))
        #expect(image.status == 200)
        #expect(try ImageDecoders.all.decode(image.body).width == 60)
        let (body, response) = try await URLSession.shared.data(from: URL(string: "http://127.0.0.1:\(port)/metrics")!)
        #expect((response as? HTTPURLResponse)?.statusCode == 200)
        let metrics = String(decoding: body, as: UTF8.self)
        #expect(metrics.contains(#"imgproxy_imago_server_responses{status="200"} 1"#), "\(metrics)")
        let samples = metrics.split(separator: "\n").filter { !$0.hasPrefix("#") }
        #expect(!samples.isEmpty && samples.allSatisfy { $0.hasPrefix("imgproxy_") }, "\(samples)")
        // The main listener's /metrics is the same registry; the metrics listener serves nothing else.
        #expect(String(decoding: try await server.get("/metrics").body, as: UTF8.self).contains(#"imgproxy_imago_server_responses{status="200"} 1"#))
        let (_, other) = try await URLSession.shared.data(from: URL(string: "http://127.0.0.1:\(port)/health")!)
        #expect((other as? HTTPURLResponse)?.statusCode == 404)
        #expect(await server.stop() == 0)
        try await origin.stop()
    }

    /// Each with `--print-config`: a value that passed by mistake would print and exit 0 rather than serve.
    @Test(arguments: [
        ["IMGPROXY_BIND": "127.0.0.1:18080", "IMGPROXY_PROMETHEUS_BIND": "127.0.0.1:18080"],
        ["IMGPROXY_BIND": ":18080", "IMGPROXY_PROMETHEUS_BIND": "127.0.0.1:18080"],
        ["IMGPROXY_PROMETHEUS_BIND": "localhost"],
        ["IMGPROXY_PROMETHEUS_BIND": "127.0.0.1:99999"],
        ["IMGPROXY_PROMETHEUS_NAMESPACE": "9lives"],
        ["IMGPROXY_DATADOG_ENABLE_ADDITIONAL_METRICS": "true", "DD_DOGSTATSD_PORT": "eighty"],
        ["IMGPROXY_DATADOG_ENABLE_ADDITIONAL_METRICS": "true", "DD_AGENT_HOST": "bad host"],
        ["IMAGO_DOGSTATSD": "127.0.0.1:0"],
    ])
    func badValuesStopTheStartWithStatusTwo(environment: [String: String]) async throws {
        let run = try await ServeTests.serveToExit(["--unsigned", "--print-config"], environment: environment)
        #expect(run.status == 2, "\(run.stderr)")
        #expect(run.stderr.contains("--prometheus") || run.stderr.contains("--dogstatsd"), "\(run.stderr)")
    }

    @Test func imgproxysMetricsVariablesBecomeFlags() {
        func arguments(_ environment: [String: String]) -> [String] { ServeEnvironment.arguments([], environment: environment).arguments }
        #expect(arguments(["IMGPROXY_DATADOG_ENABLE_ADDITIONAL_METRICS": "true"]) == ["--dogstatsd", "localhost:8125"])
        #expect(arguments(["IMGPROXY_DATADOG_ENABLE_ADDITIONAL_METRICS": "false", "DD_AGENT_HOST": "agent"]).isEmpty)
        #expect(arguments(["IMGPROXY_DATADOG_ENABLE_ADDITIONAL_METRICS": "1", "DD_AGENT_HOST": "::1", "DD_DOGSTATSD_PORT": "9125",
                           "DD_SERVICE": "img", "DD_ENV": "prod", "DD_VERSION": ""])
                == ["--dogstatsd", "[::1]:9125", "--dogstatsd-tag", "service:img", "--dogstatsd-tag", "env:prod"])
        #expect(arguments(["IMGPROXY_PROMETHEUS_BIND": ":9464", "IMGPROXY_PROMETHEUS_NAMESPACE": "imgproxy"])
                == ["--prometheus-bind", ":9464", "--prometheus-namespace", "imgproxy"])
        let environment = ["IMGPROXY_DATADOG_ENABLE_ADDITIONAL_METRICS": "true", "IMGPROXY_PROMETHEUS_BIND": ":9464", "IMGPROXY_PROMETHEUS_NAMESPACE": "x"]
        #expect(ServeEnvironment.arguments([], environment: environment).ignored.isEmpty)
    }

    @Test func namesAndTagsAreMadeSafeAndNumbersShort() {
        #expect(DogStatsDFormat.name("imago_server_responses") == "imago_server_responses")
        #expect(DogStatsDFormat.name("9 http|requests:total#é") == "http_requests_total__")
        #expect(DogStatsDFormat.name("___") == "metric")
        #expect(DogStatsDFormat.tag("path:/a,b|c#d") == "path:/a_b_c_d")
        #expect(DogStatsDFormat.number(3) == "3")
        #expect(DogStatsDFormat.number(12.5) == "12.5")
        #expect(DogStatsDFormat.number(.nan) == nil)
    }

    /// Many lines in a row: datagrams of at most 1432 bytes, every line once, in order.
    @Test func linesAreBatchedIntoDatagramsUnderTheSafeSize() async throws {
        let receiver = try UDPReceiver()
        defer { receiver.stop() }
        let factory = DogStatsDMetricsFactory(sender: try DogStatsDSender(host: "127.0.0.1", port: receiver.port), tags: ["service:test"])
        let timer = factory.makeTimer(label: "a_rather_long_timer_name_for_batching", dimensions: [("route", "image")])
        for index in 0..<200 { timer.recordNanoseconds(Int64(index) * 1_000_000) }
        factory.makeCounter(label: "requests", dimensions: []).increment(by: 7)
        factory.flush()
        let lines = try await receiver.lines { $0.count == 201 }
        #expect(lines.count == 201)
        #expect(receiver.datagrams.count > 1 && receiver.datagrams.allSatisfy { $0.count <= DogStatsDSender.maximumPayload })
        #expect(lines.dropLast().map(String.init) == (0..<200).map { "a_rather_long_timer_name_for_batching:\($0)|ms|#service:test,route:image" })
        #expect(lines.last == "requests:7|c|#service:test")
    }
}
