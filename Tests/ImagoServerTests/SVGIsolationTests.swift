#if Server && os(Linux)
import ChildProcesses
import Dispatch
import Foundation
import HTTPTypes
import HummingbirdTesting
import HostileInputs
import Imago
import ImagoServer
import ImagoSVG
import LoopbackServer
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// SVG documents are drawn in a child process (`imago-svg-rasterizer`):
/// a panic, an abort, memory or time running out in librsvg is a 422 for
/// that request, the child is killed and reaped, and the server goes on.
/// Filters over the static budget are refused before anything draws them.
@Suite struct SVGIsolationTests {
    static let namespace = #"xmlns="http://www.w3.org/2000/svg""#

    /// A document of `size` pixels with `filter` as its filter `#f` (HostileInputs).
    static func filtered(_ filter: String, size: Int = 64) -> Data { HostileInputs.filtered(filter, size: size) }

    /// 2 KB on which librsvg 2.54 panics ("Data storage buffer dimension mismatch") and aborts.
    static let convolveOrder30 = HostileInputs.convolveOrder30

    /// Heavy, yet within the filter budget: the wall-clock deadline is what stops it.
    static let heavyWithinBudget: Data = {
        let steps = (0..<40).map { index in
            #"<feTurbulence baseFrequency="0.0\#(index % 9 + 1)" numOctaves="10" type="fractalNoise" result="t\#(index)"/>"#
                + #"<feGaussianBlur in="t\#(index)" stdDeviation="400"/>"#
        }
        return filtered(steps.joined(), size: 2000)
    }()

