import ArgumentParser
import Foundation
import Imago
import ImagoCodecs
import LoopbackServer
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension Bench {
    /// `imago bench soak`: many requests through the pipeline to a fault-injecting server.
    struct Soak: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Send many requests through the pipeline to a fault-injecting loopback server and check that nothing leaks.",
            discussion: """
            A server on loopback answers most paths with small JPEG, PNG and WebP images and the rest with faults: \
            connection resets, short bodies, a 10 GB Content-Length, redirect chains and loops, 429 and 503 with \
            Retry-After, wrong content types, garbage bytes, a gzip bomb, a PNG that declares 100000 x 100000 pixels, \
            bytes that change behind one ETag, and a few stalled, trickling and endless bodies (the loader's idle \
            timeout is 2 s, its total timeout 5 s). The pipeline has an 8 MB memory cache and a 4 MB disk cache in a \
            temporary directory.

            Checks: every request ends with an image or a typed ImagePipelineError; every kind of path ends as \
            expected (images load, each fault fails at its stage); resident memory is flat (last quarter of the run \
            against the first, sampled after malloc_trim so freed memory does not count; judged on runs of 5,000 \
            requests or more) and is given back once the \
            pipeline is released; open file descriptors come back to their count before the run (less the idle \
            sockets URLSession keeps on Linux, at most --concurrency); no temporary files are left in the disk \
            cache. Exits 1 if a check fails.
            """
        )

        @Option(help: "How many requests to send.")
        var requests: Int = 20_000

        @Option(help: "Requests in flight at once (also the pipeline's download limit).")
        var concurrency: Int = 64

        @Option(help: ArgumentHelp("Give up (exit 1) if the run takes longer than this.", valueName: "SECONDS"))
        var timeout: Int = 900

        @Option(help: ArgumentHelp("Send only these kinds of path, comma-separated (to look into one fault).", valueName: "KINDS"))
        var only: String?

        @Flag(help: "One JSON object, on one line.")
        var json = false

        func validate() throws {
            if requests < 1 || concurrency < 1 || timeout < 1 {
                throw ValidationError("--requests, --concurrency and --timeout must be at least 1.")
            }
            let names = Set(SoakRun.kinds.map(\.name))
            for name in onlyKinds ?? [] where !names.contains(name) {
                throw ValidationError("--only: no kind \(name); the kinds are \(SoakRun.kinds.map(\.name).joined(separator: ", ")).")
            }
        }

        private var onlyKinds: [String]? { only.map { $0.split(separator: ",").map { String($0) } } }

        func run() async throws {
            let kinds = onlyKinds.map { names in SoakRun.kinds.filter { names.contains($0.name) } } ?? SoakRun.kinds
            let report = try await SoakRun(requests: requests, concurrency: concurrency, timeout: timeout, kinds: kinds).run()
            if json {
                Output.line(report.json.text)
            } else {
                for line in report.lines { Output.line(line) }
            }
            if !report.passed { throw ExitCode(1) }
        }
    }
}

/// One kind of path the soak server answers, and how its requests must end.
struct SoakKind: Sendable {
    /// The name in reports, such as `reset-mid-body`.
    let name: String
    /// Requests per thousand.
    let weight: Int
    /// The acceptable outcomes: `ok`, or an ``ImagePipelineError/Code`` name.
    let expected: Set<String>
    /// The request's path for request number `index` (a query keeps fault URLs distinct, so no two merge).
    let path: @Sendable (_ index: Int, _ random: UInt64) -> String
}

/// The soak: a fault server, a pipeline with both caches, many requests, then the checks.
struct SoakRun {
    let requests: Int
    let concurrency: Int
    let timeout: Int
    let kinds: [SoakKind]

    static let goodPathCount = 600
    static let diskCacheLimit = 4 << 20

