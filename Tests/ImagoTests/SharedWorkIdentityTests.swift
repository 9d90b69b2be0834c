import Foundation
@_spi(Testing) import Imago
import ImagoTesting
import Testing
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What may and may not share work and cache entries: requests whose
/// credentials differ never do, each cache policy behaves as documented
/// whatever else is in flight, and no URL can pose as another request.
///
/// The decoder makes an image as wide as its payload, so each caller's
/// image tells which bytes it received.
@Suite(.timeLimit(.minutes(1))) struct SharedWorkIdentityTests {
    let loader = MockDataLoader()
    let decoder = MockImageDecoder { data in TestImages.solid(width: max(1, data.count), height: 1) }
    let memory = ImageCache(configuration: .init(costLimit: 1 << 20))
    let disk = InMemoryDataCache()
    let url = URL(string: "https://img.example/private.png")!
    let time = ManualTimeSource(start: Date(timeIntervalSince1970: 1_800_000_000))

    private func pipeline(
        credentialHeaders: Set<String> = [], imageCache: ImageCache? = nil, workQueue: any Dispatching = DispatchQueue.global()
    ) -> ImagePipeline {
        ImagePipeline(configuration: .init(
            dataLoader: loader, dataCache: disk, imageCache: imageCache ?? memory, decoder: decoder,
            additionalCredentialHeaders: credentialHeaders, time: time.timeSource, workQueue: workQueue
        ))
    }

    /// A cacheable image response whose body is `count` bytes long.
    private func payload(_ count: Int) -> MockResponse {
        .data(Data(repeating: 7, count: count), contentType: "image/png", headers: ["Cache-Control": "max-age=600"])
    }

    /// Puts a fresh entry of `byteCount` bytes in the disk cache for a plain request of ``url``.
    private func storeFreshDiskEntry(byteCount: Int) throws {
        let entry = DataCacheEntry(data: Data(repeating: 1, count: byteCount), contentType: "image/png",
                                   storedAt: time.now, expiresAt: time.now.addingTimeInterval(600))
        disk.store(entry, for: try #require(pipeline().dataCacheKey(for: request())))
    }

    private func request(
        _ headers: [String: String] = [:],
        policy: ImageRequest.CachePolicy = .useCaches,
        imageID: String? = nil,
        url: URL? = nil
    ) -> ImageRequest {
        var urlRequest = URLRequest(url: url ?? self.url)
        for (name, value) in headers { urlRequest.setValue(value, forHTTPHeaderField: name) }
        return ImageRequest(urlRequest: urlRequest, cachePolicy: policy, imageID: imageID)
    }

    /// Waits until `count` requests reached the data stage (started or joined a download).
    private func awaitDataStage(_ pipeline: ImagePipeline, count: Int) async throws {
        try await eventually {
            let statistics = pipeline.statistics
            return statistics.downloads + statistics.mergedDownloads == count
        }
    }

    // MARK: - Credentials

    static let differingCredentials: [(first: [String: String], second: [String: String], named: Set<String>)] = [
        ([:], ["Authorization": "Bearer A"], []),
        (["Authorization": "Bearer A"], ["Authorization": "Bearer B"], []),
        (["Cookie": "session=1"], ["Cookie": "session=2"], []),
        (["Proxy-Authorization": "Basic eDp5"], ["Proxy-Authorization": "Basic eTp6"], []),
        (["Authorization": "Bearer A"], ["Cookie": "session=1"], []),
        (["X-Api-Key": "one"], ["X-Api-Key": "two"], ["X-Api-Key"]),
    ]

    @Test(arguments: differingCredentials)
    func requestsWithDifferentCredentialsNeverShareADownloadOrACacheEntry(
        first: [String: String], second: [String: String], named: Set<String>
    ) async throws {
        loader.stub(url, sequence: [payload(3).held(), payload(5).held()])
        let pipeline = pipeline(credentialHeaders: named)
        let firstTask = pipeline.imageTask(for: request(first))
        let secondTask = pipeline.imageTask(for: request(second))
        try await awaitDataStage(pipeline, count: 2)
        #expect(pipeline.statistics.mergedDownloads == 0)
        try await eventually { loader.tasks.count == 2 }
        for task in loader.tasks { task.complete() }
        // Each caller gets the bytes loaded with its own headers.
        let widthByHeaders = Dictionary(uniqueKeysWithValues: loader.tasks.enumerated().map { index, task in
            (task.request.allHTTPHeaderFields ?? [:], index == 0 ? 3 : 5)
        })
        #expect(try await firstTask.response.image.width == widthByHeaders[first])
        #expect(try await secondTask.response.image.width == widthByHeaders[second])

        // Afterwards each identity finds its own image in memory and on disk,
        // and never the other's.
        for headers in [first, second] {
            let again = try await pipeline.image(for: request(headers))
            #expect(again.source == .memory && again.image.width == widthByHeaders[headers])
            let fromDisk = try await self.pipeline(credentialHeaders: named, imageCache: ImageCache()).image(for: request(headers))
            #expect(fromDisk.source == .disk && fromDisk.image.width == widthByHeaders[headers])
        }
        #expect(loader.tasks.count == 2)
    }

    @Test func aRequestWithoutCredentialsIsNotAnsweredFromAnotherUsersCaches() async throws {
        loader.stub(url, sequence: [payload(3), payload(9)])
        let pipeline = pipeline()
        let private1 = try await pipeline.image(for: request(["Authorization": "Bearer A"]))
        #expect(private1.image.width == 3)
        let anonymous = try await pipeline.image(for: request())
        #expect(anonymous.source == .network && anonymous.image.width == 9)
        #expect(loader.requests.last?.value(forHTTPHeaderField: "Authorization") == nil)
    }

    @Test func anExplicitImageIDSharesOneDownloadAcrossCredentials() async throws {
        loader.stub(url, payload(4).held())
        let pipeline = pipeline()
        let a = pipeline.imageTask(for: request(["Authorization": "Bearer A"], imageID: "avatar-42"))
        let b = pipeline.imageTask(for: request(["Authorization": "Bearer B"], imageID: "avatar-42"))
        try await eventually { pipeline.statistics.mergedDecodes == 1 }
        _ = await loader.waitForTask(for: url)
        loader.tasks.forEach { $0.complete() }
        #expect(try await a.response.image.width == 4)
        #expect(try await b.response.image.width == 4)
        #expect(loader.tasks.count == 1)
        // The ID replaces the URL in every key: another URL with the same ID is the same image.
        let elsewhere = URL(string: "https://cdn.example/other-path.png")!
        let cached = try await pipeline.image(for: request(imageID: "avatar-42", url: elsewhere))
        #expect(cached.source == .memory && cached.image.width == 4)
        #expect(pipeline.cacheKey(for: request(imageID: "avatar-42")) == pipeline.cacheKey(for: request(imageID: "avatar-42", url: elsewhere)))
    }

    // MARK: - Cache policies

    @Test func anOrdinaryRequestDoesNotJoinAnOnlyCachedRequestThatFails() async throws {
        loader.stub(url, payload(6))
        let queue = ManualQueue()
        let pipeline = pipeline(workQueue: queue)
        // `.onlyCached` starts first; its disk read waits on the queue when the ordinary request arrives.
        let onlyCached = pipeline.imageTask(for: request(policy: .onlyCached))
        await queue.waitForWork()
        let ordinary = pipeline.imageTask(for: request())
        try await awaitDataStage(pipeline, count: 2)
        let worker = Task { while !Task.isCancelled { _ = queue.runAll(); try? await Task.sleep(nanoseconds: 1_000_000) } }
        defer { worker.cancel() }
        let error = try await #require(throws: ImagePipelineError.self) { try await onlyCached.response }
        #expect(error.code == .notCached)
        let response = try await ordinary.response
        #expect(response.source == .network && response.image.width == 6)
        #expect(loader.tasks.count == 1)
    }

    @Test func anOnlyCachedRequestNeverWaitsForAnotherRequestsDownload() async throws {
        loader.stub(url, payload(6).held())
        let pipeline = pipeline()
        let ordinary = pipeline.imageTask(for: request())
        let download = await loader.waitForTask(for: url)
        // The download is still held: `.onlyCached` must fail now, not join it.
        let error = try await #require(throws: ImagePipelineError.self) { try await pipeline.image(for: request(policy: .onlyCached)) }
        #expect(error.code == .notCached)
        download.complete()
        #expect(try await ordinary.response.image.width == 6)
        #expect(loader.tasks.count == 1)
    }

    @Test func aReloadNeverGetsCachedBytesThroughAJobInFlight() async throws {
        try storeFreshDiskEntry(byteCount: 2)
        loader.stub(url, payload(8).held())
        let pipeline = pipeline()
        let cached = pipeline.imageTask(for: request())
        let reload = pipeline.imageTask(for: request(policy: .reloadIgnoringCaches))
        let download = await loader.waitForTask(for: url)
        #expect(try await cached.response.image.width == 2)
        download.complete()
        let reloaded = try await reload.response
        #expect(reloaded.source == .network && reloaded.image.width == 8)
        // Afterwards the memory cache holds the reloaded image, and a second reload still downloads.
        #expect(pipeline.cachedImage(for: request())?.width == 8)
        loader.stub(url, payload(10))
        #expect(try await pipeline.image(for: request(policy: .reloadIgnoringCaches)).image.width == 10)
        #expect(loader.tasks.count == 2)
    }

    static let policyPairs: [(ImageRequest.CachePolicy, ImageRequest.CachePolicy)] = [
        (.useCaches, .onlyCached), (.onlyCached, .useCaches),
        (.useCaches, .reloadIgnoringCaches), (.reloadIgnoringCaches, .useCaches),
        (.onlyCached, .reloadIgnoringCaches), (.reloadIgnoringCaches, .onlyCached),
    ]

    /// With a fresh disk entry (2 bytes) and the network (8 bytes), two
    /// requests in parallel: each gets what its own policy promises.
    @Test(arguments: policyPairs)
    func parallelRequestsWithDifferentPoliciesEachGetWhatTheirPolicyPromises(
        first: ImageRequest.CachePolicy, second: ImageRequest.CachePolicy
    ) async throws {
        try storeFreshDiskEntry(byteCount: 2)
        loader.stub(url, payload(8).held())
        let pipeline = pipeline()
        let policies = [first, second]
        let tasks = policies.map { pipeline.imageTask(for: request(policy: $0)) }
        // The cached answers come first: the reload's download is held
        // until they are in, so it cannot refresh the disk entry under them.
        for (policy, task) in zip(policies, tasks) where policy != .reloadIgnoringCaches {
            let response = try await task.response
            // The disk entry's bytes; decoded again, or (when the other request's decode
            // finished first, as under the thread sanitizer) from the memory cache.
            #expect([.disk, .memory].contains(response.source) && response.image.width == 2, "\(response.source)")
        }
        for (policy, task) in zip(policies, tasks) where policy == .reloadIgnoringCaches {
            await loader.waitForTask(for: url).complete()
            let response = try await task.response
            #expect(response.source == .network && response.image.width == 8)
        }
        #expect(loader.tasks.count == ([first, second].contains(.reloadIgnoringCaches) ? 1 : 0))
    }

    // MARK: - Keys that cannot collide

    @Test func aURLWhoseFragmentSpellsAThumbnailIsNotThatThumbnail() async throws {
        let lookalike = URL(string: "https://img.example/private.png#thumbnail=64x64,fit")!
        loader.stub(url, payload(3))
        loader.stub(lookalike, payload(11))
        let pipeline = pipeline()
        var thumbnail = request()
        thumbnail.maximumPixelSize = 64
        #expect(try await pipeline.image(for: thumbnail).image.width == 3)
        let other = try await pipeline.image(for: request(url: lookalike))
        #expect(other.source == .network && other.image.width == 11)
        #expect(pipeline.cacheKey(for: thumbnail) != pipeline.cacheKey(for: request(url: lookalike)))
    }

    @Test func processorIdentifiersCannotRunTogether() async throws {
        loader.stub(url, payload(3))
        let joined = [MockImageProcessor(identifier: "crop|round")]
        let separate = [MockImageProcessor(identifier: "crop"), MockImageProcessor(identifier: "round")]
        let pipeline = pipeline()
        #expect(pipeline.cacheKey(for: ImageRequest(url: url, processors: joined))
                != pipeline.cacheKey(for: ImageRequest(url: url, processors: separate)))
        _ = try await pipeline.image(for: ImageRequest(url: url, processors: joined))
        let other = try await pipeline.image(for: ImageRequest(url: url, processors: separate))
        #expect(other.source != .memory)
        #expect(separate.allSatisfy { $0.runCount == 1 })
    }

    @Test func requestsWithoutAURLFailAndShareNothing() async throws {
        var urlRequest = URLRequest(url: url)
        urlRequest.url = nil
        let pipeline = pipeline()
        let error = try await #require(throws: ImagePipelineError.self) {
            try await pipeline.image(for: ImageRequest(urlRequest: urlRequest))
        }
        #expect(error.code == .invalidRequest)
        #expect(pipeline.cacheKey(for: ImageRequest(urlRequest: urlRequest)) == nil)
        #expect(loader.tasks.isEmpty)
    }
}
