import Foundation
import Imago
import ImagoTesting
import Testing
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Retries through `RetryingDataLoader`, driven by `MockDataLoader` and a `ManualTimeSource`.
@Suite(.timeLimit(.minutes(1))) struct RetryingDataLoaderTests {
    let url = URL(string: "https://example.com/cat.png")!
    let mock = MockDataLoader()
    let clock = ManualTimeSource()
    let body = TestImages.pngSignature + Data(repeating: 7, count: 300)

    /// A policy whose jitter always takes the whole cap, so waits are predictable.
    static var predictable: RetryPolicy {
        var policy = RetryPolicy()
        policy.jitter = { 1 }
        return policy
    }

    func loader(_ policy: RetryPolicy = predictable) -> RetryingDataLoader {
        RetryingDataLoader(wrapping: mock, policy: policy, time: clock.timeSource)
    }

    static func lost(_ url: URL) -> DataLoadingError {
        DataLoadingError(.connectionLost, url: url, message: "reset")
    }

    @Test func a503ThenSuccessIsRetriedAndOnlyTheSuccessIsPassedOn() async throws {
        mock.stub(url, sequence: [.status(503, body: Data("busy".utf8), contentType: "text/plain"), .image(body)])
        let (data, response) = try await loader().data(for: URLRequest(url: url))
        #expect(data == body)
        #expect((response as? HTTPURLResponse)?.statusCode == 200)
        #expect(mock.requests.count == 2)
        #expect(clock.sleeps == [0.5])
    }

    @Test func transportFailuresBeforeTheBodyAreRetriedWithGrowingCaps() async throws {
        mock.stub(url, sequence: [.failure(Self.lost(url)), .failure(Self.lost(url)), .image(body)])
        let (data, _) = try await loader().data(for: URLRequest(url: url))
        #expect(data == body)
        #expect(clock.sleeps == [0.5, 1])
    }

    @Test func jitterDrawsBetweenZeroAndTheCap() async throws {
        var policy = RetryPolicy()
        policy.jitter = { 0.25 }
        policy.baseDelay = 2
        mock.stub(url, sequence: [.status(500), .status(500), .image(body)])
        _ = try await loader(policy).data(for: URLRequest(url: url))
        #expect(clock.sleeps == [0.5, 1])
        // The cap stops growing at maximumDelay.
        policy.maximumDelay = 3
        #expect(policy.delay(beforeRetry: 5, retryAfter: nil) == 0.75)
    }

    @Test func retryAfterInSecondsIsHonoured() async throws {
        var busy = MockResponse.status(429)
        busy.headers["Retry-After"] = "7"
        mock.stub(url, sequence: [busy, .image(body)])
        _ = try await loader().data(for: URLRequest(url: url))
        #expect(clock.sleeps == [7])
    }

    @Test func retryAfterAsAnHTTPDateIsReadFromNow() throws {
        let now = Date(timeIntervalSince1970: 1_700_000_000)
        let later = now.addingTimeInterval(90)
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        let response = try #require(HTTPURLResponse(url: url, statusCode: 503, httpVersion: nil,
                                                    headerFields: ["Retry-After": formatter.string(from: later)]))
        #expect(RetryPolicy.retryAfter(in: response, now: now) == 90)
    }

    @Test func aRetryAfterLongerThanTheLimitPassesTheResponseOn() async throws {
        var busy = MockResponse.status(503, body: Data("later".utf8), contentType: "text/plain")
        busy.headers["Retry-After"] = "3600"
        mock.stub(url, sequence: [busy, .image(body)])
        let (data, response) = try await loader().data(for: URLRequest(url: url))
        #expect((response as? HTTPURLResponse)?.statusCode == 503)
        #expect(data == Data("later".utf8))
        #expect(mock.requests.count == 1)
        #expect(clock.sleeps.isEmpty)
    }

    @Test func whenRetriesRunOutTheLastResponseIsPassedOnWithItsBody() async throws {
        mock.stub(url, .status(503, body: Data("still busy".utf8), contentType: "text/plain"))
        let (data, response) = try await loader().data(for: URLRequest(url: url))
        #expect((response as? HTTPURLResponse)?.statusCode == 503)
        #expect(data == Data("still busy".utf8))
        #expect(mock.requests.count == 3, "one attempt and two retries")
    }

    @Test func whenRetriesRunOutTheLastFailureIsPassedOnUnchanged() async throws {
        mock.stub(url, .failure(Self.lost(url)))
        let error = try await #require(throws: DataLoadingError.self) { try await loader().data(for: URLRequest(url: url)) }
        #expect(error.code == .connectionLost)
        #expect(mock.requests.count == 3)
    }

    @Test func onlyGETIsRetried() async throws {
        mock.stub(url, sequence: [.status(503), .image(body)])
        var request = URLRequest(url: url)
        request.httpMethod = "POST"
        let (_, response) = try await loader().data(for: request)
        #expect((response as? HTTPURLResponse)?.statusCode == 503)
        #expect(mock.requests.count == 1)
    }

    @Test func clientErrorsAndLimitsAreNotRetried() async throws {
        mock.stub(url, sequence: [.status(404), .image(body)])
        let other = URL(string: "https://example.com/big.png")!
        mock.stub(other, .failure(DataLoadingError(.responseTooLarge, url: other, message: "too big")))
        let notFound = try? await loader().data(for: URLRequest(url: url))
        #expect((notFound?.1 as? HTTPURLResponse)?.statusCode == 404)
        let error = try await #require(throws: DataLoadingError.self) { try await loader().data(for: URLRequest(url: other)) }
        #expect(error.code == .responseTooLarge)
        #expect(mock.requests.count == 2)
    }

    @Test func aFailureAfterTheBodyStartedIsNotRetried() async throws {
        let cut = MockResponse.data(body, contentType: "image/png", chunkSize: 10).failing(with: Self.lost(url))
        mock.stub(url, sequence: [cut, .image(body)])
        let progress = Locked<[Int64]>([])
        let error = try await #require(throws: DataLoadingError.self) {
            try await loader().data(for: URLRequest(url: url)) { value in progress.withLock { $0.append(value.completed) } }
        }
        #expect(error.code == .connectionLost)
        #expect(mock.requests.count == 1)
        #expect(progress.withLock { $0.last } == Int64(body.count), "the bytes before the cut were passed on")
    }

    @Test func noPolicyMeansOneAttempt() async throws {
        mock.stub(url, sequence: [.status(503), .image(body)])
        let (_, response) = try await loader(.none).data(for: URLRequest(url: url))
        #expect((response as? HTTPURLResponse)?.statusCode == 503)
        #expect(mock.requests.count == 1)
    }

    @Test func cancellingDuringAnAttemptStopsItAndStartsNoOther() async {
        mock.stub(url, sequence: [MockResponse.status(503).held(), .image(body)])
        let loader = loader()
        let task = Task { try await loader.data(for: URLRequest(url: url)) }
        _ = await mock.waitForTask(for: url)
        task.cancel()
        await #expect(throws: CancellationError.self) { try await task.value }
        #expect(mock.requests.count == 1)
        #expect(mock.cancelledRequests.count == 1)
    }

    @Test func cancellingDuringTheWaitThrowsCancellationAndStartsNoOtherAttempt() async throws {
        mock.stub(url, sequence: [.status(503), .image(body)])
        let waiting = WaitingClock()
        let loader = RetryingDataLoader(wrapping: mock, policy: Self.predictable, time: waiting.timeSource)
        let task = Task { try await loader.data(for: URLRequest(url: url)) }
        await waiting.waitForSleeper()
        task.cancel()
        await #expect(throws: CancellationError.self) { try await task.value }
        #expect(mock.requests.count == 1, "no attempt after the cancel")
    }

    @Test func aFailureAfterTheResponseButBeforeTheBodyIsRetried() async throws {
        let cutAtOnce = MockResponse.data(Data(), contentType: "image/png").failing(with: Self.lost(url))
        mock.stub(url, sequence: [cutAtOnce, .image(body)])
        let (data, _) = try await loader().data(for: URLRequest(url: url))
        #expect(data == body)
        #expect(mock.requests.count == 2)
        #expect(clock.sleeps == [0.5])
    }

    @Test func aStreamingBodyIsPassedOnChunkByChunk() async throws {
        mock.stub(url, .data(body, contentType: "image/png", chunkSize: 100))
        let progress = Locked<[Int64]>([])
        _ = try await loader().data(for: URLRequest(url: url)) { value in progress.withLock { $0.append(value.completed) } }
        #expect(progress.withLock { $0 } == [100, 200, 300, Int64(body.count)])
    }
}

/// A time source whose waits last until cancelled: for cancelling a retry's wait.
private final class WaitingClock: Sendable {
    private let sleeps = Recorder<TimeInterval>()

    var timeSource: TimeSource {
        TimeSource(now: { Date() }, sleep: { seconds in
            self.sleeps.record(seconds)
            try await Task.sleep(nanoseconds: 600_000_000_000)
        })
    }

    /// Returns once a wait has begun.
    func waitForSleeper() async {
        await sleeps.waitForValues(1)
    }
}
