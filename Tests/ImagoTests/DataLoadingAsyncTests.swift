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

    @Test func loaderFailurePassesThroughUnchanged() async {
        let original = IdentityError()
        loader.stub(exampleURL, .failure(original))
        let error = await caughtError { try await loader.data(for: URLRequest(url: exampleURL)) }
        #expect((error as? IdentityError) === original)
    }

    @Test func progressWithoutADeclaredLengthHasNoTotal() async throws {
        loader.stub(exampleURL, MockResponse(headers: ["Content-Type": "image/png"], chunks: [Data(count: 3), Data(count: 2)]))
        let reports = Reports()
        _ = try await loader.data(for: URLRequest(url: exampleURL)) { reports.append($0) }
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

    @Test func alreadyCancelledCallerThrowsWithoutResumingATask() async {
        loader.stub(exampleURL, .image(TestImages.pngSignature))
        let loader = self.loader
        let call = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await loader.data(for: URLRequest(url: exampleURL))
        }
        let error = await caughtError { try await call.value }
        #expect(error is CancellationError)
        #expect(loader.tasks.allSatisfy { $0.resumeCount == 0 })
    }

    @Test func eventsAfterCancellationAreIgnored() async throws {
        loader.stub(exampleURL, MockResponse.image(TestImages.pngSignature).held())
        let loader = self.loader
        let call = Task { try await loader.data(for: URLRequest(url: exampleURL)) }
        let task = await loader.waitForTask(for: exampleURL)
        call.cancel()
        #expect(await caughtError { try await call.value } is CancellationError)
        task.complete()   // a late delivery must not resume the continuation twice
        #expect(task.cancelCount == 1)
    }

    @Test func progressFraction() {
        #expect(LoadingProgress(completed: 5, total: 10).fraction == 0.5)
        #expect(LoadingProgress(completed: 15, total: 10).fraction == 1)
        #expect(LoadingProgress(completed: 1, total: 0).fraction == nil)
    }
}

/// Nothing outlives a finished load: the task holds its handler, the handler
/// holds the load, and the load must let go of the task.
@Suite struct DataLoadingAsyncLifetimeTests {
    /// A loader that keeps each task (and so its handler) for as long as
    /// the task is referenced, like real loaders do, and records nothing.
    struct OneShotLoader: DataLoading {
        final class OneShotTask: DataLoadingTask, @unchecked Sendable {
            let handler: @Sendable (DataLoadingEvent) -> Void
            let url: URL
            init(url: URL, handler: @escaping @Sendable (DataLoadingEvent) -> Void) { self.url = url; self.handler = handler }
            func resume() {
                handler(.response(HTTPURLResponse(url: url, statusCode: 200, httpVersion: nil, headerFields: ["Content-Type": "image/png"])!))
                handler(.data(Data(count: 1_000)))
                handler(.finished)
            }
            func cancel() {}
        }
        let made = Locked<[Weak<OneShotTask>]>([])
        func dataTask(with request: URLRequest, eventHandler: @escaping @Sendable (DataLoadingEvent) -> Void) -> any DataLoadingTask {
            let task = OneShotTask(url: request.url!, handler: eventHandler)
            made.withLock { $0.append(Weak(task)) }
            return task
        }
    }

    final class Weak<T: AnyObject>: @unchecked Sendable {
        weak var value: T?
        init(_ value: T) { self.value = value }
    }

    final class Canary: Sendable {}

    @Test func aFinishedLoadReleasesItsTaskAndWhatItsProgressHandlerHolds() async throws {
        let loader = OneShotLoader()
        var canary: Canary? = Canary()
        let watched = Weak(canary!)
        _ = try await loader.data(for: URLRequest(url: exampleURL)) { [canary] _ in _ = canary }
        canary = nil
        await eventually { watched.value == nil && loader.made.withLock { $0.allSatisfy { $0.value == nil } } }
        #expect(watched.value == nil, "the progress handler's captures outlived the load")
        #expect(loader.made.withLock { $0.allSatisfy { $0.value == nil } }, "the task outlived the load")
    }
}
