import Foundation
import Imago
import ImagoTesting
import Testing
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The shipped loader double: scripted responses, recorded tasks, held delivery.
@Suite struct MockDataLoaderTests {
    let loader = MockDataLoader()

    /// Reads a body to its end: the chunk sizes, then "end" or the error's type.
    static func read(_ body: AsyncThrowingStream<Data, any Error>) async -> [String] {
        var log: [String] = []
        do {
            for try await chunk in body { log.append("data \(chunk.count)") }
            log.append("end")
        } catch {
            log.append("failed \(type(of: error))")
        }
        return log
    }

    @Test func aLoadReturnsTheScriptedResponseAndBody() async throws {
        loader.stub(exampleURL, .data(Data(count: 5), contentType: "image/png", chunkSize: 2))
        let loaded = try await loader.load(URLRequest(url: exampleURL))
        let response = try #require(loaded.response as? HTTPURLResponse)
        #expect(response.statusCode == 200)
        #expect(response.value(forHTTPHeaderField: "Content-Type") == "image/png")
        #expect(response.expectedContentLength == 5)
        #expect(await Self.read(loaded.body) == ["data 2", "data 2", "data 1", "end"])
        let task = try #require(loader.tasks.first)
        #expect(task.remainingStepCount == 0)
        #expect(!task.isCancelled)
    }

    @Test func aHeldResponseIsDeliveredStepByStep() async throws {
        loader.stub(exampleURL, MockResponse.data(Data(count: 6), contentType: "image/png", chunkSize: 3).held())
        let loader = self.loader
        let started = Task { try await loader.load(URLRequest(url: exampleURL)) }
        let task = await loader.waitForTask(for: exampleURL)
        #expect(task.isHeld)
        #expect(task.remainingStepCount == 4)
        task.advance()
        let loaded = try await started.value
        #expect((loaded.response as? HTTPURLResponse)?.statusCode == 200)
        var chunks = loaded.body.makeAsyncIterator()
        task.advance()
        #expect(try await chunks.next()?.count == 3)
        task.complete()
        #expect(try await chunks.next()?.count == 3)
        #expect(try await chunks.next() == nil)
        #expect(!task.advance())
        #expect(!task.isCancelled)
    }

    @Test func cancellingAHeldLoadIsRecorded() async throws {
        loader.stub(exampleURL, MockResponse.image(TestImages.pngSignature).held())
        let loader = self.loader
        let started = Task { try await loader.load(URLRequest(url: exampleURL)) }
        let task = await loader.waitForTask(for: exampleURL)
        started.cancel()
        await #expect(throws: CancellationError.self) { try await started.value }
        #expect(task.isCancelled)
        #expect(!task.advance())
        #expect(loader.cancelledRequests.map(\.url) == [exampleURL])
    }

    @Test func aBodyLeftUnreadIsRecordedAsCancelled() async throws {
        loader.stub(exampleURL, MockResponse.image(TestImages.pngSignature).held())
        let loader = self.loader
        // The body is dropped unread when the task returns.
        let started = Task { try await loader.load(URLRequest(url: exampleURL)).response }
        let task = await loader.waitForTask(for: exampleURL)
        task.advance()
        _ = try await started.value
        #expect(task.isCancelled)
        #expect(loader.cancelledRequests.count == 1)
    }

    @Test func statusHeadersAndErrorsAreDeliveredAsScripted() async throws {
        loader.stub(exampleURL, MockResponse(statusCode: 503, headers: ["Retry-After": "2"], chunks: [Data(count: 2)], error: IdentityError()))
        let loaded = try await loader.load(URLRequest(url: exampleURL))
        let response = try #require(loaded.response as? HTTPURLResponse)
        #expect(response.statusCode == 503)
        #expect(response.value(forHTTPHeaderField: "Retry-After") == "2")
        #expect(await Self.read(loaded.body) == ["data 2", "failed IdentityError"])
    }

    @Test func aFailureWithoutAResponseIsThrownByTheLoad() async throws {
        let original = IdentityError()
        loader.stub(exampleURL, .failure(original))
        let error = try await #require(throws: IdentityError.self) { try await loader.load(URLRequest(url: exampleURL)) }
        #expect(error === original)
    }

    @Test func aBodyWithoutResponseMetadataHasNoResponse() async throws {
        loader.stub(exampleURL, MockResponse(chunks: [Data(count: 4)], deliversResponse: false))
        let loaded = try await loader.load(URLRequest(url: exampleURL))
        #expect(loaded.response == nil)
        #expect(await Self.read(loaded.body) == ["data 4", "end"])
    }

    @Test func unstubbedURLFailsWithATypedError() async throws {
        let error = try await #require(throws: MockDataLoader.Unstubbed.self) { try await loader.data(for: URLRequest(url: exampleURL)) }
        #expect(error.url == exampleURL)
    }

    @Test func requestsAreRecordedWithTheirHeaders() async throws {
        loader.stub(exampleURL, .image(TestImages.pngSignature))
        var request = URLRequest(url: exampleURL)
        request.setValue("abc", forHTTPHeaderField: "If-None-Match")
        _ = try await loader.data(for: request)
        #expect(loader.requests.first?.value(forHTTPHeaderField: "If-None-Match") == "abc")
        #expect(loader.tasks(for: exampleURL).count == 1)
    }

    @Test func separateInstancesDoNotShareStubs() async {
        let other = MockDataLoader()
        loader.stub(exampleURL, .image(TestImages.pngSignature))
        await #expect(throws: MockDataLoader.Unstubbed.self) { try await other.data(for: URLRequest(url: exampleURL)) }
        #expect(loader.requests.isEmpty)
    }
}
