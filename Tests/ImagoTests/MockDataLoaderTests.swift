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

    /// Records the events a task delivers.
    final class EventLog: Sendable {
        private let events = Locked<[String]>([])
        func record(_ event: DataLoadingEvent) {
            let text: String
            switch event {
            case .response(let response): text = "response \((response as? HTTPURLResponse)?.statusCode ?? -1)"
            case .data(let data): text = "data \(data.count)"
            case .finished: text = "finished"
            case .failed(let error): text = "failed \((error as? DataLoadingError)?.code.description ?? "\(type(of: error))")"
            }
            events.withLock { $0.append(text) }
        }
        var all: [String] { events.withLock { $0 } }
    }

    @Test func nothingIsDeliveredBeforeResume() {
        loader.stub(exampleURL, .image(TestImages.pngSignature))
        let log = EventLog()
        let task = loader.dataTask(with: URLRequest(url: exampleURL), eventHandler: log.record)
        #expect(log.all.isEmpty)
        task.resume()
        #expect(log.all == ["response 200", "data 8", "finished"])
    }

    @Test func resumeAndCancelAreRecorded() throws {
        loader.stub(exampleURL, MockResponse.image(TestImages.pngSignature).held())
        let log = EventLog()
        let task = loader.dataTask(with: URLRequest(url: exampleURL), eventHandler: log.record)
        task.resume()
        task.resume()
        task.cancel()
        let mock = try #require(loader.tasks.first)
        #expect(mock.resumeCount == 2)
        #expect(mock.cancelCount == 1)
        #expect(mock.isFinished)
        #expect(log.all == ["failed cancelled"])
        #expect(loader.cancelledRequests.map(\.url) == [exampleURL])
    }

    @Test func cancelAfterFinishingDeliversNothingMoreButIsCounted() throws {
        loader.stub(exampleURL, .image(TestImages.pngSignature))
        let log = EventLog()
        let task = loader.dataTask(with: URLRequest(url: exampleURL), eventHandler: log.record)
        task.resume()
        task.cancel()
        #expect(log.all == ["response 200", "data 8", "finished"])
        #expect(try #require(loader.tasks.first).cancelCount == 1)
    }

    @Test func heldResponseIsDeliveredStepByStep() throws {
        loader.stub(exampleURL, MockResponse.data(Data(count: 6), contentType: "image/png", chunkSize: 3).held())
        let log = EventLog()
        loader.dataTask(with: URLRequest(url: exampleURL), eventHandler: log.record).resume()
        let task = try #require(loader.tasks.first)
        #expect(log.all.isEmpty)
        #expect(task.remainingEventCount == 4)
        task.advance()
        #expect(log.all == ["response 200"])
        task.advance()
        #expect(log.all == ["response 200", "data 3"])
        task.complete()
        #expect(log.all == ["response 200", "data 3", "data 3", "finished"])
        #expect(!task.advance())
    }

    @Test func statusHeadersAndErrorsAreDeliveredAsScripted() throws {
        loader.stub(exampleURL, MockResponse(statusCode: 503, headers: ["Retry-After": "2"], chunks: [Data(count: 2)], error: IdentityError()))
        let response = Locked<HTTPURLResponse?>(nil)
        let log = EventLog()
        loader.dataTask(with: URLRequest(url: exampleURL)) { event in
            if case .response(let value) = event { response.withLock { $0 = value as? HTTPURLResponse } }
            log.record(event)
        }.resume()
        #expect(response.withLock { $0?.value(forHTTPHeaderField: "Retry-After") } == "2")
        #expect(log.all == ["response 503", "data 2", "failed IdentityError"])
    }

    @Test func unstubbedURLFailsWithATypedError() async {
        let error = await caughtError { try await loader.data(for: URLRequest(url: exampleURL)) }
        #expect((error as? MockDataLoader.Unstubbed)?.url == exampleURL)
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
        let error = await caughtError { try await other.data(for: URLRequest(url: exampleURL)) }
        #expect(error is MockDataLoader.Unstubbed)
        #expect(loader.requests.isEmpty)
    }
}