    /// The paths, with their share of the requests.
    static let kinds: [SoakKind] = {
        func fault(_ name: String, _ weight: Int, _ expected: String) -> SoakKind {
            SoakKind(name: name, weight: weight, expected: [expected]) { index, _ in "/fault/\(name)?n=\(index)" }
        }
        return [
            SoakKind(name: "image", weight: 790, expected: ["ok"]) { _, random in
                "/good/\(random % UInt64(goodPathCount))"
            },
            SoakKind(name: "same-etag-new-bytes", weight: 20, expected: ["ok"]) { _, random in "/etag/\(random % 8)" },
            SoakKind(name: "redirect-chain-3", weight: 20, expected: ["ok"]) { index, _ in "/chain/1?n=\(index)" },
            SoakKind(name: "redirect-chain-8", weight: 10, expected: ["dataLoadingFailed"]) { index, _ in "/long-chain/1?n=\(index)" },
            SoakKind(name: "redirect-loop", weight: 10, expected: ["dataLoadingFailed"]) { index, _ in "/loop/1?n=\(index)" },
            fault("reset-before-head", 20, "dataLoadingFailed"),
            fault("reset-mid-body", 20, "dataLoadingFailed"),
            fault("short-body", 20, "dataLoadingFailed"),
            fault("content-length-10gb", 15, "dataLoadingFailed"),
            fault("status-429-retry-after", 12, "responseRejected"),
            fault("status-503-retry-after", 12, "responseRejected"),
            fault("wrong-content-type", 15, "responseRejected"),
            fault("garbage-bytes", 10, "decodingFailed"),
            fault("gzip-bomb-100mb", 5, "dataLoadingFailed"),
            fault("png-bomb-100000x100000", 12, "decodingFailed"),
            fault("stalled-body", 3, "dataLoadingFailed"),
            fault("trickle-1-byte-per-s", 2, "dataLoadingFailed"),
            fault("endless-chunks", 1, "dataLoadingFailed"),
        ]
    }()

    /// The server's routes for every kind.
    static func routes(images: [(data: Data, contentType: String)]) -> [String: ServedResponse] {
        var routes: [String: ServedResponse] = [:]
        for index in 0..<goodPathCount {
            let image = images[index % images.count]
            routes["/good/\(index)"] = ServedResponse(headers: [("Content-Type", image.contentType), ("Cache-Control", "max-age=3600")], body: image.data)
        }
        let sample = ServedResponse.ok(images[0].data, contentType: images[0].contentType)
        routes.merge(ServedResponse.redirectChain(3, prefix: "/chain", to: "/good/0")) { $1 }
        routes.merge(ServedResponse.redirectChain(8, prefix: "/long-chain", to: "/good/0")) { $1 }
        routes.merge(ServedResponse.redirectLoop(3, prefix: "/loop")) { $1 }
        let faults: [String: ServedResponse] = [
            "reset-before-head": sample.delivered(.resetBeforeHead),
            "reset-mid-body": sample.delivered(.reset(afterBytes: images[0].data.count / 2)),
            "short-body": sample.delivered(.truncated(afterBytes: images[0].data.count / 2)),
            "content-length-10gb": .oversized(declaredLength: 10 << 30),
            "status-429-retry-after": .tooManyRequests(retryAfter: 1),
            "status-503-retry-after": .serviceUnavailable(retryAfter: 1),
            "wrong-content-type": sample.withContentType("text/html; charset=utf-8"),
            "garbage-bytes": .ok(Data((0..<4_000).map { UInt8(truncatingIfNeeded: $0 &* 7919 >> 3) }), contentType: "image/jpeg"),
            "gzip-bomb-100mb": .gzipBomb(inflatedSize: 100 << 20),
            "png-bomb-100000x100000": .pngBomb(),
            // Declares the whole image, sends half, then says nothing: the idle timeout.
            "stalled-body": ServedResponse.ok(images[0].data.prefix(images[0].data.count / 2), contentType: images[0].contentType)
                .declaringLength(images[0].data.count),
            "trickle-1-byte-per-s": sample.delivered(.trickle(chunkSize: 1, interval: .seconds(1))),
            "endless-chunks": ServedResponse(headers: [("Content-Type", "image/png")]).delivered(.endlessChunks(chunkSize: 16_384, interval: .milliseconds(20))),
        ]
        for (name, response) in faults { routes["/fault/\(name)"] = response }
        return routes
    }

