import Foundation
import Imago
import ImagoTesting
import Testing
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The `async` form of ``DataLoading``, driven by the mock loader.
@Suite struct DataLoadingAsyncTests {
    let loader = MockDataLoader()

    @Test func collectsTheChunksAndTheResponse() async throws {
        let body = Data((0..<100).map { UInt8($0) })
        loader.stub(exampleURL, .data(body, contentType: "image/png", chunkSize: 7))
        let (data, response) = try await loader.data(for: URLRequest(url: exampleURL))
        #expect(data == body)
        #expect((response as? HTTPURLResponse)?.statusCode == 200)
    }

    @Test func loaderFailurePassesThroughUnchanged() async throws {
        let original = IdentityError()
        loader.stub(exampleURL, .failure(original))
        let error = try await #require(throws: IdentityError.self) { try await loader.data(for: URLRequest(url: exampleURL)) }
        #expect(error === original)
    }

    @Test func progressWithoutADeclaredLengthHasNoTotal() async throws {
        loader.stub(exampleURL, MockResponse(headers: ["Content-Type": "image/png"], chunks: [Data(count: 3), Data(count: 2)]))
        let reports = Recorder<LoadingProgress>()
        _ = try await loader.data(for: URLRequest(url: exampleURL)) { reports.record($0) }
        #expect(reports.values == [LoadingProgress(completed: 3, total: nil), LoadingProgress(completed: 5, total: nil)])
        #expect(reports.values.last?.fraction == nil)
    }

    @Test func missingResponseMetadataYieldsAPlainResponseForTheURL() async throws {
        loader.stub(exampleURL, MockResponse(chunks: [Data(count: 4)], deliversResponse: false))
        let (data, response) = try await loader.data(for: URLRequest(url: exampleURL))
        #expect(data.count == 4)
        #expect(response.url == exampleURL)
        #expect(!(response is HTTPURLResponse))
    }

    @Test func alreadyCancelledCallerThrowsWithoutStartingALoad() async {
        loader.stub(exampleURL, .image(TestImages.pngSignature))
        let loader = self.loader
        let call = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await loader.data(for: URLRequest(url: exampleURL))
        }
        await #expect(throws: CancellationError.self) { try await call.value }
        #expect(loader.requests.isEmpty)
    }

    @Test func cancellingWhileWaitingForTheResponseStopsTheLoad() async throws {
        loader.stub(exampleURL, MockResponse.image(TestImages.pngSignature).held())
        let loader = self.loader
        let call = Task { try await loader.data(for: URLRequest(url: exampleURL)) }
        let task = await loader.waitForTask(for: exampleURL)
        call.cancel()
        await #expect(throws: CancellationError.self) { try await call.value }
        #expect(task.isCancelled)
        #expect(!task.advance(), "nothing is delivered after the cancel")
    }

    @Test func cancellingWhileTheBodyStreamsStopsTheLoad() async throws {
        loader.stub(exampleURL, MockResponse.data(Data(count: 6), contentType: "image/png", chunkSize: 2).held())
        let loader = self.loader
        let reports = Recorder<LoadingProgress>()
        let call = Task { try await loader.data(for: URLRequest(url: exampleURL)) { reports.record($0) } }
        let task = await loader.waitForTask(for: exampleURL)
        task.advance()   // the response
        task.advance()   // the first chunk
        await reports.waitForValues(1)
        call.cancel()
        await #expect(throws: CancellationError.self) { try await call.value }
        // The call reads the body itself: the cancel ends its wait for the
        // next chunk (or the wait it starts next) before the call throws.
        #expect(task.isCancelled)
        #expect(reports.values == [LoadingProgress(completed: 2, total: 6)])
    }

    @Test func aFailureInTheBodyPassesThroughUnchanged() async throws {
        let original = IdentityError()
        loader.stub(exampleURL, MockResponse.data(Data(count: 4), chunkSize: 2).failing(with: original))
        let error = try await #require(throws: IdentityError.self) { try await loader.data(for: URLRequest(url: exampleURL)) }
        #expect(error === original)
    }

    @Test func progressFraction() {
        #expect(LoadingProgress(completed: 5, total: 10).fraction == 0.5)
        #expect(LoadingProgress(completed: 15, total: 10).fraction == 1)
        #expect(LoadingProgress(completed: 1, total: 0).fraction == nil)
    }
}

/// Nothing outlives a finished load: the progress handler, and whatever it
/// holds, goes with the call.
@Suite struct DataLoadingAsyncLifetimeTests {
    /// A loader whose body is known up front.
    struct OneShotLoader: DataLoading {
        func load(_ request: URLRequest) async throws -> DataLoadingResponse {
            let response = HTTPURLResponse(url: request.url!, statusCode: 200, httpVersion: nil, headerFields: ["Content-Type": "image/png"])
            return DataLoadingResponse(response: response, data: Data(count: 1_000))
        }
    }

    /// `@unchecked Sendable`: the runtime reads and clears a weak reference atomically.
    final class Weak<T: AnyObject>: @unchecked Sendable {
        weak var value: T?
        init(_ value: T) { self.value = value }
    }

    final class Canary: Sendable {}

    @Test func aFinishedLoadReleasesWhatItsProgressHandlerHolds() async throws {
        let loader = OneShotLoader()
        var canary: Canary? = Canary()
        let watched = Weak(canary!)
        let (data, _) = try await loader.data(for: URLRequest(url: exampleURL)) { [canary] _ in _ = canary }
        #expect(data.count == 1_000)
        canary = nil
        // Nothing keeps the handler once the call has returned: it is gone already.
        #expect(watched.value == nil, "the progress handler's captures outlived the load")
    }
}
