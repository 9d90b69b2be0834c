import Foundation
import SharedState
import Imago
import ImagoAsyncHTTPClient
import ImagoTesting
import FaultInjection
import LoopbackServer
import Testing
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The two network loaders, configured alike.
enum LoaderKind: String, CaseIterable, CustomTestStringConvertible, Sendable {
    case urlSession, asyncHTTPClient

    var testDescription: String { rawValue }

    /// Limits small enough for tests. The default timeouts are far beyond
    /// what any route takes when it works, even under the thread sanitizer
    /// on a loaded machine (a 30 s total once fired there while a 3 MB body
    /// streamed); the tests of timeouts set their own.
    struct Limits {
        var maximumResponseSize = 1 << 20
        var idleTimeout: TimeInterval = 30
        var totalTimeout: TimeInterval = 90
        var maximumRedirects = 5
        var followsRedirects = true
    }

    /// A loader making one attempt per request.
    func make(_ limits: Limits = Limits()) -> any DataLoading {
        switch self {
        case .urlSession:
            var configuration = URLSessionDataLoader.Configuration()
            configuration.maximumResponseSize = limits.maximumResponseSize
            configuration.idleTimeout = limits.idleTimeout
            configuration.totalTimeout = limits.totalTimeout
            configuration.maximumRedirects = limits.maximumRedirects
            configuration.followsRedirects = limits.followsRedirects
            return URLSessionDataLoader(configuration: configuration)
        case .asyncHTTPClient:
            var configuration = AsyncHTTPClientDataLoader.Configuration()
            configuration.maximumResponseSize = limits.maximumResponseSize
            configuration.idleTimeout = limits.idleTimeout
            configuration.totalTimeout = limits.totalTimeout
            configuration.maximumRedirects = limits.maximumRedirects
            configuration.followsRedirects = limits.followsRedirects
            return AsyncHTTPClientDataLoader(configuration: configuration)
        }
    }
}