    /// Small photo-like images in every format the server sends.
    static func images() throws -> [(data: Data, contentType: String)] {
        var images: [(Data, String)] = []
        for (index, (width, height)) in [(160, 120), (120, 160), (96, 96), (200, 150)].enumerated() {
            let image = SampleImages.photo(width: width, height: height, seed: index)
            images.append((try ImageEncoders.jpeg(quality: 80).encode(image), "image/jpeg"))
            images.append((try ImageEncoders.png().encode(image), "image/png"))
            images.append((try ImageEncoders.webp(quality: 75).encode(image), "image/webp"))
        }
        return images
    }

    func run() async throws -> SoakReport {
        ProcessStatus.returnLargeAllocationsAtOnce()
        let images = try Self.images()
        let cacheDirectory = FileManager.default.temporaryDirectory.appendingPathComponent("imago-soak-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: cacheDirectory) }

        // Warm up what lives for the whole process (the event loops, the
        // session machinery) so that the descriptor count compares like with like.
        try await warmUp(images: images)
        let descriptorsBefore = ProcessStatus.openFileDescriptors()
        ProcessStatus.trimFreeMemory()
        let residentBefore = ProcessStatus.kilobytes("VmRSS").map { Double($0) / 1024 }
        let server = try await LoopbackServer.start(routes: Self.routes(images: images), recordsRequests: false)
        for index in 0..<8 {
            server.route("/etag/\(index)", responder: ServedResponse.sameETagNewBytes(etag: "\"etag-\(index)\"", contentType: images[index].contentType) { count in
                images[(index + count) % images.count].data
            })
        }
        let watchdog = Task { [timeout] in
            try await Task.sleep(for: .seconds(timeout))
            Output.error("imago: the soak did not finish within \(timeout) s")
            Foundation.exit(1)
        }
        let tally = SoakTally(kinds: kinds)
        let sampler = MemorySampler(total: requests)
        let sampling = Task { await sampler.run(progress: { tally.completed }) }
        let started = ContinuousClock.now
        let statistics = await load(Self.plan(count: requests, kinds: kinds), from: server, cacheDirectory: cacheDirectory, tally: tally)
        let seconds = (ContinuousClock.now - started).milliseconds / 1_000
        sampling.cancel()
        _ = await sampling.value
        watchdog.cancel()
        // The pipeline and its caches are gone: what is still resident was not theirs to keep.
        try? await Task.sleep(for: .milliseconds(500))
        ProcessStatus.trimFreeMemory()
        let residentAfter = ProcessStatus.kilobytes("VmRSS").map { Double($0) / 1024 }

        // FoundationNetworking keeps a session's idle connections open after
        // the session is invalidated and released: count them apart.
        let pooledConnections = server.openConnections
        try await server.stop()
        _ = await server.waitForOpenConnections(timeout: .seconds(5))
        let descriptorsAfter = await ProcessStatus.settledFileDescriptors(target: descriptorsBefore, margin: SoakReport.descriptorMargin, excludingSocketsTo: server.port)
        let leftovers = (try? FileManager.default.contentsOfDirectory(atPath: cacheDirectory.path)) ?? []
        let temporaryFiles = leftovers.filter { $0.hasPrefix(".tmp-") }.count
        let diskCacheBytes = leftovers.reduce(0) { total, name in
            let attributes = try? FileManager.default.attributesOfItem(atPath: cacheDirectory.appendingPathComponent(name).path)
            return total + ((attributes?[.size] as? Int) ?? 0)
        }
        return SoakReport(
            requests: requests, concurrency: concurrency, seconds: seconds,
            tally: tally.snapshot(), statistics: statistics, memory: sampler.summary(), residentBeforeMB: residentBefore, residentAfterMB: residentAfter,
            descriptorsBefore: descriptorsBefore, descriptorsAfter: descriptorsAfter,
            temporaryFiles: temporaryFiles, diskCacheBytes: diskCacheBytes, diskCacheLimit: Self.diskCacheLimit,
            serverConnections: server.acceptedConnections, serverOpenConnections: server.openConnections,
            pooledConnections: pooledConnections
        )
    }

    /// Sends every planned request, `concurrency` at a time, through a pipeline
    /// that is released on return (with its session and connections).
    private func load(_ plan: [(kind: Int, path: String)], from server: LoopbackServer, cacheDirectory: URL, tally: SoakTally) async -> ImagePipeline.Statistics {
        let pipeline = Self.pipeline(concurrency: concurrency, cacheDirectory: cacheDirectory)
        let progress = ProgressBar(total: plan.count)
        defer { progress.finish() }
        await withTaskGroup(of: Void.self) { group in
            var next = 0
            func add() {
                guard next < plan.count else { return }
                let (kind, path) = plan[next]
                next += 1
                let url = server.url(path)
                group.addTask {
                    let outcome: SoakOutcome
                    do {
                        let response = try await pipeline.image(for: ImageRequest(url: url))
                        outcome = .image(source: response.source.rawValue)
                    } catch let error as ImagePipelineError {
                        outcome = .typed(code: error.code.description, detail: Self.detail(of: error))
                    } catch {
                        outcome = .untyped(String(describing: error))
                    }
                    tally.record(kind: kind, path: path, outcome: outcome)
                    progress.advance(succeeded: outcome.isImage)
                }
            }
            for _ in 0..<concurrency { add() }
            for await _ in group { add() }
        }
        return pipeline.statistics
    }

    /// The pipeline under test: the default network loader (with its
    /// retries) with short timeouts, a memory cache and a small disk cache.
    static func pipeline(concurrency: Int, cacheDirectory: URL) -> ImagePipeline {
        var loaderConfiguration = URLSessionDataLoader.Configuration()
        loaderConfiguration.idleTimeout = 2
        loaderConfiguration.totalTimeout = 5
        loaderConfiguration.maximumConnectionsPerHost = concurrency
        return ImagePipeline(configuration: .init(
            dataLoader: DataLoader(network: RetryingDataLoader(wrapping: URLSessionDataLoader(configuration: loaderConfiguration))),
            dataCache: DataCache(configuration: .init(directory: cacheDirectory, sizeLimit: diskCacheLimit)),
            imageCache: ImageCache(configuration: .init(costLimit: 8 << 20)),
            decoder: ImageDecoders.all,
            maximumConcurrentDownloads: concurrency
        ))
    }

    /// A few loads through a throwaway server and pipeline.
    private func warmUp(images: [(data: Data, contentType: String)]) async throws {
        let server = try await LoopbackServer.start(routes: ["/warm": .ok(images[0].data, contentType: images[0].contentType)])
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("imago-soak-warm-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        do {
            let pipeline = Self.pipeline(concurrency: 2, cacheDirectory: directory)
            _ = try? await pipeline.image(for: ImageRequest(url: server.url("/warm")))
        }
        try await server.stop()
        _ = await server.waitForOpenConnections(timeout: .seconds(2))
    }

    /// Which kind and path each request uses: weighted, from a fixed seed, so runs repeat.
    static func plan(count: Int, kinds: [SoakKind]) -> [(kind: Int, path: String)] {
        var state: UInt64 = 0x2545_F491_4F6C_DD1D
        func random() -> UInt64 {
            state ^= state << 13; state ^= state >> 7; state ^= state << 17
            return state
        }
        let total = kinds.reduce(0) { $0 + $1.weight }
        return (0..<count).map { index in
            var pick = Int(random() % UInt64(total))
            var kind = 0
            while pick >= kinds[kind].weight {
                pick -= kinds[kind].weight
                kind += 1
            }
            return (kind, kinds[kind].path(index, random()))
        }
    }

    /// The stage's own code under the pipeline's: `timedOut`, `unacceptableStatus`, `pixelLimitExceeded`.
    static func detail(of error: ImagePipelineError) -> String {
        switch error.underlying {
        case let error as DataLoadingError: "\(error.code)"
        case let error as ResponseError: "\(error.code)"
        case let error as ImageDecodingError: "\(error.code)"
        case let error?: "\(type(of: error))"
        case nil: "-"
        }
    }
}

/// How one request ended.
enum SoakOutcome: Sendable {
    case image(source: String)
    case typed(code: String, detail: String)
    case untyped(String)

