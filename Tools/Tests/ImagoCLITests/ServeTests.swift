@testable import ImagoCLI
import ChildProcesses
import ServeProcess
import Foundation
import Imago
import ImagoCodecs
import ImagoServer
import ImagoTesting
import LoopbackServer
import Testing
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `imago serve` as a process: flags, the listening line, health, metrics,
/// images, and a graceful stop that finishes what is in flight.
@Suite struct ServeTests {
    /// A running `imago serve`.
    typealias Running = ServeProcess

    /// The first line a process writes to `pipe`.
    static func firstLine(of pipe: Pipe) -> String { ServeProcess.firstLine(of: pipe) }

    static func imagePath(_ options: String, _ source: URL) -> String {
        "/insecure/\(options)/plain/" + source.absoluteString.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
    }

    static let jpeg = try! ImageEncoders.jpeg(quality: 90).encode(TestImages.gradient(width: 300, height: 200))

    @Test func servesHealthImagesAndMetrics() async throws {
        let origin = try await LoopbackServer.start(routes: ["/photo.jpg": .ok(Self.jpeg, contentType: "image/jpeg")])
        let server = try await Running(["--unsigned", "--allow-private-networks"])
        let health = try await server.get("/health")
        #expect(health.status == 200)
        #expect(String(decoding: health.body, as: UTF8.self) == "ok")

        let image = try await server.get(Self.imagePath("rs:fit:60:60", origin.url("/photo.jpg")))
        #expect(image.status == 200)
        let decoded = try ImageDecoders.all.decode(image.body)
        #expect((decoded.width, decoded.height) == (60, 40))

        let metrics = String(decoding: try await server.get("/metrics").body, as: UTF8.self)
        // The image request is counted once, with its latency; /health is not an image request.
        #expect(metrics.contains("imago_server_responses{status=\"200\"} 1"))
        #expect(metrics.contains("imago_server_request_duration_count 1"))
        #expect(metrics.contains("imago_server_output_cache{result=\"miss\"}"))
        let requestCounters = metrics.split(separator: "\n").filter { !$0.hasPrefix("#") && ($0.contains("requests") || $0.contains("request_duration_count")) }
        #expect(requestCounters == ["imago_server_request_duration_count 1"])
        #expect(await server.stop() == 0)
        // One log line per image request, with its status.
        #expect(server.log.contains("GET /insecure/rs:fit:60:60/plain/"))
        #expect(server.log.contains("status=200"))
        try await origin.stop()
    }

