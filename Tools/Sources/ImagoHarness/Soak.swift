import ArgumentParser
import CommandLineSupport
import Foundation
@_spi(Testing) import Imago
import ImagoCodecs
import FaultInjection
import LoopbackServer
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension Harness {
    /// `imago-harness soak`: many requests through the pipeline to a fault-injecting server.
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