    var isImage: Bool { if case .image = self { true } else { false } }

    /// `ok` or the pipeline's code: what ``SoakKind/expected`` lists.
    var code: String {
        switch self {
        case .image: "ok"
        case .typed(let code, _): code
        case .untyped: "untyped"
        }
    }

    /// The code with the stage's detail, as reports count it.
    var key: String {
        switch self {
        case .image: "ok"
        case .typed(let code, let detail): "\(code).\(detail)"
        case .untyped: "untyped"
        }
    }
}

/// Counts of outcomes, by kind, from any task.
final class SoakTally: Sendable {
    struct Counts: Sendable {
        var requests = 0
        var unexpected = 0
        var outcomes: [String: Int] = [:]
    }

    struct Snapshot: Sendable {
        var kinds: [(name: String, counts: Counts)]
        var sources: [String: Int]
        var untyped: Int
        var examples: [String]
    }

    private let kinds: [SoakKind]
    private let state: Locked<(counts: [Counts], sources: [String: Int], completed: Int, examples: [String])>

    init(kinds: [SoakKind]) {
        self.kinds = kinds
        state = Locked((Array(repeating: Counts(), count: kinds.count), [:], 0, []))
    }

    var completed: Int { state.withLock { $0.completed } }

    func record(kind: Int, path: String, outcome: SoakOutcome) {
        let expected = kinds[kind].expected.contains(outcome.code)
        state.withLock { state in
            state.completed += 1
            state.counts[kind].requests += 1
            state.counts[kind].outcomes[outcome.key, default: 0] += 1
            if case .image(let source) = outcome { state.sources[source, default: 0] += 1 }
            if !expected {
                state.counts[kind].unexpected += 1
                if state.examples.count < 10 {
                    let detail = if case .untyped(let text) = outcome { text } else { outcome.key }
                    state.examples.append("\(kinds[kind].name) \(path): \(detail)")
                }
            }
        }
    }