    /// A 40x30 document in two colours.
    static let plain = Data(##"<svg \##(namespace) width="40" height="30"><rect width="40" height="30" fill="#0000ff"/></svg>"##.utf8)

    /// The rasterizer beside the test binary (where `swift build` puts it).
    /// A rasterizer with a deadline long enough for a child under the thread sanitizer on a loaded machine.
    static func rasterizer(timeout: Double = 60, memoryLimit: Int = 1 << 30) -> SVGRasterizerProcess {
        SVGRasterizerProcess(executable: SVGRasterizerProcess.defaultExecutable(), timeout: timeout, memoryLimit: memoryLimit)
    }

    /// The reason `body` failed with, when it is a child's failure.
    static func reason(_ body: () async throws -> Void) async -> SVGRasterizerFailure.Reason? {
        do {
            try await body()
        } catch let SVGRasterizingError.processFailed(failure) {
            return failure.reason
        } catch {
            return nil
        }
        return nil
    }

    /// Writes a shell script through a close-on-exec descriptor, so that
    /// no process another test forks meanwhile keeps it open for writing
    /// (which would make starting it fail with ETXTBSY).
    static func writeExecutable(_ script: String, to url: URL) throws {
        let descriptor = open(url.path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o755)
        guard descriptor >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        defer { close(descriptor) }
        let bytes = Array("#!/bin/sh\n\(script)\n".utf8)
        guard write(descriptor, bytes, bytes.count) == bytes.count else { throw POSIXError(.EIO) }
    }

    /// Whether a process ID names no process (not even a zombie): the child was reaped.
    static func isReaped(_ pid: Int32) -> Bool {
        kill(pid, 0) != 0 && errno == ESRCH
    }

    /// Records the process IDs a rasterizer starts.
    final class Spawned: Sendable {
        private let pids = Locked<[Int32]>([])
        var all: [Int32] { pids.withLock { $0 } }
        func record(_ pid: Int32) { pids.withLock { $0.append(pid) } }
    }

    // MARK: The child process

    @Test func theChildDrawsWhatTheLibraryDraws() async throws {
        let svg = try SVGSanitizer().sanitized(SVGTests.halves)
        let isolated = try await Self.rasterizer().image(from: svg)
        let inProcess = try SVGRasterizer().image(from: svg)
        #expect((isolated.width, isolated.height) == (40, 30))
        #expect(isolated.pixels == inProcess.pixels)
        let thumbnail = Thumbnail(width: 20, height: 20, mode: .fill)
        let small = try await Self.rasterizer().image(from: svg, thumbnail: thumbnail)
        let expected = try SVGRasterizer().image(from: svg, thumbnail: thumbnail)
        #expect(small.pixels == expected.pixels)
        #expect((small.width, small.height) == (27, 20), "drawn to cover the box; the server crops after")
    }

    @Test func aPanickingLibrsvgIsAFailureOfTheChildOnly() async throws {
        let spawned = Spawned()
        var rasterizer = Self.rasterizer()
        rasterizer.onSpawn = { spawned.record($0) }
        // The unsanitised document reaches librsvg, which panics (or aborts) in the child.
        let reason = await Self.reason { _ = try await rasterizer.image(from: Self.convolveOrder30) }
        if SanitizerRuntime.isLinked {
            // A sanitizer's runtime handles the abort itself (a report, a symbolised stack),
            // which can outlast the deadline: killed at it, the child is a failure all the same.
            #expect(reason == .panic || reason == .crash || reason == .timeout, "\(String(describing: reason))")
        } else {
            #expect(reason == .panic || reason == .crash, "\(String(describing: reason))")
        }
        // This process goes on, and draws the next document.
        #expect(try await rasterizer.image(from: Self.plain).width == 40)
        #expect(spawned.all.count == 2 && spawned.all.allSatisfy(Self.isReaped))
    }

    @Test func aChildPastItsDeadlineIsKilledAndReaped() async throws {
        let spawned = Spawned()
        var rasterizer = Self.rasterizer(timeout: 0.5)
        rasterizer.onSpawn = { spawned.record($0) }
        let reason = await Self.reason { _ = try await rasterizer.image(from: Self.heavyWithinBudget) }
        // Killed at its deadline (the document takes far longer): the reason says so, whatever
        // the machine's load did to the wall clock of this test (not a timed assertion).
        #expect(reason == .timeout)
        #expect(spawned.all.count == 1 && spawned.all.allSatisfy(Self.isReaped), "no zombie left")
    }

    @Test func aChildOverItsMemoryLimitFails() async throws {
        // 6000x6000 needs a 144 MB surface: over a 96 MiB address space.
        let big = Data(#"<svg \#(Self.namespace) width="6000" height="6000"><rect width="10" height="10"/></svg>"#.utf8)
        let reason = await Self.reason { _ = try await Self.rasterizer(memoryLimit: 96 << 20).image(from: big) }
        if SanitizerRuntime.isLinked {
            // A sanitizer's runtime reserves terabytes for its shadow memory, so a sanitized
            // child sets no address-space limit (its CPU limit and deadline still hold): it draws.
            #expect(reason == nil, "\(String(describing: reason))")
        } else {
            #expect(reason == .outOfMemory || reason == .crash, "\(String(describing: reason))")
        }
    }

    @Test func cancellingTheCallerKillsTheChild() async throws {
        let spawned = Spawned()
        var rasterizer = Self.rasterizer(timeout: 30)
        // The task is cancelled as soon as its child starts, from the thread that started it:
        // on a loaded machine a test task that waited for the child's process ID could be
        // scheduled only after the child had finished drawing.
        let caller = Locked<Task<SVGRasterizerFailure.Reason?, Never>?>(nil)
        rasterizer.onSpawn = { pid in
            spawned.record(pid)
            caller.withLock { $0?.cancel() }
        }
        let task = Task { [rasterizer] in await Self.reason { _ = try await rasterizer.image(from: Self.heavyWithinBudget) } }
        caller.withLock { $0 = task }
        // A child that started before the task was recorded: cancelled now.
        if !spawned.all.isEmpty { task.cancel() }
        // Killed by the cancellation, not left to its 30 s deadline (which would say .timeout).
        let reason = await task.value
        #expect(reason == .cancelled, "\(String(describing: reason))")
        #expect(spawned.all.count == 1 && spawned.all.allSatisfy(Self.isReaped))
    }

    @Test func aMissingExecutableIsATypedFailure() async throws {
        let missing = SVGRasterizerProcess(executable: URL(fileURLWithPath: "/nonexistent/imago-svg-rasterizer"))
        #expect(!missing.isAvailable)
        #expect(await Self.reason { _ = try await missing.image(from: Self.plain) } == .unavailable)
        let variable = SVGRasterizerProcess.defaultExecutable(environment: [SVGRasterizerProcess.environmentVariable: "/opt/x/rasterizer"])
        #expect(variable.path == "/opt/x/rasterizer")
        #expect(Self.rasterizer().isAvailable, "swift build puts the rasterizer beside the test binary")
    }

    // MARK: The filter budget

    /// Documents over the filter budget, more than one per class.
    static let overBudget: [String: Data] = {
        var documents: [String: Data] = [
            "convolve-30": convolveOrder30,
            "convolve-30-short": filtered(#"<feConvolveMatrix order="30" kernelMatrix="1 2 3"/>"#),
            "convolve-30x3": filtered(#"<feConvolveMatrix order="3 30" kernelMatrix="1"/>"#),
            "convolve-fraction": filtered(#"<feConvolveMatrix order="2.5"/>"#),
            "convolve-kernel": filtered(#"<feConvolveMatrix order="3" kernelMatrix="\#(Array(repeating: "1", count: 200).joined(separator: " "))"/>"#),
            "octaves-1000": filtered(#"<feTurbulence baseFrequency="0.05" numOctaves="1000"/>"#),
            "octaves-huge": filtered(#"<feTurbulence baseFrequency="0.05" numOctaves="99999999999999999999"/>"#),
            "octaves-exponent": filtered(#"<feTurbulence baseFrequency="0.05" numOctaves="1e3"/>"#),
            "blur-huge": filtered(#"<feGaussianBlur stdDeviation="1000000"/>"#),
            "blur-canvas": filtered(#"<feGaussianBlur stdDeviation="5 200"/>"#, size: 100),
            "blur-infinite": filtered(#"<feGaussianBlur stdDeviation="1e400"/>"#),
            "shadow-huge": filtered(#"<feDropShadow stdDeviation="90000"/>"#),
            "morphology-huge": filtered(#"<feMorphology radius="50000"/>"#),
            "chained-2000": filtered((0..<2000).map { #"<feOffset dx="1" result="r\#($0)"/>"# }.joined()),
            "chained-200-blurs": filtered((0..<200).map { _ in #"<feGaussianBlur stdDeviation="2"/>"# }.joined()),
        ]
        let filters = (0..<100).map { #"<filter id="f\#($0)"><feOffset dx="1"/></filter>"# }.joined()
        documents["filters-100"] = Data(#"<svg \#(namespace) width="10" height="10"><defs>\#(filters)</defs></svg>"#.utf8)
        let nested = (0..<30).map { _ in ##"<g filter="url(#f)">"## + (0..<10).map { _ in ##"<rect filter="url(#f)"/>"## }.joined() }
        documents["filtered-300"] = Data(#"<svg \#(namespace)><filter id="f"><feOffset dx="1"/></filter>\#(nested.joined())\#(String(repeating: "</g>", count: 30))</svg>"#.utf8)
        let styled = (0..<300).map { _ in ##"<rect width="1" height="1" style="filter: url(#f)"/>"## }.joined()
        documents["styled-300"] = Data(#"<svg \#(namespace)><filter id="f"><feOffset dx="1"/></filter>\#(styled)</svg>"#.utf8)
        return documents
    }()

    @Test func filtersOverTheBudgetAreRefusedWhileSanitising() throws {
        for (name, document) in Self.overBudget {
            #expect(throws: SVGSanitizingError.self, "\(name)") { try SVGSanitizer().sanitized(document) }
            do {
                _ = try SVGSanitizer().sanitized(document)
            } catch {
                if case .overBudget = error {} else { Issue.record("\(name): \(error)") }
            }
        }
        // Ordinary filters pass.
        for filter in [#"<feConvolveMatrix order="3" kernelMatrix="0 1 0 1 -4 1 0 1 0"/>"#, #"<feTurbulence numOctaves="4"/>"#,
                       #"<feGaussianBlur stdDeviation="2 3"/>"#, #"<feMorphology radius="2"/>"#,
                       #"<feComponentTransfer><feFuncR type="identity"/></feComponentTransfer>"#] {
            #expect(throws: Never.self, "\(filter)") { try SVGSanitizer().sanitized(Self.filtered(filter)) }
        }
    }

    // MARK: Over HTTP

    @Test func everyHostileFilterIsA422AndTheServerGoesOn() async throws {
        var routes = Dictionary(uniqueKeysWithValues: Self.overBudget.map { ("/\($0.key)", ServedResponse.ok($0.value, contentType: "image/svg+xml")) })
        routes["/plain.svg"] = .ok(Self.plain, contentType: "image/svg+xml")
        routes["/heavy.svg"] = .ok(Self.heavyWithinBudget, contentType: "image/svg+xml")
        let origin = try await Fixture.origin(routes)
        let configuration = Fixture.configuration { $0.svgRasterizerTimeout = 1 }
        try await Fixture.withServer(configuration) { client, _ in
            for path in Self.overBudget.keys.sorted().map({ "/\($0)" }) + ["/heavy.svg"] {
                for format in ["png", nil] as [String?] where !(path == "/heavy.svg" && format == nil) {
                    let response = try await client.execute(uri: Fixture.path("", origin.url(path), extension: format), method: .get)
                    #expect(response.status.code == 422, "\(path)@\(format ?? "-")")
                    #expect(response.errorCode == "undecodable")
                    // The next request is served.
                    let next = try await client.execute(uri: Fixture.path("rs:fit:20:20", origin.url("/plain.svg"), extension: "png"), method: .get)
                    #expect(next.status == .ok, "after \(path)")
                }
            }
        }
    }

    @Test func aChildThatPanicsOrAbortsIsA422() async throws {
        // Stand-ins for the rasterizer that fail as librsvg can: a Rust panic, an abort, a crash.
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("imago-svg-fake-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let scripts = [
            "panic": "echo \"thread 'main' panicked at 'Data storage buffer dimension mismatch'\" >&2; kill -ABRT $$",
            "abort": "kill -ABRT $$",
            "segv": "kill -SEGV $$",
            "garbage": "head -c 20 >/dev/null; printf 'XYZ'",
        ]
        let origin = try await Fixture.origin(["/plain.svg": .ok(Self.plain, contentType: "image/svg+xml")])
        for (name, script) in scripts.sorted(by: { $0.key < $1.key }) {
            let executable = directory.appendingPathComponent(name)
            try Self.writeExecutable(script, to: executable)
            let failing = SVGRasterizerProcess(executable: executable)
            let reason = await Self.reason { _ = try await failing.image(from: Self.plain) }
            let expected: [String: SVGRasterizerFailure.Reason] = ["panic": .panic, "abort": .crash, "segv": .crash, "garbage": .protocolError]
            #expect(reason == expected[name], "\(name)")
            try await Fixture.withServer(Fixture.configuration { $0.svgRasterizerExecutable = executable }) { client, _ in
                let response = try await client.execute(uri: Fixture.path("", origin.url("/plain.svg"), extension: "png"), method: .get)
                #expect(response.status.code == 422, "\(name)")
                #expect(try await client.execute(uri: Fixture.path("", origin.url("/a.png"), extension: "jpg"), method: .get).status == .ok)
            }
        }
        // A missing executable: SVG sources are 422, raster sources still served.
        let missing = Fixture.configuration { $0.svgRasterizerExecutable = directory.appendingPathComponent("missing") }
        let raster = try await Fixture.origin(["/plain.svg": .ok(Self.plain, contentType: "image/svg+xml")])
        try await Fixture.withServer(missing) { client, _ in
            for format in ["png", nil] as [String?] {
                let response = try await client.execute(uri: Fixture.path("", raster.url("/plain.svg"), extension: format), method: .get)
                #expect(response.status.code == 422)
                #expect(String(decoding: response.data, as: UTF8.self).contains("unavailable"))
            }
            #expect(try await client.execute(uri: Fixture.path("", raster.url("/a.png"), extension: "jpg"), method: .get).status == .ok)
        }
    }
}

/// What drawing in a child costs beside drawing in process, for
/// Benchmarks/svg-isolation.md: run with `IMAGO_SVG_BENCHMARK=1` (it
/// prints medians; it asserts only that both ways draw the same pixels).
@Suite(.enabled(if: ProcessInfo.processInfo.environment["IMAGO_SVG_BENCHMARK"] == "1"))
struct SVGIsolationBenchmark {
    /// A small icon and a large illustration (gradients, paths, text, a blur).
    static let documents: [(name: String, svg: Data)] = [
        ("small 64x64 icon", Data(##"""
            <svg xmlns="http://www.w3.org/2000/svg" width="64" height="64"><circle cx="32" cy="32" r="28" fill="#3a7"/>
            <path d="M20 34 l8 8 l16 -18" stroke="#fff" stroke-width="6" fill="none"/></svg>
            """##.utf8)),
        ("large 2000x2000 illustration", Data(##"""
            <svg xmlns="http://www.w3.org/2000/svg" width="2000" height="2000"><defs>
            <linearGradient id="g"><stop offset="0" stop-color="#fc0"/><stop offset="1" stop-color="#06c"/></linearGradient>
            <filter id="b"><feGaussianBlur stdDeviation="6"/></filter></defs>
            <rect width="2000" height="2000" fill="url(#g)"/>
            \##((0..<200).map { "<circle cx=\"\($0 * 10)\" cy=\"\(1000 + ($0 % 20) * 30)\" r=\"\(20 + $0 % 50)\" fill=\"#fff\" fill-opacity=\"0.3\"/>" }.joined())
            <text x="100" y="300" font-size="200" font-family="sans-serif" filter="url(#b)">Imago</text></svg>
            """##.utf8)),
    ]

    @Test func isolationCostPerDocument() async throws {
        let process = SVGIsolationTests.rasterizer()
        for (name, svg) in Self.documents {
            let sanitized = try SVGSanitizer().sanitized(svg)
            func median(_ body: () async throws -> Image) async throws -> Double {
                var times: [Double] = []
                for _ in 0..<15 {
                    let started = DispatchTime.now().uptimeNanoseconds
                    _ = try await body()
                    times.append(Double(DispatchTime.now().uptimeNanoseconds - started) / 1e6)
                }
                return times.sorted()[times.count / 2]
            }
            let inProcess = try await median { try SVGRasterizer().image(from: sanitized) }
            let isolated = try await median { try await process.image(from: sanitized) }
            #expect(try SVGRasterizer().image(from: sanitized).pixels == (try await process.image(from: sanitized)).pixels)
            print("svg-isolation: \(name): in process \(String(format: "%.1f", inProcess)) ms, "
                  + "child \(String(format: "%.1f", isolated)) ms, overhead \(String(format: "%.1f", isolated - inProcess)) ms")
        }
    }
}
#endif
