import ChildProcesses
import Foundation
import HostileInputs
import Imago
import ImagoCodecs
import ImagoServer
import ImagoTesting
import LoopbackServer
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The hostile corpus against one real `imago serve` (signed URLs, a
/// memory budget, a local root, a watermark, slot limits per origin host),
/// every class with more than one variant: SVG filters that crash or spin
/// librsvg, entity and `use` bombs, CSS that would load a URL, scan and
/// grid bombs, metadata of megabytes, encoders at size, tiny watermark
/// tiles, special files and escapes under the local root, a trickling
/// origin host, respelled signatures and expired URLs, heads that never end,
/// all while `/health` is asked every 100 ms. Each answer is the status
/// imgproxy would send; the server never crashes, never answers 500 or
/// 502, `/health` never fails, and (without a sanitizer's shadow memory)
/// its resident memory grows by less than its `--max-memory`.
@Suite struct HostileCorpusTests {
    /// One request of the corpus: its class, the options and source, the format, and the statuses allowed.
    struct Case: Sendable {
        let group: String
        let options: String
        let source: String
        let format: String?
        let statuses: Set<Int>
        /// Text the body must not hold (an address a browser would load).
        var forbidden: String?
    }

    static let key = try! SigningKey(hexKey: "736563726574", hexSalt: "68656C6C6F")
    static let budget = 256

    /// `options` and `source` as a signed path.
    static func signed(_ options: String, _ source: String, format: String?) -> String {
        let encoded = source.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
        let path = "/\(options.isEmpty ? "" : options + "/")plain/\(encoded)" + (format.map { "@" + $0 } ?? "")
        return "/" + key.signature(forPath: path) + path
    }

    @Test(.timeLimit(.minutes(10)))
    func theCorpusNeverTakesImagoServeDownAndHealthAnswersThroughout() async throws {
        // The origins: one that serves the corpus, one that trickles (its own host: `localhost`).
        let png = try ImageEncoders.png().encode(TestImages.gradient(width: 64, height: 48))
        let svgCorpus = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../../../Tests/ImagoServerTests/Fixtures/hostile-svg")
        var routes: [String: ServedResponse] = [
            "/a.png": .ok(png, contentType: "image/png"),
            "/convolve-30.svg": .ok(HostileInputs.convolveOrder30, contentType: "image/svg+xml"),
            "/octaves.svg": .ok(HostileInputs.filtered(#"<feTurbulence baseFrequency="0.05" numOctaves="1000"/>"#), contentType: "image/svg+xml"),
            "/chained.svg": .ok(HostileInputs.filtered((0..<2000).map { #"<feOffset dx="1" result="r\#($0)"/>"# }.joined()), contentType: "image/svg+xml"),
            "/laughs.svg": .ok(HostileInputs.billionLaughs, contentType: "image/svg+xml"),
            "/uses.svg": .ok(HostileInputs.useBomb, contentType: "image/svg+xml"),
            "/scans.jpg": .ok(try HostileInputs.progressiveJPEG(extraScans: 3_000), contentType: "image/jpeg"),
            "/scans-500.jpg": .ok(try HostileInputs.progressiveJPEG(extraScans: 500), contentType: "image/jpeg"),
            "/grid.avif": .ok(HostileInputs.grid(brand: "avif", tiles: 10_000), contentType: "image/avif"),
            "/grid.heic": .ok(HostileInputs.grid(brand: "heic", tiles: 300), contentType: "application/octet-stream"),
            "/exif.png": .ok(try HostileInputs.pngWithExif(copyrightLength: 2_000_000), contentType: "image/png"),
            "/exif-small.png": .ok(try HostileInputs.pngWithExif(copyrightLength: 40), contentType: "image/png"),
        ]
        let origin = try await LoopbackServer.start(routes: routes)
        // The CSS corpus, each document with its own address to leak to.
        let leak = origin.url("/leak").absoluteString
        let documents = try FileManager.default.contentsOfDirectory(atPath: svgCorpus.path).filter { $0.hasSuffix(".svg") }.sorted()
        for name in documents {
            let text = try String(contentsOf: svgCorpus.appendingPathComponent(name), encoding: .utf8).replacingOccurrences(of: "{{LEAK}}", with: leak)
            routes["/css/" + name] = .ok(Data(text.utf8), contentType: "image/svg+xml")
        }
        origin.route(routes)
        let slow = try await LoopbackServer.start(routes: ["/slow.png": ServedResponse(
            status: 200, headers: [(name: "Content-Type", value: "image/png")], body: png, delivery: .trickle(chunkSize: 16, interval: .milliseconds(500)))])
        let slowURL = "http://localhost:\(slow.port)/slow.png"

        // The local root: a regular image, a FIFO, a socket-like special file, a link out, a device where root may make one.
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("imago-corpus-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: root) }
        try png.write(to: root.appendingPathComponent("a.png"))
        try ImageEncoders.png().encode(TestImages.gradient(width: 8, height: 6)).write(to: root.appendingPathComponent("mark.png"))
        #expect(mkfifo(root.appendingPathComponent("fifo.png").path, 0o644) == 0)
        try FileManager.default.createSymbolicLink(atPath: root.appendingPathComponent("out.png").path, withDestinationPath: "/etc/passwd")
        let device = mknod(root.appendingPathComponent("zero.png").path, S_IFCHR | 0o644, dev_t(1 << 8 | 5)) == 0

        var cases: [Case] = []
        func add(_ group: String, _ options: String, _ source: String, _ format: String? = nil, _ statuses: Set<Int>, forbidden: String? = nil) {
            cases.append(Case(group: group, options: options, source: source, format: format, statuses: statuses, forbidden: forbidden))
        }
        // SVG rasterised: a librsvg panic, filters over the budget, bombs.
        for name in ["convolve-30", "octaves", "chained", "laughs", "uses"] {
            add("svg", "w:40", origin.url("/\(name).svg").absoluteString, "png", [422])
        }
        // SVG answered as SVG: the CSS corpus comes back without the address.
        for name in documents { add("css", "", origin.url("/css/" + name).absoluteString, nil, [200, 422], forbidden: leak) }
        // Decode work and metadata.
        add("scans", "w:20", origin.url("/scans.jpg").absoluteString, nil, [422])
        add("scans", "w:20", origin.url("/scans-500.jpg").absoluteString, nil, [422])
        add("grid", "w:20", origin.url("/grid.avif").absoluteString, "jpg", [422])
        add("grid", "w:20", origin.url("/grid.heic").absoluteString, "jpg", [422])
        add("metadata", "w:8/sm:0", origin.url("/exif.png").absoluteString, "png", [200])
        add("metadata", "w:8", origin.url("/exif-small.png").absoluteString, "png", [200])
        // Memory: encoders at size, under the budget.
        for index in 0..<3 { add("memory", "cb:\(index)/rs:force:1024:1024:1", origin.url("/a.png").absoluteString, "jxl", [200]) }
        add("memory", "rs:force:1024:1024:1", origin.url("/a.png").absoluteString, "avif", [200])
        // Watermark tiles of a pixel.
        add("watermark", "rs:force:600:600:1/wm:1:re:0:0:0.0001", origin.url("/a.png").absoluteString, nil, [200])
        add("watermark", "rs:force:600:600:1/wm:0.5:re:0:0:0.01", origin.url("/a.png").absoluteString, nil, [200])
        // Local sources: special files and ways out.
        for name in ["fifo.png", "out.png", "../../etc/passwd", "missing.png"] + (device ? ["zero.png"] : []) {
            add("local", "w:10", "local:///" + name, nil, [404])
        }
        add("local", "raw:1", "local:///fifo.png", nil, [404])
        add("local", "w:10", "local:///a.png", nil, [200])
        // A trickling origin host: two slots, one second's wait, then 504; other hosts go on.
        for index in 0..<4 { add("slow", "cb:\(index)/w:10", slowURL + "?n=\(index)", nil, [200, 504]) }
        add("slow", "w:12", origin.url("/a.png").absoluteString, nil, [200])
        // URLs: expired.
        add("expired", "exp:1/w:10", origin.url("/a.png").absoluteString, nil, [404])
        add("expired", "exp:0/w:10", origin.url("/a.png").absoluteString, nil, [404])

        let server = try await ServeTests.Running([
            "--key", "736563726574", "--salt", "68656C6C6F", "--allow-private-networks", "--local-root", root.path,
            "--workers", "2", "--max-memory", "\(Self.budget)", "--timeout", "60", "--read-request-timeout", "2",
            "--max-downloads-per-host", "2", "--host-slot-wait", "1", "--watermark-path", root.appendingPathComponent("mark.png").path,
            "--svg-rasterizer-timeout", "4",
        ])
        let port = server.port
        let pid = server.process.processIdentifier
        let base = MemoryBudgetTests.memory(of: pid).now
        let poller = HealthPoller(port: port)
        poller.start()
        // Heads that never end, for the whole run.
        let slowloris = try await offTheTestThreads { () throws -> [HostileClientTests.RawConnection] in
            let connections = try (0..<20).map { _ in try HostileClientTests.RawConnection(port: port) }
            for connection in connections.prefix(10) { connection.send("GET /health HTTP/1.1\r\nX-Slow: ") }
            return connections
        }

        // The corpus, four requests at a time.
        let answers = try await withThrowingTaskGroup(of: (Case, Int, Data).self) { group in
            var answers: [(Case, Int, Data)] = []
            for (index, item) in cases.enumerated() {
                if index >= 4, let answer = try await group.next() { answers.append(answer) }
                let path = Self.signed(item.options, item.source, format: item.format)
                group.addTask {
                    let (status, body, _) = try await server.get(path)
                    return (item, status, body)
                }
            }
            for try await answer in group { answers.append(answer) }
            return answers
        }
        // Respelled signatures: 403, whatever the spelling.
        let good = Self.signed("w:10", origin.url("/a.png").absoluteString, format: nil)
        let parts = good.dropFirst().split(separator: "/", maxSplits: 1).map(String.init)
        var respelled: [Int] = []
        for spelling in [parts[0] + "=", "=" + parts[0], parts[0] + "A", String(parts[0].dropLast())] {
            respelled.append(try await server.get("/" + spelling + "/" + parts[1]).status)
        }
        let closedSlowloris = try await offTheTestThreads { slowloris.filter { $0.receive(within: 0.01).closed }.count }
        let health = try await offTheTestThreads { poller.stop() }
        let memory = MemoryBudgetTests.memory(of: pid)

        for (item, status, body) in answers {
            #expect(item.statuses.contains(status), "\(item.group): \(item.options) \(item.source) answered \(status)")
            #expect(status != 500 && status != 502, "\(item.group): \(item.source)")
            if let forbidden = item.forbidden, status == 200 {
                // An address may stay only as text inside a CSS string, which no browser loads.
                let text = String(decoding: body, as: UTF8.self)
                #expect(!HostileInputs.outsideCSSStrings(text).contains(forbidden), "\(item.source) kept \(forbidden): \(text)")
            }
            if item.group == "metadata" { #expect(body.count < 20_000, "\(item.source): \(body.count) bytes") }
        }
        #expect(Set(answers.filter { $0.0.group == "slow" }.map(\.1)).contains(504), "the trickling host's extra downloads waited at most a second")
        #expect(respelled == [403, 403, 403, 403])
        #expect(closedSlowloris == 20, "heads that never end are closed at the read timeout")
        #expect(health.failures == 0 && health.answered > 10, "/health: \(health)")
        #expect(origin.requestCount(for: "/leak") == 0)
        #expect(server.process.isRunning, "imago serve still runs")
        if !SanitizerRuntime.isLinked {
            #expect(memory.peak - base < Self.budget * 1024, "grew by \((memory.peak - base) / 1024) MB under a \(Self.budget) MB budget")
        }
        #expect(await server.stop() == 0)
        try await origin.stop()
        try await slow.stop()
    }
}

/// Asks `/health` every 100 ms on a thread of its own until stopped.
final class HealthPoller: @unchecked Sendable {
    private let port: Int
    private let lock = NSLock()
    private var running = true
    private var answered = 0
    private var failures = 0
    private var thread: Thread?
    private let done = DispatchSemaphore(value: 0)

    init(port: Int) {
        self.port = port
    }

    func start() {
        let thread = Thread { [self] in
            while lock.withLock({ running }) {
                let answer = HostileClientTests.health(port: port)
                lock.withLock { if answer == "HTTP/1.1 200 OK" { answered += 1 } else { failures += 1 } }
                Thread.sleep(forTimeInterval: 0.1)
            }
            done.signal()
        }
        self.thread = thread
        thread.start()
    }

    /// Stops, and says how many answers were 200 and how many were not.
    func stop() -> (answered: Int, failures: Int) {
        lock.withLock { running = false }
        done.wait()
        return lock.withLock { (answered, failures) }
    }
}