    func snapshot() -> Snapshot {
        state.withLock { state in
            Snapshot(
                kinds: zip(kinds, state.counts).map { ($0.name, $1) },
                sources: state.sources,
                untyped: state.counts.reduce(0) { $0 + $1.outcomes["untyped", default: 0] },
                examples: state.examples
            )
        }
    }
}

/// Samples the resident set while the run goes on.
final class MemorySampler: Sendable {
    struct Summary: Sendable {
        var firstQuarterMB: Double?
        var lastQuarterMB: Double?
        var peakMB: Double?
        var samples: Int
    }

    private let total: Int
    private let samples = Locked<[(progress: Int, kilobytes: Int)]>([])

    init(total: Int) {
        self.total = total
    }

    /// Samples every 100 ms until cancelled; `progress` is how many requests have finished.
    func run(progress: @Sendable () -> Int) async {
        while !Task.isCancelled {
            ProcessStatus.trimFreeMemory()
            if let rss = ProcessStatus.kilobytes("VmRSS") {
                let done = progress()
                samples.withLock { $0.append((done, rss)) }
            }
            try? await Task.sleep(for: .milliseconds(100))
        }
    }

    func summary() -> Summary {
        let samples = samples.withLock { $0 }
        func average(_ range: Range<Int>) -> Double? {
            let values = samples.filter { range.contains($0.progress) }.map(\.kilobytes)
            return values.isEmpty ? nil : Double(values.reduce(0, +)) / Double(values.count) / 1024
        }
        return Summary(
            firstQuarterMB: average(0..<max(1, total / 4)),
            lastQuarterMB: average(total * 3 / 4..<total + 1),
            peakMB: ProcessStatus.kilobytes("VmHWM").map { Double($0) / 1024 },
            samples: samples.count
        )
    }
}

/// What `/proc/self` says about this process (Linux; `nil` elsewhere).
enum ProcessStatus {
    /// A `kB` field of `/proc/self/status`, such as `VmRSS` or `VmHWM`.
    static func kilobytes(_ field: String) -> Int? {
        guard let text = procFile("/proc/self/status") else { return nil }
        for line in text.split(separator: "\n") where line.hasPrefix(field + ":") {
            return Int(line.dropFirst(field.count + 1).trimmingCharacters(in: .whitespaces).split(separator: " ").first ?? "")
        }
        return nil
    }