    @Test func svgIsDrawnInTheRasterizerBesideImagoAndItsFailuresAreCounted() async throws {
        let plain = Data(#"<svg xmlns="http://www.w3.org/2000/svg" width="40" height="30"><rect width="40" height="30"/></svg>"#.utf8)
        // Within the filter budget, yet far more than a second of work: the deadline stops it.
        let steps = (0..<40).map { #"<feTurbulence baseFrequency="0.0\#($0 % 9 + 1)" numOctaves="10" result="t\#($0)"/><feGaussianBlur in="t\#($0)" stdDeviation="400"/>"# }
        let heavy = Data("""
            <svg xmlns="http://www.w3.org/2000/svg" width="2000" height="2000"><filter id="f">\(steps.joined())</filter>
            <rect width="2000" height="2000" filter="url(#f)"/></svg>
            """.utf8)
        let origin = try await LoopbackServer.start(routes: [
            "/plain.svg": .ok(plain, contentType: "image/svg+xml"), "/heavy.svg": .ok(heavy, contentType: "image/svg+xml"),
        ])
        let server = try await Running(["--unsigned", "--allow-private-networks", "--svg-rasterizer-timeout", "1"])
        // Drawn at its own 2000x2000 (a small size would be quick); the metric below says it was the deadline.
        #expect(try await server.get(Self.imagePath("q:80", origin.url("/heavy.svg")) + "@png").status == 422)
        let drawn = try await server.get(Self.imagePath("rs:fit:20:20", origin.url("/plain.svg")) + "@png")
        #expect(drawn.status == 200, "the rasterizer beside imago is found: \(server.log)")
        #expect(try ImageDecoders.all.decode(drawn.body).width == 20)
        let metrics = String(decoding: try await server.get("/metrics").body, as: UTF8.self)
        #expect(metrics.contains(#"imago_server_svg_rasterizer_failures{reason="timeout"} 1"#), "\(metrics)")
        #expect(await server.stop() == 0)
        try await origin.stop()
    }

    @Test func sigtermFinishesTheRequestInFlightThenExitsZero() async throws {
        let origin = try await LoopbackServer.start(routes: [
            "/slow.jpg": ServedResponse.ok(Self.jpeg, contentType: "image/jpeg").delivered(.trickle(chunkSize: Self.jpeg.count / 4 + 1, interval: .milliseconds(300))),
        ])
        let server = try await Running(["--unsigned", "--allow-private-networks"])
        async let slow = server.get(Self.imagePath("rs:fit:30:30", origin.url("/slow.jpg")))
        for _ in 0..<500 where origin.requestCount(for: "/slow.jpg") == 0 { try await Task.sleep(for: .milliseconds(10)) }
        kill(server.process.processIdentifier, SIGTERM)
        let response = try await slow
        #expect(response.status == 200)
        #expect(try ImageDecoders.all.decode(response.body).width == 30)
        #expect(await server.stop() == 0)
        try await origin.stop()
    }

    @Test func signedWithTheKeyFromTheEnvironment() async throws {
        let origin = try await LoopbackServer.start(routes: ["/photo.jpg": .ok(Self.jpeg, contentType: "image/jpeg")])
        let server = try await Running(["--allow-private-networks"], environment: ["IMAGO_KEY": "736563726574", "IMAGO_SALT": "68656c6c6f"])
        let path = "/rs:fit:50:50/plain/" + origin.url("/photo.jpg").absoluteString.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
        let signature = try SigningKey(hexKey: "736563726574", hexSalt: "68656c6c6f").signature(forPath: path)
        #expect(try await server.get("/" + signature + path).status == 200)
        #expect(try await server.get("/insecure" + path).status == 403)
        #expect(await server.stop() == 0)
        try await origin.stop()
    }

    @Test(arguments: [
        [], ["--key", "00"], ["--salt", "00"], ["--key", "zz", "--salt", "00"], ["--unsigned", "--key", "00", "--salt", "00"],
        ["--unsigned", "--cache-dir", "/tmp/x", "--no-cache"], ["--unsigned", "--workers", "0"], ["--unsigned", "--log-level", "loud"],
        ["--unsigned", "--port", "70000"],
    ])
    func usageErrorsExitTwo(arguments: [String]) async throws {
        #expect(try await Self.serveToExit(arguments).status == 2)
    }

    /// `IMGPROXY_MALLOC=jemalloc`, as imgproxy's Docker image reads it: the
    /// server starts itself again with jemalloc preloaded, as the same
    /// process (the PID the caller holds), and serves images.
    @Test func imgproxysMallocVariablePreloadsJemalloc() async throws {
        let origin = try await LoopbackServer.start(routes: ["/photo.jpg": .ok(Self.jpeg, contentType: "image/jpeg")])
        let server = try await Running(["--unsigned", "--allow-private-networks"], environment: ["IMGPROXY_MALLOC": "jemalloc"])
        #expect(try Self.mappedFiles(of: server).contains("/libjemalloc.so"), "scripts/install-system-packages installs libjemalloc2")
        let image = try await server.get(Self.imagePath("rs:fit:60:60", origin.url("/photo.jpg")))
        #expect(image.status == 200)
        #expect(await server.stop() == 0)
        try await origin.stop()
    }

    /// With jemalloc, what a large render freed goes back to the system when
    /// the render ends (jemalloc's purge, as `malloc_trim` does for glibc),
    /// instead of staying resident for the seconds of jemalloc's own decay:
    /// four 9 MP renders to AVIF leave the server within 16 MB of where they
    /// found it (6 MB here; 32 MB more without the purge, for seconds).
    @Test func jemallocHandsALargeRendersFreedMemoryBackWhenItEnds() async throws {
        let side = 3000
        let flat = Image(width: side, height: side, pixelFormat: .rgba8, pixels: [UInt8](repeating: 160, count: side * side * 4))
        let large = try ImageEncoders.jpeg(quality: 80).encode(flat)
        let origin = try await LoopbackServer.start(routes: [
            "/photo.jpg": .ok(Self.jpeg, contentType: "image/jpeg"), "/large.jpg": .ok(large, contentType: "image/jpeg"),
        ])
        let server = try await Running(["--unsigned", "--allow-private-networks", "--no-cache", "--malloc", "jemalloc"])
        #expect(try Self.mappedFiles(of: server).contains("/libjemalloc.so"))
        #expect(try await server.get(Self.imagePath("rs:fit:60:60", origin.url("/photo.jpg"))).status == 200)
        let pid = server.process.processIdentifier
        let before = MemoryBudgetTests.memory(of: pid).now
        let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
            for copy in 0..<4 {
                group.addTask { try await server.get(Self.imagePath("rs:fit:1600:1600/q:60", origin.url("/large.jpg?copy=\(copy)")) + "@avif").status }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(statuses == [200, 200, 200, 200])
        let grown = MemoryBudgetTests.memory(of: pid).now - before
        #expect(grown < 16 << 10, "the server holds \(grown >> 10) MB more after the renders than before them")
        #expect(await server.stop() == 0)
        try await origin.stop()
    }

    /// With glibc's malloc, `serve` keeps to 2 arenas (glibc's default is 8
    /// a core, each with heaps of its own that creep under a long mixed load);
    /// `MALLOC_ARENA_MAX` still decides when it is set. Each arena but the
    /// first maps 64 MiB heaps, so the heaps in `/proc/PID/maps` count them.
    @Test func glibcArenasAreCappedAtTwoUnlessMallocArenaMaxSaysOtherwise() async throws {
        let origin = try await LoopbackServer.start(routes: ["/photo.jpg": .ok(Self.jpeg, contentType: "image/jpeg")])
        func heapsAfterABurst(_ environment: [String: String]) async throws -> Int {
            let server = try await Running(["--unsigned", "--allow-private-networks", "--no-cache", "--workers", "4"], environment: environment)
            let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                for copy in 0..<32 {
                    group.addTask { try await server.get(Self.imagePath("rs:fit:\(40 + copy):60", origin.url("/photo.jpg?copy=\(copy)"))).status }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(statuses == Array(repeating: 200, count: 32))
            let heaps = Self.glibcHeaps(in: try Self.mappedFiles(of: server))
            #expect(await server.stop() == 0)
            return heaps
        }
        let capped = try await heapsAfterABurst([:])
        #expect(capped <= 2, "one arena besides the main one (its heaps: \(capped))")
        let uncapped = try await heapsAfterABurst(["MALLOC_ARENA_MAX": "16"])
        #expect(uncapped > 2, "with MALLOC_ARENA_MAX=16 the server's threads get arenas of their own (heaps: \(uncapped))")
        // As `--print-config` shows it.
        #expect(ServeAllocator.malloc.configurationValue(environment: [:]) == "malloc (arenas: 2)")
        #expect(ServeAllocator.malloc.configurationValue(environment: ["MALLOC_ARENA_MAX": "4"]) == "malloc (arenas: MALLOC_ARENA_MAX=4)")
        #expect(ServeAllocator.jemalloc.configurationValue(environment: [:]) == "jemalloc")
        try await origin.stop()
    }

    /// glibc's arena heaps in a process's maps: anonymous mappings that start
    /// on a 64 MiB boundary and, with the reserved rest that follows, span
    /// exactly 64 MiB.
    static func glibcHeaps(in maps: String) -> Int {
        let heapSize = 64 << 20
        let regions: [(start: Int, end: Int, anonymous: Bool)] = maps.split(separator: "\n").compactMap { line in
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            let bounds = fields.first?.split(separator: "-").compactMap { Int($0, radix: 16) } ?? []
            guard bounds.count == 2 else { return nil }
            return (bounds[0], bounds[1], fields.count < 6)
        }
        var heaps = 0
        for (index, region) in regions.enumerated() where region.anonymous && region.start % heapSize == 0 {
            var end = region.end
            for next in regions.dropFirst(index + 1) {
                guard end < region.start + heapSize, next.start == end, next.anonymous else { break }
                end = next.end
            }
            if end == region.start + heapSize { heaps += 1 }
        }
        return heaps
    }

    /// The files mapped into the server's process (`/proc/PID/maps`, whose size reads as 0).
    static func mappedFiles(of server: Running) throws -> String {
        let maps = try FileHandle(forReadingFrom: URL(fileURLWithPath: "/proc/\(server.process.processIdentifier)/maps"))
        defer { try? maps.close() }
        return String(decoding: try maps.readToEnd() ?? Data(), as: UTF8.self)
    }

    /// An allocator that is not installed stops the server at once, naming
    /// the package; one that is, loads (whichever this machine has).
    @Test func tcmallocLoadsWhenInstalledAndIsNamedWhenNot() async throws {
        let installed = ["/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/usr/lib64", "/usr/lib", "/usr/local/lib"]
            .contains { FileManager.default.fileExists(atPath: $0 + "/libtcmalloc_minimal.so.4") }
        if installed {
            let server = try await Running(["--unsigned", "--malloc", "tcmalloc"])
            #expect(try Self.mappedFiles(of: server).contains("/libtcmalloc_minimal.so"))
            #expect(await server.stop() == 0)
        } else {
            let run = try await Self.serveToExit(["--unsigned", "--port", "0", "--malloc", "tcmalloc"])
            #expect(run.status == 1)
            #expect(run.stderr.contains("apt-get install libtcmalloc-minimal4"), "\(run.stderr)")
        }
        #expect(try await Self.serveToExit(["--unsigned", "--port", "0", "--malloc", "hoard"]).status == 2)
    }

    /// A library the dynamic loader refuses (the second start finds it
    /// missing from its maps) stops the server instead of starting it again
    /// and again: an environment that says "preloaded" without the library.
    @Test func aPreloadTheLoaderRefusedIsAnErrorNotALoop() async throws {
        let run = try await Self.serveToExit(["--unsigned", "--port", "0", "--malloc", "jemalloc"],
                                             environment: ["IMAGO_MALLOC_PRELOADED": "jemalloc", "LD_PRELOAD": ""])
        #expect(run.status == 1)
        #expect(run.stderr.contains("did not load it"), "\(run.stderr)")
    }

    @Test func aCacheDirThatIsAFileIsAUsageError() async throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("imago-not-a-folder-\(UUID().uuidString)")
        try Data("x".utf8).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let run = try await Self.serveToExit(["--unsigned", "--port", "0", "--cache-dir", file.path])
        #expect(run.status == 2)
        #expect(run.stderr.contains("--cache-dir"))
        // The file is left as it was.
        #expect(try Data(contentsOf: file) == Data("x".utf8))
    }

    @Test func aWatermarkFromAFileURLOrBase64IsDrawn() async throws {
        let red = Image(width: 10, height: 10, pixelFormat: .rgb8, pixels: Array(repeatElement([UInt8(255), 0, 0], count: 100).joined()))
        let mark = try ImageEncoders.png().encode(red)
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("imago-mark-\(UUID().uuidString).png")
        try mark.write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let origin = try await LoopbackServer.start(routes: [
            "/photo.jpg": .ok(Self.jpeg, contentType: "image/jpeg"), "/mark.png": .ok(mark, contentType: "image/png"),
        ])
        for flags in [["--watermark-path", file.path], ["--watermark-url", origin.url("/mark.png").absoluteString],
                      ["--watermark-data", mark.base64EncodedString()]] {
            let server = try await Running(["--unsigned", "--allow-private-networks"] + flags)
            let response = try await server.get(Self.imagePath("rs:fit:60:60/wm:1:nowe", origin.url("/photo.jpg")) + "@png")
            #expect(response.status == 200)
            let image = try ImageDecoders.all.decode(response.body)
            #expect(image.pixel(x: 0, y: 0) == [255, 0, 0], "\(flags[0])")
            #expect(image.pixel(x: 9, y: 9) == [255, 0, 0], "\(flags[0])")
            #expect(image.pixel(x: 30, y: 20) != [255, 0, 0], "\(flags[0])")
            #expect(await server.stop() == 0)
        }
        // A watermark that cannot be read stops the start, with its flag named.
        let missing = try await Self.serveToExit(["--unsigned", "--port", "0", "--no-cache", "--watermark-path", file.path + ".missing"])
        #expect(missing.status != 0)
        #expect(missing.stderr.contains("--watermark-path"))
        let notImage = try await Self.serveToExit(["--unsigned", "--port", "0", "--no-cache", "--watermark-data", "aGVsbG8="])
        #expect(notImage.status != 0)
        #expect(notImage.stderr.contains("--watermark-data"))
        #expect(try await Self.serveToExit(["--unsigned", "--watermark-opacity", "2"]).status == 2)
        #expect(try await Self.serveToExit(["--unsigned", "--watermark-path", "a", "--watermark-data", "b"]).status == 2)
        try await origin.stop()
    }

    /// imgproxy's result sizes (its processing tests' cases, shared with
    /// ImgproxyGeometryTests) from a running `imago serve`, over HTTP.
    @Test func imgproxysGeometryCasesThroughImagoServe() async throws {
        let file = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../../../Tests/ImagoServerTests/Fixtures/imgproxy-geometry-cases.json")
        let tables = try JSONSerialization.jsonObject(with: Data(contentsOf: file)) as! [String: Any]
        let cases = ["resizing", "resultLimits", "placements"].flatMap { tables[$0] as! [[Any]] }
        #expect(cases.count == 192)
        let source = try ImageEncoders.png().encode(Image(width: 200, height: 100, pixelFormat: .rgb8,
                                                          pixels: (0..<200 * 100 * 3).map { UInt8($0 % 251) }))
        let origin = try await LoopbackServer.start(routes: ["/source.png": .ok(source, contentType: "image/png")])
        let server = try await Running(["--unsigned", "--allow-private-networks", "--allow-security-options"])
        var wrong: [String] = []
        for item in cases {
            let (options, width, height) = (item[0] as! String, item[1] as! Int, item[2] as! Int)
            let response = try await server.get(Self.imagePath(options, origin.url("/source.png")) + "@png")
            guard response.status == 200, let info = try? ImageDecoders.info(for: response.body) else {
                wrong.append("\(options): status \(response.status)")
                continue
            }
            if (info.width, info.height) != (width, height) { wrong.append("\(options): \(info.width)x\(info.height), not \(width)x\(height)") }
        }
        #expect(wrong.isEmpty, "\(wrong.joined(separator: "\n"))")
        #expect(await server.stop() == 0)
        try await origin.stop()
    }

    /// SIGTERM with a drain delay: `/health/ready` turns 503 at once while
    /// images are still served; once the delay is over the server stops and exits 0.
    /// (The first server's delay is an hour, so that the checks finish inside it
    /// however loaded the machine: 20 s was not enough under the thread sanitizer
    /// beside the crash tests. It is killed after them; a second server with a
    /// one-second delay shows the exit.)
    @Test func readinessGoesDownWhenADrainStarts() async throws {
        let origin = try await LoopbackServer.start(routes: ["/photo.jpg": .ok(Self.jpeg, contentType: "image/jpeg")])
        let server = try await Running(["--unsigned", "--allow-private-networks", "--drain-delay", "3600", "--drain-timeout", "5"])
        #expect(try await server.get("/health/live").status == 200)
        #expect(try await server.get("/health/ready").status == 200)
        kill(server.process.processIdentifier, SIGTERM)
        var ready = 200
        for _ in 0..<100 where ready == 200 {
            ready = try await server.get("/health/ready").status
            if ready == 200 { try await Task.sleep(for: .milliseconds(20)) }
        }
        #expect(ready == 503)
        #expect(try await server.get("/health/live").status == 200, "still alive while draining")
        #expect(try await server.get(Self.imagePath("rs:fit:30:30", origin.url("/photo.jpg"))).status == 200, "still serving")
        kill(server.process.processIdentifier, SIGKILL)
        await server.process.exited()
        let brief = try await Running(["--unsigned", "--drain-delay", "1", "--drain-timeout", "5"])
        #expect(try await brief.get("/health/ready").status == 200)
        #expect(await brief.stop() == 0, "stops by itself once the delay is over")
        try await origin.stop()
    }

    /// With standard error on a pipe nobody reads, log lines fill the pipe,
    /// then the server's bounded queue, then are dropped and counted:
    /// serving, `/health` and `/metrics` go on.
    @Test func aStalledLogReaderNeverStallsServing() async throws {
        let origin = try await LoopbackServer.start(routes: ["/photo.jpg": .ok(Self.jpeg, contentType: "image/jpeg")])
        let server = try await Running(["--unsigned", "--allow-private-networks", "--log-buffer", "16384"], standardErrorUnread: true)
        let path = Self.imagePath("rs:fit:20:20", origin.url("/photo.jpg"))
        // About 150 bytes a line: 64 KB of pipe and 16 KB of queue hold some 550 lines.
        let session = URLSession(configuration: .ephemeral)
        for index in 0..<1200 {
            var request = URLRequest(url: server.url(path + "?n=\(index)"))
            request.timeoutInterval = 10
            let (_, response) = try await session.data(for: request)
            #expect((response as! HTTPURLResponse).statusCode == 200, "request \(index)")
        }
        var health = URLRequest(url: server.url("/health"))
        health.timeoutInterval = 10
        #expect(try await (session.data(for: health).1 as! HTTPURLResponse).statusCode == 200)
        let metrics = String(decoding: try await server.get("/metrics").body, as: UTF8.self)
        let dropped = metrics.split(separator: "\n").first { $0.hasPrefix("imago_log_lines_dropped ") }
        #expect(Int(dropped?.split(separator: " ").last ?? "0") ?? 0 > 0, "\(dropped ?? "no counter")")
        #expect(await server.stop() == 0)
        try await origin.stop()
    }

    /// imgproxy's environment, unchanged, configures `imago serve`; secrets are masked.
    @Test func printConfigShowsTheEnvironmentWithSecretsMasked() async throws {
        let process = Process()
        process.executableURL = CLITests.binary
        process.arguments = ["serve", "--print-config", "--ttl", "5"]
        var environment = ProcessInfo.processInfo.environment
        environment["IMGPROXY_KEY"] = "736563726574"
        environment["IMGPROXY_SALT"] = "68656c6c6f"
        environment["IMGPROXY_BIND"] = ":8081"
        environment["IMGPROXY_TTL"] = "60"
        environment["IMGPROXY_ENABLE_WEBP_DETECTION"] = "true"
        environment["IMGPROXY_PRESETS"] = "thumb=rs:fill:64:64"
        process.environment = environment
        let output = Pipe()
        process.standardOutput = output
        try process.startTiedToThisProcess()
        let text = try await offTheTestThreads { String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self) }
        await process.exited()
        #expect(process.terminationStatus == 0)
        let lines = Set(text.split(separator: "\n").map(String.init))
        for expected in ["host = 0.0.0.0", "port = 8081", "key = ***", "salt = ***", "ttl = 5", "auto-webp = true", "preset = thumb=rs:fill:64:64"] {
            #expect(lines.contains(expected), "\(expected) in \(text)")
        }
        #expect(!text.contains("736563726574") && !text.contains("68656c6c6f"))
    }

    /// `gs://` sources through GCS's XML API, from imgproxy's variables and
    /// the HMAC key in IMAGO_GCS_HMAC_*: the endpoint's JSON API path is
    /// dropped, every request is signed for the region auto, the store needs
    /// no private-network switch (it is the operator's own), and the
    /// service-account key, unused beside an HMAC key, is named in the warning.
    @Test func gcsSourcesAreSignedWithTheHMACKeyFromTheEnvironment() async throws {
        let store = try await LoopbackServer.start(routes: ["/photos/a.jpg": .ok(Self.jpeg, contentType: "image/jpeg")])
        let server = try await Running(["--unsigned"], environment: [
            "IMGPROXY_USE_GCS": "true", "IMGPROXY_GCS_ENDPOINT": store.baseURL.absoluteString + "/storage/v1/",
            "IMAGO_GCS_HMAC_ACCESS_ID": "GOOG1EEXAMPLE", "IMAGO_GCS_HMAC_SECRET": "hmac-secret", "IMGPROXY_GCS_KEY": #"{"type": "service_account"}"#,
        ])
        let response = try await server.get(Self.imagePath("rs:fit:50:50", URL(string: "gs://photos/a.jpg")!))
        #expect(response.status == 200)
        #expect(try ImageDecoders.info(for: response.body).width == 50)
        #expect(store.requestCount(for: "/photos/a.jpg") == 1)
        let authorization = store.requests(for: "/photos/a.jpg").first?.header("Authorization") ?? ""
        #expect(authorization.hasPrefix("AWS4-HMAC-SHA256 Credential=GOOG1EEXAMPLE/") && authorization.contains("/auto/s3/aws4_request,"), "\(authorization)")
        #expect(await server.stop() == 0)
        #expect(server.log.contains("IMGPROXY_GCS_KEY is an imgproxy setting imago serve does not read"), "\(server.log)")
        try await store.stop()
    }

    /// A start-up that must be refused, and what its message must say.
    struct Refusal: Sendable, CustomTestStringConvertible {
        let arguments: [String]
        let environment: [String: String]
        let message: String
        var testDescription: String { "\(arguments.joined(separator: " ")) \(environment.keys.sorted())" }
    }

    /// What `imago serve` refuses to start with, for GCS: each a usage error
    /// that says what to set instead.
    @Test(arguments: [
        // A service-account key with no HMAC key: it cannot be used, and unsigned reads would fail on every private object.
        Refusal(arguments: ["--unsigned", "--use-gcs"], environment: ["IMGPROXY_GCS_KEY": #"{"type": "service_account"}"#],
                message: "set IMAGO_GCS_HMAC_ACCESS_ID and IMAGO_GCS_HMAC_SECRET"),
        Refusal(arguments: ["--unsigned"], environment: ["IMGPROXY_USE_GCS": "true", "IMGPROXY_GCS_KEY": "{}"],
                message: "IMGPROXY_GCS_KEY is a service-account key, which imago serve cannot use"),
        Refusal(arguments: ["--unsigned", "--use-gcs"], environment: ["IMAGO_GCS_HMAC_ACCESS_ID": "GOOG1EEXAMPLE"],
                message: "--use-gcs needs both IMAGO_GCS_HMAC_ACCESS_ID and IMAGO_GCS_HMAC_SECRET"),
        Refusal(arguments: ["--unsigned", "--use-gcs"], environment: ["IMAGO_GCS_HMAC_SECRET": "hmac-secret"], message: "--use-gcs needs both"),
        Refusal(arguments: ["--unsigned", "--gcs-endpoint", "http://127.0.0.1:4443"], environment: [:], message: "--gcs-endpoint needs --use-gcs"),
        Refusal(arguments: ["--unsigned", "--use-gcs", "--gcs-endpoint", "ftp://storage.example.com"], environment: [:],
                message: "--gcs-endpoint must be an http or https URL"),
        Refusal(arguments: ["--unsigned", "--use-gcs", "--gcs-endpoint", "storage.googleapis.com"], environment: [:],
                message: "--gcs-endpoint must be an http or https URL"),
        Refusal(arguments: ["--unsigned", "--result-store", "gs://results/renders"], environment: [:], message: "--result-store gs://... needs --use-gcs"),
    ])
    func gcsStartUpValuesThatAreRefused(_ refusal: Refusal) async throws {
        var environment = refusal.environment
        // Whatever the test runner's own environment holds: unset (an empty value counts as unset).
        for name in ["IMGPROXY_USE_GCS", "IMGPROXY_GCS_KEY", "IMGPROXY_GCS_ENDPOINT", "IMAGO_GCS_HMAC_ACCESS_ID", "IMAGO_GCS_HMAC_SECRET"]
        where environment[name] == nil {
            environment[name] = ""
        }
        let run = try await Self.serveToExit(refusal.arguments + ["--port", "0", "--no-cache"], environment: environment)
        #expect(run.status == 2)
        #expect(run.stderr.contains(refusal.message), "\(run.stderr)")
    }

    /// `--print-config` shows the GCS flags, never the HMAC secret.
    @Test func printConfigShowsGCSButNotItsSecret() async throws {
        let run = try await CLITests().imago(["serve", "--print-config", "--unsigned"], environment: [
            "IMGPROXY_USE_GCS": "true", "IMGPROXY_GCS_ENDPOINT": "http://127.0.0.1:4443",
            "IMAGO_GCS_HMAC_ACCESS_ID": "GOOG1EEXAMPLE", "IMAGO_GCS_HMAC_SECRET": "hmac-secret-value",
        ])
        #expect(run.status == 0)
        let text = run.stdout
        let lines = Set(text.split(separator: "\n").map(String.init))
        #expect(lines.contains("use-gcs = true") && lines.contains("gcs-endpoint = http://127.0.0.1:4443"), "\(text)")
        #expect(!text.contains("hmac-secret-value"))
    }

    @Test func aPortInUseExitsOne() async throws {
        let first = try await Running(["--unsigned"])
        let second = try await Self.serveToExit(["--unsigned", "--no-cache", "--port", String(first.port)])
        #expect(second.status == 1)
        #expect(second.stderr.lowercased().contains("address already in use"), "\(second.stderr)")
        #expect(await first.stop() == 0)
    }

    /// Runs `imago serve ARGUMENTS` that is expected to stop by itself (a
    /// usage error, a port in use), without IMAGO_KEY or IMAGO_SALT, with `environment` added.
    static func serveToExit(_ arguments: [String], environment extra: [String: String] = [:]) async throws -> (status: Int32, stderr: String) {
        let process = Process()
        process.executableURL = CLITests.binary
        process.arguments = ["serve"] + arguments
        var environment = ProcessInfo.processInfo.environment
        environment["IMAGO_KEY"] = nil
        environment["IMAGO_SALT"] = nil
        environment.merge(extra) { $1 }
        process.environment = environment
        let errors = Pipe()
        process.standardOutput = FileHandle.nullDevice
        process.standardError = errors
        try process.startTiedToThisProcess()
        let message = try await offTheTestThreads { String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self) }
        await process.exited()
        return (process.terminationStatus, message)
    }
}