/// Limits, timeouts, redirects and retries of both network loaders against
/// a real server on loopback: every failure a `DataLoadingError` that names
/// the URL and the cause.
@Suite(.timeLimit(.minutes(1))) struct LoaderLimitsTests {
    static let body = Data((0..<5_000).map { UInt8($0 % 251) })

    static let routes: [String: ServedResponse] = {
        var routes: [String: ServedResponse] = [
            "/image": .ok(body, contentType: "image/png"),
            "/cut": ServedResponse.ok(body, contentType: "image/png").delivered(.truncated(afterBytes: 1_000)),
            "/stalled": ServedResponse.ok(body, contentType: "image/png").delivered(.trickle(chunkSize: 1, interval: .seconds(5))),
            "/dribble": ServedResponse.ok(body, contentType: "image/png").delivered(.trickle(chunkSize: 100, interval: .milliseconds(100))),
            "/declared-huge": ServedResponse(headers: [("Content-Type", "image/png"), ("Content-Length", "10000000000")], body: body),
            "/streamed-huge": ServedResponse.ok(Data(count: 3 << 20), contentType: "image/png").delivered(.chunked(chunkSize: 64 << 10)),
            "/loop-a": .redirect(to: "/loop-b", status: 302),
            "/loop-b": .redirect(to: "/loop-a", status: 302),
        ]
        // /hop-N redirects N times before reaching the image.
        for hops in 1...6 {
            for step in 1...hops {
                routes["/hop-\(hops)/\(step)"] = .redirect(to: step == hops ? "/image" : "/hop-\(hops)/\(step + 1)", status: 302)
            }
        }
        return routes
    }()

    let server: LoopbackServer
    let attempts = Locked<[String: Int]>([:])

    init() async throws {
        let attempts = self.attempts
        server = try await LoopbackServer.start(routes: Self.routes) { request in
            let count = attempts.withLock { attempts -> Int in
                attempts[request.path, default: 0] += 1
                return attempts[request.path]!
            }
            switch request.path {
            case "/flaky":   // 503 with Retry-After twice, then the image
                if count <= 2 { return ServedResponse(status: 503, headers: [("Content-Type", "text/plain"), ("Retry-After", "2")], body: Data("busy".utf8)) }
                return .ok(Self.body, contentType: "image/png")
            case "/throttled":   // 429 asking for an hour
                return ServedResponse(status: 429, headers: [("Content-Type", "text/plain"), ("Retry-After", "3600")], body: Data("slow down".utf8))
            case "/flaky-reset":   // cut once, then the image
                if count == 1 { return ServedResponse.ok(Self.body, contentType: "image/png").delivered(.truncated(afterBytes: 0)) }
                return .ok(Self.body, contentType: "image/png")
            default:
                return nil
            }
        }
    }

    func load(_ path: String, with loader: any DataLoading) async -> Result<(Data, URLResponse), DataLoadingError> {
        do {
            return .success(try await loader.data(for: URLRequest(url: server.url(path))))
        } catch let error as DataLoadingError {
            return .failure(error)
        } catch {
            Issue.record("not a DataLoadingError: \(error)")
            return .failure(DataLoadingError(.transport, url: nil, message: "\(error)"))
        }
    }

    /// Expects `path` to fail with `code`, with the URL and a message.
    func expectFailure(_ path: String, _ code: DataLoadingError.Code, loader: any DataLoading,
                       sourceLocation: SourceLocation = #_sourceLocation) async {
        switch await load(path, with: loader) {
        case .success:
            Issue.record("\(path) loaded; expected \(code)", sourceLocation: sourceLocation)
        case .failure(let error):
            #expect(error.code == code, "\(error) underlying: \(String(reflecting: error.underlying))", sourceLocation: sourceLocation)
            #expect(error.url == server.url(path), sourceLocation: sourceLocation)
            #expect(!error.message.isEmpty, sourceLocation: sourceLocation)
            #expect(error.description.contains(server.url(path).absoluteString), sourceLocation: sourceLocation)
        }
    }

    @Test(arguments: LoaderKind.allCases) func aWholeBodyArrives(kind: LoaderKind) async throws {
        let (data, response) = try await load("/image", with: kind.make()).get()
        #expect(data == Self.body)
        #expect((response as? HTTPURLResponse)?.statusCode == 200)
        #expect((response as? HTTPURLResponse)?.value(forHTTPHeaderField: "Content-Type") == "image/png")
    }

    @Test(arguments: LoaderKind.allCases) func aBodyShorterThanItsLengthIsAConnectionLost(kind: LoaderKind) async {
        await expectFailure("/cut", .connectionLost, loader: kind.make())
    }

    @Test(arguments: LoaderKind.allCases) func aStalledBodyTimesOut(kind: LoaderKind) async {
        await expectFailure("/stalled", .timedOut, loader: kind.make(.init(idleTimeout: 0.5)))
    }

    @Test(arguments: LoaderKind.allCases) func aBodyThatNeverStallsStillMeetsTheTotalTimeout(kind: LoaderKind) async {
        // 50 chunks 100 ms apart: never idle for 1 s, but 5 s in all.
        await expectFailure("/dribble", .timedOut, loader: kind.make(.init(idleTimeout: 1, totalTimeout: 1)))
    }

    @Test(arguments: LoaderKind.allCases) func aDeclaredLengthOverTheLimitFailsBeforeTheBody(kind: LoaderKind) async {
        await expectFailure("/declared-huge", .responseTooLarge, loader: kind.make())
    }

    @Test(arguments: LoaderKind.allCases) func aStreamedBodyOverTheLimitIsCutOff(kind: LoaderKind) async {
        await expectFailure("/streamed-huge", .responseTooLarge, loader: kind.make())
    }

    @Test(arguments: LoaderKind.allCases) func theBodyStreamsInChunksWithProgress(kind: LoaderKind) async throws {
        let loader = kind.make(.init(maximumResponseSize: 4 << 20))
        let reports = Locked<[LoadingProgress]>([])
        let (data, _) = try await loader.data(for: URLRequest(url: server.url("/streamed-huge"))) { progress in
            reports.withLock { $0.append(progress) }
        }
        #expect(data.count == 3 << 20)
        let completed = reports.withLock { $0.map(\.completed) }
        #expect(completed.count > 1, "the body arrived in one piece")
        #expect(completed == completed.sorted())
        #expect(completed.last == Int64(3 << 20))
    }

    @Test(arguments: LoaderKind.allCases) func fiveRedirectsAreFollowed(kind: LoaderKind) async throws {
        let (data, response) = try await load("/hop-5/1", with: kind.make()).get()
        #expect(data == Self.body)
        #expect(response.url == server.url("/image"))
    }

    @Test(arguments: LoaderKind.allCases) func aSixthRedirectIsTooMany(kind: LoaderKind) async {
        await expectFailure("/hop-6/1", .tooManyRedirects, loader: kind.make())
    }

    @Test(arguments: LoaderKind.allCases) func aRedirectLoopIsCaughtAtOnce(kind: LoaderKind) async {
        await expectFailure("/loop-a", .redirectLoop, loader: kind.make())
        #expect(server.requests(for: "/loop-a").count == 1)
    }

    @Test(arguments: LoaderKind.allCases) func anUnfollowedRedirectIsPassedOnAsA3xx(kind: LoaderKind) async throws {
        let (_, response) = try await load("/hop-1/1", with: kind.make(.init(followsRedirects: false))).get()
        #expect((response as? HTTPURLResponse)?.statusCode == 302)
    }

    @Test(arguments: LoaderKind.allCases) func aRefusedConnectionCannotConnect(kind: LoaderKind) async throws {
        let closed = try RefusingPort()
        let url = closed.url("/image")
        let loader = kind.make()
        let error = try await #require(throws: DataLoadingError.self) { try await loader.data(for: URLRequest(url: url)) }
        #expect(error.code == .cannotConnect, "\(error)")
        #expect(error.url == url)
        withExtendedLifetime(closed) {}   // the port stays reserved until here
    }

    @Test(arguments: LoaderKind.allCases) func a503WithRetryAfterIsRetriedAfterTheWaitItAsks(kind: LoaderKind) async throws {
        let clock = ManualTimeSource()
        let loader = RetryingDataLoader(wrapping: kind.make(), time: clock.timeSource)
        let (data, response) = try await load("/flaky", with: loader).get()
        #expect(data == Self.body)
        #expect((response as? HTTPURLResponse)?.statusCode == 200)
        #expect(attempts.withLock { $0["/flaky"] } == 3)
        #expect(clock.sleeps == [2, 2])
    }

    @Test(arguments: LoaderKind.allCases) func a429AskingForAnHourIsPassedOn(kind: LoaderKind) async throws {
        let clock = ManualTimeSource()
        let loader = RetryingDataLoader(wrapping: kind.make(), time: clock.timeSource)
        let (data, response) = try await load("/throttled", with: loader).get()
        #expect((response as? HTTPURLResponse)?.statusCode == 429)
        #expect(data == Data("slow down".utf8))
        #expect(attempts.withLock { $0["/throttled"] } == 1)
        #expect(clock.sleeps.isEmpty)
    }

    @Test(arguments: LoaderKind.allCases) func aConnectionCutBeforeTheBodyIsRetried(kind: LoaderKind) async throws {
        let clock = ManualTimeSource()
        var policy = RetryPolicy()
        policy.jitter = { 1 }
        let loader = RetryingDataLoader(wrapping: kind.make(), policy: policy, time: clock.timeSource)
        let (data, _) = try await load("/flaky-reset", with: loader).get()
        #expect(data == Self.body)
        #expect(attempts.withLock { $0["/flaky-reset"] } == 2)
        #expect(clock.sleeps == [0.5])
    }
}