    /// A file under `/proc`, read to its end (they report no size, and a
    /// single read returns one page at most).
    private static func procFile(_ path: String) -> String? {
        guard let handle = FileHandle(forReadingAtPath: path) else { return nil }
        defer { try? handle.close() }
        var data = Data()
        while true {
            guard let chunk = try? handle.read(upToCount: 65_536), !chunk.isEmpty else { break }
            data.append(chunk)
        }
        return String(decoding: data, as: UTF8.self)
    }

    /// Makes glibc return large buffers (a gzip bomb's 25 MB) to the system
    /// when they are freed, so the resident set follows live memory rather
    /// than the allocator's high-water mark: `mallopt(M_MMAP_THRESHOLD, 1 MB)`
    /// (by default the threshold grows up to 32 MB as big buffers come and go).
    static func returnLargeAllocationsAtOnce() {
        #if os(Linux)
        typealias Mallopt = @convention(c) (Int32, Int32) -> Int32
        guard let symbol = dlsym(nil, "mallopt") else { return }
        let mmapThreshold: Int32 = -3   // M_MMAP_THRESHOLD in <malloc.h>
        _ = unsafeBitCast(symbol, to: Mallopt.self)(mmapThreshold, 1 << 20)
        #endif
    }

    /// Hands memory that is free but still mapped back to the system
    /// (`malloc_trim(0)`, every arena), so the resident set counts live
    /// memory: the small buffers a gzip bomb streams through otherwise stay
    /// mapped in the allocator's per-thread arenas after they are freed.
    static func trimFreeMemory() {
        #if os(Linux)
        typealias MallocTrim = @convention(c) (Int) -> Int32
        guard let symbol = dlsym(nil, "malloc_trim") else { return }
        _ = unsafeBitCast(symbol, to: MallocTrim.self)(0)
        #endif
    }

    /// How many file descriptors are open.
    static func openFileDescriptors() -> Int? {
        (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")).map(\.count)
    }

    /// The descriptor count, less client sockets to `port`, once it is within
    /// `margin` of `target`, or after five seconds: (that count, the sockets left out).
    static func settledFileDescriptors(target: Int?, margin: Int, excludingSocketsTo port: Int) async -> (count: Int, excluded: Int)? {
        let deadline = ContinuousClock.now + .seconds(5)
        while true {
            guard let count = openFileDescriptors() else { return nil }
            let excluded = clientSockets(toPort: port)
            guard let target else { return (count - excluded, excluded) }
            if count - excluded <= target + margin || ContinuousClock.now >= deadline { return (count - excluded, excluded) }
            try? await Task.sleep(for: .milliseconds(100))
        }
    }

    /// How many of this process's descriptors are TCP sockets whose remote end is `port` on loopback.
    static func clientSockets(toPort port: Int) -> Int {
        var inodes = Set<String>()
        for table in ["/proc/self/net/tcp", "/proc/self/net/tcp6"] {
            guard let text = procFile(table) else { continue }
            for line in text.split(separator: "\n").dropFirst() {
                let fields = line.split(separator: " ")
                guard fields.count > 9, let remotePort = fields[2].split(separator: ":").last.flatMap({ Int($0, radix: 16) }),
                      remotePort == port else { continue }
                inodes.insert(String(fields[9]))
            }
        }
        guard !inodes.isEmpty, let descriptors = try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd") else { return 0 }
        return descriptors.filter { descriptor in
            guard let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/" + descriptor),
                  target.hasPrefix("socket:[") else { return false }
            return inodes.contains(String(target.dropFirst(8).dropLast()))
        }.count
    }
}

/// The figures and the checks.
struct SoakReport {
    let requests: Int
    let concurrency: Int
    let seconds: Double
    let tally: SoakTally.Snapshot
    let statistics: ImagePipeline.Statistics
    let memory: MemorySampler.Summary
    /// The resident set before the run, after the warm-up.
    let residentBeforeMB: Double?
    /// The resident set once the pipeline and its caches were released.
    let residentAfterMB: Double?
    let descriptorsBefore: Int?
    /// The descriptors open after the run, less the HTTP client's idle sockets to the server (`excluded`).
    let descriptorsAfter: (count: Int, excluded: Int)?
    let temporaryFiles: Int
    let diskCacheBytes: Int
    let diskCacheLimit: Int
    let serverConnections: Int
    let serverOpenConnections: Int
    /// Connections still open when the loads ended (the HTTP client's idle pool).
    let pooledConnections: Int

