import Foundation
@_spi(Testing) import Imago
import ImagoTesting
import Testing
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The pipeline, driven entirely by ImagoTesting doubles.
@Suite(.timeLimit(.minutes(1))) struct ImagePipelineTests {
    let loader = MockDataLoader()
    let decoder = MockImageDecoder(returning: TestImages.gradient(width: 8, height: 6))
    let memory = ImageCache(configuration: .init(costLimit: 1 << 20))
    let disk = InMemoryDataCache()
    let url = URL(string: "https://img.example/cat.png")!
    let time = ManualTimeSource(start: Date(timeIntervalSince1970: 1_800_000_000))

    private func pipeline(downloads: Int = 6, decodes: Int = 2, dataCache: Bool = true) -> ImagePipeline {
        ImagePipeline(configuration: .init(
            dataLoader: loader, dataCache: dataCache ? disk : nil, imageCache: memory,
            decoder: decoder, maximumConcurrentDownloads: downloads, maximumConcurrentDecodes: decodes,
            time: time.timeSource
        ))
    }

    @Test func loadsDecodesAndServesTheSecondRequestFromMemory() async throws {
        loader.stub(url, .image(TestImages.pngSignature))
        let pipeline = pipeline()
        let first = try await pipeline.image(for: ImageRequest(url: url))
        #expect(first.source == .network)
        #expect(first.image == TestImages.gradient(width: 8, height: 6))
        let second = try await pipeline.image(for: ImageRequest(url: url))
        #expect(second.source == .memory)
        #expect(loader.requests.count == 1 && decoder.calls.count == 1)
        #expect(pipeline.cachedImage(for: ImageRequest(url: url)) != nil)
    }

    @Test func aThousandConcurrentRequestsForOneURLCauseOneDownloadAndOneDecode() async throws {
        loader.stub(url, MockResponse.image(TestImages.pngSignature).held())
        let pipeline = pipeline()
        let tasks = (0..<1_000).map { _ in pipeline.imageTask(for: ImageRequest(url: url)) }
        let download = await loader.waitForTask(for: url)
        // Every request has joined the one decode before the bytes arrive.
        try await eventually { pipeline.statistics.mergedDecodes == 999 }
        download.complete()
        for task in tasks {
            #expect(try await task.response.image == TestImages.gradient(width: 8, height: 6))
        }
        #expect(loader.tasks.count == 1)
        #expect(decoder.calls.count == 1)
        #expect(pipeline.statistics.downloads == 1 && pipeline.statistics.decodes == 1)
        #expect(pipeline.statistics.mergedDecodes == 999)
    }

    @Test func differentSizesShareTheDownloadButNotTheDecode() async throws {
        loader.stub(url, MockResponse.image(TestImages.pngSignature).held())
        let pipeline = pipeline()
        let small = pipeline.imageTask(for: ImageRequest(url: url, maximumPixelSize: 64))
        let large = pipeline.imageTask(for: ImageRequest(url: url, maximumPixelSize: 512))
        let download = await loader.waitForTask(for: url)
        try await eventually { pipeline.statistics.decodes == 2 }
        download.complete()
        _ = try await (small.response, large.response)
        #expect(loader.tasks.count == 1)
        #expect(Set(decoder.calls.map(\.options.maximumPixelSize)) == [64, 512])
    }

    @Test func requestsDifferingInTheirLastProcessorShareEverythingBefore() async throws {
        loader.stub(url, MockResponse.image(TestImages.pngSignature).held())
        let (a, b, c) = (MockImageProcessor(identifier: "a"), MockImageProcessor(identifier: "b"), MockImageProcessor(identifier: "c"))
        let pipeline = pipeline()
        let first = pipeline.imageTask(for: ImageRequest(url: url, processors: [a, b]))
        let second = pipeline.imageTask(for: ImageRequest(url: url, processors: [a, c]))
        let third = pipeline.imageTask(for: ImageRequest(url: url, processors: [a, b]))
        let download = await loader.waitForTask(for: url)
        try await eventually { pipeline.statistics.processing == 3 }
        download.complete()
        _ = try await (first.response, second.response, third.response)
        #expect(decoder.calls.count == 1)
        #expect(a.runCount == 1 && b.runCount == 1 && c.runCount == 1)
        #expect(memory.image(for: try #require(pipeline.cacheKey(for: ImageRequest(url: url, processors: [a, c])))) != nil)
    }

    @Test func cancellingOneRequesterKeepsTheWorkAnotherStillWants() async throws {
        loader.stub(url, MockResponse.image(TestImages.pngSignature).held())
        let pipeline = pipeline()
        let leaving = pipeline.imageTask(for: ImageRequest(url: url))
        let staying = pipeline.imageTask(for: ImageRequest(url: url))
        let download = await loader.waitForTask(for: url)
        leaving.cancel()
        await #expect(throws: CancellationError.self) { try await leaving.response }
        #expect(!download.isCancelled)
        download.complete()
        #expect(try await staying.response.source == .network)
    }

    @Test func whenTheLastRequesterCancelsTheDownloadStopsAndNothingIsDecoded() async throws {
        loader.stub(url, MockResponse.image(TestImages.pngSignature).held())
        let pipeline = pipeline()
        let tasks = (0..<3).map { _ in pipeline.imageTask(for: ImageRequest(url: url)) }
        let download = await loader.waitForTask(for: url)
        for task in tasks { task.cancel() }
        for task in tasks { await #expect(throws: CancellationError.self) { try await task.response } }
        try await eventually { download.isCancelled }
        #expect(download.isCancelled)
        #expect(decoder.calls.isEmpty)
        #expect(memory.count == 0)
    }

    @Test func downloadsRunAtMostTheConfiguredNumberAtOnce() async throws {
        let urls = (0..<5).map { URL(string: "https://img.example/\($0).png")! }
        for url in urls { loader.stub(url, MockResponse.image(TestImages.pngSignature).held()) }
        let pipeline = pipeline(downloads: 2)
        let tasks = urls.map { pipeline.imageTask(for: ImageRequest(url: $0)) }
        try await eventually { loader.tasks.count == 2 }
        #expect(loader.tasks.count == 2)
        loader.tasks[0].complete()
        try await eventually { loader.tasks.count == 3 }
        #expect(loader.tasks.count == 3)
        for url in urls { loader.stub(url, .image(TestImages.pngSignature)) }
        loader.tasks.forEach { $0.complete() }
        // The rest were created after the stubs changed and complete on resume.
        for task in tasks { _ = try await task.response }
        #expect(loader.tasks.count == 5)
    }

    @Test func waitingDownloadsStartMostUrgentFirstAndPrioritiesCanChange() async throws {
        let blocker = URL(string: "https://img.example/blocker.png")!
        loader.stub(blocker, MockResponse.image(TestImages.pngSignature).held())
        let names = ["low", "normal", "high", "raised"]
        for name in names { loader.stub(URL(string: "https://img.example/\(name).png")!, .image(TestImages.pngSignature)) }
        // Decodes are plentiful, so only the download queue orders the work.
        let pipeline = pipeline(downloads: 1, decodes: 8)
        let first = pipeline.imageTask(for: ImageRequest(url: blocker))
        let blocking = await loader.waitForTask(for: blocker)
        let priorities: [ImageRequest.Priority] = [.low, .normal, .high, .veryLow]
        var tasks: [ImageTask] = []
        for (name, priority) in zip(names, priorities) {
            tasks.append(pipeline.imageTask(for: ImageRequest(url: URL(string: "https://img.example/\(name).png")!, priority: priority)))
        }
        try await eventually { pipeline.statistics.downloads == 5 }
        tasks[3].setPriority(.veryHigh)      // the last one jumps the queue
        blocking.complete()
        _ = try await first.response
        for task in tasks { _ = try await task.response }
        let order = loader.requests.dropFirst().map { $0.url!.deletingPathExtension().lastPathComponent }
        #expect(order == ["raised", "high", "normal", "low"])
    }

    @Test func downloadsDoNotRunAheadOfDecoding() async throws {
        // 1 download + 1 decode slot: at most two decodes may hold bytes, so
        // with the first decode blocked no third download starts.
        let urls = (0..<4).map { URL(string: "https://img.example/backlog-\($0).png")! }
        for url in urls { loader.stub(url, .image(TestImages.pngSignature)) }
        let gate = DecodeGate()
        let pipeline = ImagePipeline(configuration: .init(
            dataLoader: loader, imageCache: memory, decoder: gate,
            maximumConcurrentDownloads: 1, maximumConcurrentDecodes: 1, workQueue: DispatchQueue(label: "decode")
        ))
        let tasks = urls.map { pipeline.imageTask(for: ImageRequest(url: $0)) }
        try await eventually { gate.waiting == 1 && loader.tasks.count == 2 }
        #expect(loader.tasks.count == 2)
        gate.open()
        for task in tasks { _ = try await task.response }
        #expect(loader.tasks.count == 4)
    }

    @Test func progressIsReportedAsEvents() async throws {
        loader.stub(url, .data(Data(repeating: 1, count: 30), contentType: "image/png", chunkSize: 10))
        let task = pipeline().imageTask(for: ImageRequest(url: url))
        var progress: [Int64] = []
        var finished = false
        for await event in task.events {
            switch event {
            case .progress(let value): progress.append(value.completed)
            case .finished(let result): finished = (try? result.get()) != nil
            }
        }
        #expect(progress == [10, 20, 30])
        #expect(finished)
    }

    @Test func statisticsCountWorkStartedAndJoinedAtEveryStage() async throws {
        loader.stub(url, MockResponse.image(TestImages.pngSignature).held())
        let (a, b, c) = (MockImageProcessor(identifier: "a"), MockImageProcessor(identifier: "b"), MockImageProcessor(identifier: "c"))
        let pipeline = pipeline()
        let tasks = [
            pipeline.imageTask(for: ImageRequest(url: url, processors: [a, b])),
            pipeline.imageTask(for: ImageRequest(url: url, processors: [a, c])),   // joins the run of `a`
            pipeline.imageTask(for: ImageRequest(url: url, processors: [a, b])),   // joins the run of `a|b`
            pipeline.imageTask(for: ImageRequest(url: url, maximumPixelSize: 32)), // joins the download only
        ]
        let download = await loader.waitForTask(for: url)
        try await eventually { pipeline.statistics.mergedProcessing == 2 && pipeline.statistics.mergedDownloads == 1 }
        download.complete()
        for task in tasks { _ = try await task.response }
        let counts = { (s: ImagePipeline.Statistics) in [s.downloads, s.decodes, s.processing, s.mergedDownloads, s.mergedDecodes, s.mergedProcessing] }
        #expect(counts(pipeline.statistics) == [1, 2, 3, 1, 0, 2])
        // A memory-cache hit starts and joins nothing.
        _ = try await pipeline.image(for: ImageRequest(url: url, processors: [a, b]))
        #expect(counts(pipeline.statistics) == [1, 2, 3, 1, 0, 2])
    }

    @Test func theMemoryCacheIsWrittenOncePerJobAndOnlyWithTheFinalImage() async throws {
        loader.stub(url, MockResponse.image(TestImages.pngSignature).held())
        let recording = RecordingImageCache()
        let pipeline = ImagePipeline(configuration: .init(dataLoader: loader, imageCache: recording, decoder: decoder))
        let (a, b) = (MockImageProcessor(identifier: "a"), MockImageProcessor(identifier: "b"))
        let plain = (0..<3).map { _ in pipeline.imageTask(for: ImageRequest(url: url)) }
        let processed = (0..<3).map { _ in pipeline.imageTask(for: ImageRequest(url: url, maximumPixelSize: 8, processors: [a, b])) }
        let download = await loader.waitForTask(for: url)
        try await eventually { pipeline.statistics.mergedDecodes == 2 && pipeline.statistics.mergedProcessing == 2 }
        download.complete()
        for task in plain + processed { _ = try await task.response }
        #expect(Set(recording.stores) == [
            try #require(pipeline.cacheKey(for: ImageRequest(url: url))),
            try #require(pipeline.cacheKey(for: ImageRequest(url: url, maximumPixelSize: 8, processors: [a, b]))),
        ])
        #expect(recording.stores.count == 2)
    }

    @Test func aPlainRequestThatJoinsADecodeStartedForAProcessedOneIsKeptInMemory() async throws {
        loader.stub(url, MockResponse.image(TestImages.pngSignature).held())
        let pipeline = pipeline()
        let a = MockImageProcessor(identifier: "a")
        let processed = pipeline.imageTask(for: ImageRequest(url: url, processors: [a]))   // starts the decode
        let download = await loader.waitForTask(for: url)
        let plain = pipeline.imageTask(for: ImageRequest(url: url))                         // joins it
        try await eventually { pipeline.statistics.mergedDecodes == 1 }
        download.complete()
        _ = try await processed.response
        _ = try await plain.response
        #expect(pipeline.cachedImage(for: ImageRequest(url: url)) != nil)
        #expect(pipeline.cachedImage(for: ImageRequest(url: url, processors: [a])) != nil)
    }

    @Test func bytesThatDoNotDecodeAreNotKeptOnDisk() async throws {
        stubFresh(maxAge: 600)
        decoder.setResult(.failure(ImageDecodingError(.couldNotOpen, message: "bad")))
        let error = try await #require(throws: ImagePipelineError.self) { try await pipeline().image(for: ImageRequest(url: url)) }
        #expect(error.code == .decodingFailed)
        #expect(disk.writes == [try #require(pipeline().dataCacheKey(for: ImageRequest(url: url)))])
        #expect(disk.keys.isEmpty)
    }

    // MARK: Errors

    @Test func rejectedResponseIsAResponseRejectedError() async throws {
        loader.stub(url, .status(404, body: TestImages.pngSignature, contentType: "image/png"))
        let error = try await #require(throws: ImagePipelineError.self) { try await pipeline().image(for: ImageRequest(url: url)) }
        #expect(error.code == .responseRejected)
        #expect((error.underlying as? ResponseError)?.statusCode == 404)
        #expect(decoder.calls.isEmpty)
        #expect(disk.writes.isEmpty)
    }

    @Test func loaderFailureIsADataLoadingError() async throws {
        let original = IdentityError()
        loader.stub(url, .failure(original))
        let error = try await #require(throws: ImagePipelineError.self) { try await pipeline().image(for: ImageRequest(url: url)) }
        #expect(error.code == .dataLoadingFailed)
        #expect((error.underlying as? IdentityError) === original)
    }

    @Test func decoderFailureIsADecodingErrorAndNothingIsCachedInMemory() async throws {
        decoder.setResult(.failure(ImageDecodingError(.couldNotOpen, message: "bad")))
        loader.stub(url, .image(TestImages.pngSignature))
        let error = try await #require(throws: ImagePipelineError.self) { try await pipeline().image(for: ImageRequest(url: url)) }
        #expect(error.code == .decodingFailed)
        #expect(memory.count == 0)
    }

    @Test func processorFailureIsAProcessingError() async throws {
        loader.stub(url, .image(TestImages.pngSignature))
        let failing = MockImageProcessor(identifier: "broken") { _ in throw IdentityError() }
        let error = try await #require(throws: ImagePipelineError.self) {
            try await pipeline().image(for: ImageRequest(url: url, processors: [failing]))
        }
        #expect(error.code == .processingFailed)
    }

    // MARK: Disk cache and HTTP semantics

    private func stubFresh(maxAge: Int, etag: String = "\"v1\"", extra: [String: String] = [:]) {
        loader.stub(url, .data(TestImages.pngSignature, contentType: "image/png",
                               headers: ["Cache-Control": "max-age=\(maxAge)", "ETag": etag].merging(extra) { $1 }))
    }

    @Test func aFreshDiskEntryIsUsedWithoutTheNetwork() async throws {
        stubFresh(maxAge: 600)
        _ = try await pipeline().image(for: ImageRequest(url: url))
        #expect(disk.keys == [try #require(pipeline().dataCacheKey(for: ImageRequest(url: url)))])
        memory.removeAll()
        let again = try await pipeline().image(for: ImageRequest(url: url))
        #expect(again.source == .disk)
        #expect(loader.requests.count == 1)
    }

    @Test func aStaleEntryIsRevalidatedAndA304ReusesTheStoredBytes() async throws {
        stubFresh(maxAge: 0)
        _ = try await pipeline().image(for: ImageRequest(url: url))
        memory.removeAll()
        loader.stub(url, MockResponse(statusCode: 304, headers: ["Cache-Control": "max-age=60"]))
        let again = try await pipeline().image(for: ImageRequest(url: url))
        #expect(again.source == .disk)
        #expect(loader.requests.last?.value(forHTTPHeaderField: "If-None-Match") == "\"v1\"")
        #expect(decoder.calls.last?.data == TestImages.pngSignature)
        // The 304 refreshed the entry: the next load needs no network.
        memory.removeAll()
        _ = try await pipeline().image(for: ImageRequest(url: url))
        #expect(loader.requests.count == 2)
    }

    @Test func noStoreResponsesAreNotWrittenToDisk() async throws {
        loader.stub(url, .data(TestImages.pngSignature, contentType: "image/png", headers: ["Cache-Control": "no-store"]))
        _ = try await pipeline().image(for: ImageRequest(url: url))
        #expect(disk.writes.isEmpty)
    }

    @Test func reloadIgnoringCachesGoesToTheNetwork() async throws {
        stubFresh(maxAge: 600)
        _ = try await pipeline().image(for: ImageRequest(url: url))
        let reloaded = try await pipeline().image(for: ImageRequest(url: url, cachePolicy: .reloadIgnoringCaches))
        #expect(reloaded.source == .network)
        #expect(loader.requests.count == 2)
    }

    @Test func onlyCachedFailsWhenNothingIsCached() async throws {
        let error = try await #require(throws: ImagePipelineError.self) {
            try await pipeline().image(for: ImageRequest(url: url, cachePolicy: .onlyCached))
        }
        #expect(error.code == .notCached)
        #expect(loader.requests.isEmpty)
    }
}

