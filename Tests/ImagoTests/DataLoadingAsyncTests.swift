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