    /// How far the file descriptor count may end above where it started.
    static let descriptorMargin = 4
    /// Runs shorter than this report their memory figures without judging flatness.
    static let requestsToJudgeMemory = 5_000

    /// Whether this binary runs under the thread or address sanitizer, whose
    /// allocators keep freed memory and shadow it: its figures are reported,
    /// not judged.
    static let underSanitizer: Bool = dlsym(nil, "__tsan_init") != nil || dlsym(nil, "__asan_init") != nil

    var completed: Int { tally.kinds.reduce(0) { $0 + $1.counts.requests } }
    var unexpected: Int { tally.kinds.reduce(0) { $0 + $1.counts.unexpected } }
    var images: Int { tally.kinds.reduce(0) { $0 + $1.counts.outcomes["ok", default: 0] } }

    /// Each check, its result and what it saw.
    var checks: [(name: String, passed: Bool, detail: String)] {
        let memoryFlat: Bool
        if Self.underSanitizer {
            memoryFlat = true
        } else if requests < Self.requestsToJudgeMemory {
            // A short run is all transients (one gzip bomb holds ~100 MB for a
            // moment): its quarters say nothing about growth.
            memoryFlat = true
        } else if let first = memory.firstQuarterMB, let last = memory.lastQuarterMB {
            // Room for the gzip bombs' transients (each holds up to ~100 MB for a moment); a leak grows with the run.
            memoryFlat = last <= first * 1.2 + 32
        } else {
            memoryFlat = true   // too short a run to tell
        }
        let memoryReleased: Bool
        if Self.underSanitizer {
            memoryReleased = true
        } else if let before = residentBeforeMB, let after = residentAfterMB {
            memoryReleased = after <= before + 64
        } else {
            memoryReleased = true
        }
        let descriptors: Bool
        if let before = descriptorsBefore, let after = descriptorsAfter {
            descriptors = after.count <= before + Self.descriptorMargin && after.excluded <= concurrency
        } else {
            descriptors = true
        }
        func mb(_ value: Double?) -> String { value.map { String(format: "%.1f MB", $0) } ?? "n/a" }
        return [
            ("all requests completed", completed == requests, "\(completed) of \(requests)"),
            ("typed errors only", tally.untyped == 0, "\(tally.untyped) untyped"),
            ("expected outcomes", unexpected == 0, "\(unexpected) unexpected"),
            ("memory flat", memoryFlat, (Self.underSanitizer ? "not judged under a sanitizer; "
                : requests < Self.requestsToJudgeMemory ? "not judged under \(Self.requestsToJudgeMemory) requests; " : "") + "RSS first quarter \(mb(memory.firstQuarterMB)), last quarter \(mb(memory.lastQuarterMB)), peak \(mb(memory.peakMB))"),
            ("memory released", memoryReleased, (Self.underSanitizer ? "not judged under a sanitizer; " : "") + "RSS \(mb(residentBeforeMB)) before the run, \(mb(residentAfterMB)) once the pipeline was released"),
            ("file descriptors released", descriptors, "\(descriptorsBefore.map(String.init) ?? "n/a") before, "
                + (descriptorsAfter.map { "\($0.count) after, besides \($0.excluded) idle client sockets kept by URLSession" } ?? "n/a after")),
            ("connections bounded", pooledConnections <= concurrency && serverOpenConnections == 0,
             "\(pooledConnections) idle at the end (at most \(concurrency)), \(serverOpenConnections) open after the server stopped; \(serverConnections) accepted"),
            ("no temporary cache files", temporaryFiles == 0, "\(temporaryFiles) left; disk cache \(diskCacheBytes >> 10) KB, limit \(diskCacheLimit >> 10) KB"),
        ]
    }

