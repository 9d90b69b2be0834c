import Foundation
import SharedState
import Imago
import ImagoCodecs
import ImagoTesting
import FaultInjection
import LoopbackServer
import Testing
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The whole pipeline, with a real disk cache in a temporary directory,
/// against a server that misbehaves on purpose: each fault ends in the
/// typed error that names it (or in a successful retry), nothing from a
/// failed response is cached, and no temporary file is left behind.
@Suite(.timeLimit(.minutes(1))) final class FaultInjectionTests {
    static let png: Data = {
        // Encoded once: a real image the codecs decode.
        try! ImageEncoders.png().encode(TestImages.gradient(width: 160, height: 120))
    }()

    static let routes: [String: ServedResponse] = {
        var routes: [String: ServedResponse] = [
            "/good.png": ServedResponse.ok(png, contentType: "image/png").withHeader("Cache-Control", "max-age=600"),
            "/reset-before-head": ServedResponse.ok(png, contentType: "image/png").delivered(.resetBeforeHead),
            "/reset-mid-body": ServedResponse.ok(png, contentType: "image/png").delivered(.reset(afterBytes: png.count / 2)),
            "/short-body": ServedResponse.ok(png, contentType: "image/png").delivered(.truncated(afterBytes: png.count / 2)),
            "/declares-10GB": .oversized(),
            "/endless": ServedResponse.ok(png, contentType: "image/png").delivered(.endlessChunks(chunkSize: 64 << 10, interval: .milliseconds(1))),
            "/one-byte-a-second": ServedResponse.ok(png, contentType: "image/png").delivered(.trickle(chunkSize: 1, interval: .seconds(1))),
            "/busy": .serviceUnavailable(retryAfter: 1),
            "/throttled": .tooManyRequests(retryAfter: 1),
            "/html": ServedResponse.ok(png, contentType: "image/png").withContentType("text/html"),
            "/gzip-bomb": .gzipBomb(),
            "/png-bomb": .pngBomb(),
        ]
        routes.merge(ServedResponse.redirectChain(6, prefix: "/chain", to: "/good.png")) { $1 }
        routes.merge(ServedResponse.redirectLoop(3, prefix: "/loop")) { $1 }
        return routes
    }()

    let server: LoopbackServer
    let directory: URL
    let cache: DataCache
    let clock = ManualTimeSource()

    /// Each test's folder goes with it.
    deinit { try? FileManager.default.removeItem(at: directory) }

    init() async throws {
        server = try await LoopbackServer.start(routes: Self.routes)
        // 503 twice, then the image.
        let attempts = Locked(0)
        server.route("/recovers") { _ in
            let attempt = attempts.withLock { $0 += 1; return $0 }
            return attempt <= 2 ? .serviceUnavailable(retryAfter: 3) : .ok(Self.png, contentType: "image/png")
        }
        server.route("/changing", responder: ServedResponse.sameETagNewBytes { version in
            try! ImageEncoders.png().encode(TestImages.solid(width: 4 + version, height: 4))
        })
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("imago-faults-\(UUID().uuidString)")
        cache = DataCache(configuration: .init(directory: directory, sizeLimit: 8 << 20))
    }

    /// A pipeline over `kind` with a real disk cache. The default timeouts
    /// are far beyond what any fault here takes when it works: under the
    /// thread sanitizer, on two cores, with the suite running in parallel,
    /// a 2-second idle timeout fired before a reset was seen (the fault under
    /// test turned into `timedOut`). Tests of timeouts set their own.
    func pipeline(_ kind: LoaderKind, _ limits: LoaderKind.Limits = .init(idleTimeout: 20, totalTimeout: 40)) -> ImagePipeline {
        var policy = RetryPolicy()
        policy.jitter = { 1 }
        return ImagePipeline(configuration: .init(
            dataLoader: DataLoader(network: RetryingDataLoader(wrapping: kind.make(limits), policy: policy, time: clock.timeSource)),
            dataCache: cache,
            imageCache: nil,
            decoder: ImageDecoders.all
        ))
    }

    /// Every file in the cache directory, hidden ones included.
    var cacheFiles: [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []).sorted()
    }

    /// Loads `path` expecting failure; checks the codes, that the URL is
    /// named, and that the cache directory holds nothing.
    func expectFailure(
        _ path: String, kind: LoaderKind, _ code: ImagePipelineError.Code, loading: DataLoadingError.Code? = nil,
        pipeline: ImagePipeline? = nil, sourceLocation: SourceLocation = #_sourceLocation
    ) async -> ImagePipelineError? {
        let pipeline = pipeline ?? self.pipeline(kind)
        let url = server.url(path)
        let error: (any Error)?
        do {
            _ = try await pipeline.image(for: ImageRequest(url: url))
            error = nil
        } catch let caught {
            error = caught
        }
        guard let failure = error as? ImagePipelineError else {
            Issue.record("\(path): expected an ImagePipelineError, got \(String(describing: error))", sourceLocation: sourceLocation)
            return nil
        }
        #expect(failure.code == code, "\(failure)", sourceLocation: sourceLocation)
        #expect(failure.url == url, sourceLocation: sourceLocation)
        #expect(failure.description.contains(url.absoluteString), sourceLocation: sourceLocation)
        if let loading {
            #expect((failure.underlying as? DataLoadingError)?.code == loading, "\(failure)", sourceLocation: sourceLocation)
        }
        #expect(cacheFiles.isEmpty, "left in the cache: \(cacheFiles)", sourceLocation: sourceLocation)
        return failure
    }

    /// The disk-cache entry of a plain request for `url`, read directly.
    private func storedEntry(_ url: URL, kind: LoaderKind) throws -> DataCacheEntry? {
        cache.entry(for: try #require(pipeline(kind).dataCacheKey(for: ImageRequest(url: url))))
    }

    @Test(arguments: LoaderKind.allCases) func aGoodImageIsCachedAsOneCompleteEntry(kind: LoaderKind) async throws {
        let response = try await pipeline(kind).image(for: ImageRequest(url: server.url("/good.png")))
        #expect(response.image.width == 160)
        #expect(cacheFiles.count == 1)
        #expect(!cacheFiles.contains { $0.hasPrefix(".tmp-") })
        #expect(try storedEntry(server.url("/good.png"), kind: kind)?.data == Self.png)
    }

    @Test(arguments: LoaderKind.allCases) func aResetBeforeTheHeadIsRetriedThenReported(kind: LoaderKind) async {
        let failure = await expectFailure("/reset-before-head", kind: kind, .dataLoadingFailed)
        let code = (failure?.underlying as? DataLoadingError)?.code
        #expect(code == .connectionLost || code == .transport, "\(String(describing: failure))")
        #expect(server.requestCount(for: "/reset-before-head") == 3, "one attempt and two retries")
    }

    @Test(arguments: LoaderKind.allCases) func aResetMidBodyIsAConnectionLost(kind: LoaderKind) async {
        _ = await expectFailure("/reset-mid-body", kind: kind, .dataLoadingFailed, loading: .connectionLost)
        // A reset can overtake the bytes before it (the kernel drops unread
        // data), so the client may see no body and retry: 1 to 3 attempts.
        #expect((1...3).contains(server.requestCount(for: "/reset-mid-body")))
    }

    @Test(arguments: LoaderKind.allCases) func aBodyShorterThanItsLengthIsAConnectionLost(kind: LoaderKind) async {
        _ = await expectFailure("/short-body", kind: kind, .dataLoadingFailed, loading: .connectionLost)
    }

    @Test(arguments: LoaderKind.allCases) func aLengthFarOverTheLimitFailsBeforeTheBody(kind: LoaderKind) async {
        _ = await expectFailure("/declares-10GB", kind: kind, .dataLoadingFailed, loading: .responseTooLarge)
    }

    @Test(arguments: LoaderKind.allCases) func aChunkedBodyThatNeverEndsIsCutAtTheSizeLimit(kind: LoaderKind) async {
        // Timeouts far off, so the 1 MB limit is what ends it even under a sanitizer.
        let pipeline = pipeline(kind, .init(idleTimeout: 30, totalTimeout: 45))
        _ = await expectFailure("/endless", kind: kind, .dataLoadingFailed, loading: .responseTooLarge, pipeline: pipeline)
        #expect(await server.waitForOpenConnections(atMost: 0), "the server saw the client go")
    }

    @Test(arguments: LoaderKind.allCases) func aByteASecondTimesOut(kind: LoaderKind) async {
        // The first byte comes after 1 s, the timeout after 2.5 s.
        let pipeline = pipeline(kind, .init(idleTimeout: 5, totalTimeout: 2.5))
        _ = await expectFailure("/one-byte-a-second", kind: kind, .dataLoadingFailed, loading: .timedOut, pipeline: pipeline)
        // Whether a byte came before the deadline (so no retry follows) is up
        // to the scheduler on a busy machine; RetryingDataLoaderTests pin that rule.
        #expect((1...3).contains(server.requestCount(for: "/one-byte-a-second")))
    }

    @Test(arguments: LoaderKind.allCases) func sixRedirectsAreTooMany(kind: LoaderKind) async {
        _ = await expectFailure("/chain/1", kind: kind, .dataLoadingFailed, loading: .tooManyRedirects)
    }

    @Test(arguments: LoaderKind.allCases) func aRedirectLoopIsCaught(kind: LoaderKind) async {
        _ = await expectFailure("/loop/1", kind: kind, .dataLoadingFailed, loading: .redirectLoop)
        #expect(server.requestCount(for: "/loop/1") == 1)
    }

    @Test(arguments: LoaderKind.allCases) func a503ThatStaysIsRetriedAsAskedThenRejectedWithItsStatus(kind: LoaderKind) async {
        let failure = await expectFailure("/busy", kind: kind, .responseRejected)
        #expect((failure?.underlying as? ResponseError)?.statusCode == 503)
        #expect(server.requestCount(for: "/busy") == 3)
        #expect(clock.sleeps == [1, 1])
    }

    @Test(arguments: LoaderKind.allCases) func a429ThatStaysIsRetriedAsAskedThenRejectedWithItsStatus(kind: LoaderKind) async {
        let failure = await expectFailure("/throttled", kind: kind, .responseRejected)
        #expect((failure?.underlying as? ResponseError)?.statusCode == 429)
        #expect(server.requestCount(for: "/throttled") == 3)
    }

    @Test(arguments: LoaderKind.allCases) func a503ThatRecoversIsLoadedAndCached(kind: LoaderKind) async throws {
        let response = try await pipeline(kind).image(for: ImageRequest(url: server.url("/recovers")))
        #expect(response.image.width == 160)
        #expect(clock.sleeps == [3, 3])
        #expect(cacheFiles.count == 1)
        #expect(try storedEntry(server.url("/recovers"), kind: kind)?.data == Self.png)
    }

    @Test(arguments: LoaderKind.allCases) func imageBytesServedAsHTMLAreRejected(kind: LoaderKind) async {
        let failure = await expectFailure("/html", kind: kind, .responseRejected)
        #expect((failure?.underlying as? ResponseError)?.code == .unacceptableContentType)
    }

    @Test(arguments: LoaderKind.allCases) func aGzipBombStopsAtTheSizeLimit(kind: LoaderKind) async {
        _ = await expectFailure("/gzip-bomb", kind: kind, .dataLoadingFailed, loading: .responseTooLarge)
    }

    @Test(arguments: LoaderKind.allCases) func aDecompressionBombImageFailsBeforeDecoding(kind: LoaderKind) async {
        let failure = await expectFailure("/png-bomb", kind: kind, .decodingFailed)
        #expect((failure?.underlying as? ImageDecodingError)?.code == .tooManyPixels, "\(String(describing: failure))")
    }

    @Test(arguments: LoaderKind.allCases) func newBytesUnderTheSameETagNeverMixWithTheStoredOnes(kind: LoaderKind) async throws {
        let url = server.url("/changing")
        let first = try await pipeline(kind).image(for: ImageRequest(url: url))
        #expect(first.image.width == 4)
        // no-cache: the entry is revalidated; the server says 304, so the stored bytes are used.
        let second = try await pipeline(kind).image(for: ImageRequest(url: url))
        #expect(second.source == .disk)
        #expect(second.image.width == 4)
        // Reloading takes the server's new bytes and replaces the entry whole.
        let third = try await pipeline(kind).image(for: ImageRequest(url: url, cachePolicy: .reloadIgnoringCaches))
        #expect(third.image.width == 5)
        let stored = try #require(try storedEntry(url, kind: kind))
        #expect(try ImageDecoders.all.decode(stored.data, options: .init()).width == 5)
        #expect(cacheFiles.count == 1)
    }
}