@Suite(.timeLimit(.minutes(1))) struct ImagePipelineCancellationTests {
    @Test func cancellingTheCallerOfImageForCancelsTheLoad() async throws {
        let loader = MockDataLoader()
        let url = URL(string: "https://img.example/slow.png")!
        loader.stub(url, MockResponse.image(TestImages.pngSignature).held())
        let pipeline = ImagePipeline(configuration: .init(dataLoader: loader, imageCache: nil, decoder: MockImageDecoder()))
        let call = Task { try await pipeline.image(for: ImageRequest(url: url)) }
        let download = await loader.waitForTask(for: url)
        call.cancel()
        await #expect(throws: CancellationError.self) { try await call.value }
        try await eventually { download.isCancelled }
        #expect(download.isCancelled)
    }
}

/// An ``ImageCaching`` that keeps nothing and records every key stored.
final class RecordingImageCache: ImageCaching {
    private let storedKeys = Locked<[ImageCacheKey]>([])
    private let images = Locked<[ImageCacheKey: Image]>([:])
    var stores: [ImageCacheKey] { storedKeys.withLock { $0 } }
    func image(for key: ImageCacheKey) -> Image? { images.withLock { $0[key] } }
    func store(_ image: Image, for key: ImageCacheKey) {
        storedKeys.withLock { $0.append(key) }
        images.withLock { $0[key] = image }
    }
    func removeImage(for key: ImageCacheKey) {}
    func removeAll() {}
}

/// A decoder that blocks until the test opens it, counting who waits.
final class DecodeGate: ImageDecoding, @unchecked Sendable {
    // @unchecked Sendable: every field is guarded by `condition`.
    private let condition = NSCondition()
    private var isOpen = false
    private var waitingCount = 0

    var waiting: Int { condition.lock(); defer { condition.unlock() }; return waitingCount }

    func open() {
        condition.lock()
        isOpen = true
        condition.broadcast()
        condition.unlock()
    }

    func decode(_ data: Data, options: ImageDecodingOptions) throws -> Image {
        condition.lock()
        waitingCount += 1
        while !isOpen { condition.wait() }
        waitingCount -= 1
        condition.unlock()
        return TestImages.solid(width: 1, height: 1)
    }
}