    var passed: Bool { checks.allSatisfy(\.passed) }

    var lines: [String] {
        var lines = [String(format: "soak: %d requests in %.1f s, %.0f requests/s, concurrency %d; %d images, %d failed as expected",
                            requests, seconds, Double(completed) / seconds, concurrency, images, completed - images - unexpected)]
        lines.append("images from " + ["network", "disk", "memory"].map { "\($0) \(tally.sources[$0, default: 0])" }.joined(separator: ", ")
                     + "; \(statistics.downloads) downloads, \(statistics.decodes) decodes; server saw \(serverConnections) connections")
        lines.append("kind                      requests  outcomes")
        for (name, counts) in tally.kinds {
            let outcomes = counts.outcomes.sorted { $0.value > $1.value }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
            lines.append(name.padding(toLength: 24, withPad: " ", startingAt: 0) + String(format: "  %8d  ", counts.requests) + outcomes
                         + (counts.unexpected > 0 ? "  (\(counts.unexpected) UNEXPECTED)" : ""))
        }
        for (name, passed, detail) in checks {
            lines.append((passed ? "pass  " : "FAIL  ") + name + ": " + detail)
        }
        lines.append(contentsOf: tally.examples.map { "unexpected: " + $0 })
        return lines
    }

    var json: JSONValue {
        func counts(_ dictionary: [String: Int]) -> JSONValue {
            .object(dictionary.sorted { $0.key < $1.key }.map { ($0.key, .int($0.value)) })
        }
        func optional(_ value: Double?) -> JSONValue { value.map(JSONValue.double) ?? .null }
        func optional(_ value: Int?) -> JSONValue { value.map(JSONValue.int) ?? .null }
        var byCode: [String: Int] = [:]
        for (_, kind) in tally.kinds {
            for (key, count) in kind.outcomes { byCode[String(key.prefix { $0 != "." }), default: 0] += count }
        }
        return .object([
            ("benchmark", .string("soak")), ("passed", .bool(passed)),
            ("requests", .int(requests)), ("completed", .int(completed)), ("concurrency", .int(concurrency)),
            ("seconds", .double(seconds)), ("requests_per_s", .double(Double(completed) / seconds)),
            ("images", .int(images)), ("unexpected", .int(unexpected)), ("untyped", .int(tally.untyped)),
            ("outcomes", counts(byCode)),
            ("kinds", .object(tally.kinds.map { name, kind in
                (name, .object([("requests", .int(kind.requests)), ("unexpected", .int(kind.unexpected)), ("outcomes", counts(kind.outcomes))]))
            })),
            ("sources", counts(tally.sources)),
            ("downloads", .int(statistics.downloads)), ("decodes", .int(statistics.decodes)),
            ("rss_first_quarter_mb", optional(memory.firstQuarterMB)), ("rss_last_quarter_mb", optional(memory.lastQuarterMB)),
            ("peak_rss_mb", optional(memory.peakMB)), ("rss_before_mb", optional(residentBeforeMB)), ("rss_after_mb", optional(residentAfterMB)),
            ("fds_before", optional(descriptorsBefore)), ("fds_after", optional(descriptorsAfter?.count)),
            ("fds_idle_client_sockets", optional(descriptorsAfter?.excluded)), ("pooled_connections", .int(pooledConnections)),
            ("temporary_files", .int(temporaryFiles)), ("disk_cache_bytes", .int(diskCacheBytes)), ("disk_cache_limit", .int(diskCacheLimit)),
            ("server_connections", .int(serverConnections)),
            ("checks", .object(checks.map { ($0.name.replacingOccurrences(of: " ", with: "_"), .bool($0.passed)) })),
        ])
    }
}

