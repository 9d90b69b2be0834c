import Foundation
import Imago
import ImagoTesting
import Testing
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The `async throws` operations (image, JSON, raw data) and how they wrap each layer's failure.
@Suite struct NetworkClientTests {
    struct Album: Codable, Equatable, Sendable {
        let artist: String
        let name: String
    }

    let loader = MockDataLoader()
    let decoder = MockImageDecoder(returning: TestImages.gradient(width: 4, height: 3))
    let client: NetworkClient
    let feedURL = URL(string: "https://api.example.com/albums.json")!

    init() {
        client = NetworkClient(loader: loader, imageDecoder: decoder)
    }

    // MARK: images

    @Test func imageIsLoadedAndDecodedFromTheBody() async throws {
        loader.stub(exampleURL, .image(TestImages.pngSignature))
        let image = try await client.image(for: URLRequest(url: exampleURL))
        #expect(image == TestImages.gradient(width: 4, height: 3))
        #expect(decoder.calls.map(\.data) == [TestImages.pngSignature])
        #expect(loader.requests.map(\.url) == [exampleURL])
    }

    @Test func imageOptionsReachTheDecoderUnchanged() async throws {
        loader.stub(exampleURL, .image(TestImages.pngSignature))
        let options = ImageDecodingOptions(maximumPixelCount: 99, frameIndex: 3, maximumPixelSize: 10)
        _ = try await client.image(for: URLRequest(url: exampleURL), options: options)
        #expect(decoder.calls.first?.options == options)
    }

    @Test func sessionFailureIsWrappedAsSessionFailedWithTheSameError() async throws {
        let original = IdentityError("offline")
        loader.stub(exampleURL, .failure(original))
        let error = try await #require(throws: NetworkClientError.self) { try await client.image(for: URLRequest(url: exampleURL)) }
        #expect(error.code == .sessionFailed)
        #expect((error.underlying as? IdentityError) === original)
        #expect(error.url == exampleURL)
        #expect(decoder.calls.isEmpty)
    }

    @Test func bodyCutShortIsASessionFailure() async throws {
        let original = IdentityError("reset")
        loader.stub(exampleURL, MockResponse.image(TestImages.pngSignature).failing(with: original))
        let error = try await #require(throws: NetworkClientError.self) { try await client.image(for: URLRequest(url: exampleURL)) }
        #expect(error.code == .sessionFailed)
        #expect((error.underlying as? IdentityError) === original)
        #expect(decoder.calls.isEmpty)
    }

    @Test func rejectedResponseIsWrappedAsHandlerFailed() async throws {
        loader.stub(exampleURL, .status(404, body: TestImages.pngSignature, contentType: "image/png"))
        let error = try await #require(throws: NetworkClientError.self) { try await client.image(for: URLRequest(url: exampleURL)) }
        #expect(error.code == .handlerFailed)
        #expect(error.responseError?.code == .unacceptableStatus)
        #expect(error.statusCode == 404)
        #expect(decoder.calls.isEmpty)
    }

    @Test func htmlInsteadOfAnImageFailsOnTheContentType() async throws {
        loader.stub(exampleURL, .data(Data("<html></html>".utf8), contentType: "text/html; charset=utf-8"))
        let error = try await #require(throws: NetworkClientError.self) { try await client.image(for: URLRequest(url: exampleURL)) }
        #expect(error.code == .handlerFailed)
        #expect(error.responseError?.code == .unacceptableContentType)
        #expect(decoder.calls.isEmpty)
    }

    @Test func decoderFailureIsAHandlerFailureKeepingTheDecodersError() async throws {
        let original = IdentityError("corrupt")
        decoder.setResult(.failure(original))
        loader.stub(exampleURL, .image(TestImages.pngSignature))
        let error = try await #require(throws: NetworkClientError.self) { try await client.image(for: URLRequest(url: exampleURL)) }
        #expect(error.code == .handlerFailed)
        #expect(error.responseError?.code == .decodingFailed)
        #expect((error.responseError?.underlying as? IdentityError) === original)
    }

    @Test func nonHTTPResponseForAnHTTPURLIsRejected() async throws {
        loader.stub(exampleURL, MockResponse(statusCode: nil, headers: ["Content-Type": "image/png"], chunks: [TestImages.pngSignature]))
        let error = try await #require(throws: NetworkClientError.self) { try await client.image(for: URLRequest(url: exampleURL)) }
        #expect(error.responseError?.code == .notHTTPResponse)
    }

    @Test func progressIsReportedForEveryChunk() async throws {
        let body = Data(repeating: 7, count: 10)
        loader.stub(exampleURL, .data(body, contentType: "image/png", chunkSize: 4))
        let reports = Recorder<LoadingProgress>()
        _ = try await client.image(for: URLRequest(url: exampleURL)) { reports.record($0) }
        #expect(reports.values == [
            LoadingProgress(completed: 4, total: 10),
            LoadingProgress(completed: 8, total: 10),
            LoadingProgress(completed: 10, total: 10),
        ])
        #expect(decoder.calls.first?.data == body)
    }

    @Test func cancellingTheCallerCancelsTheTaskAndThrowsCancellationError() async throws {
        loader.stub(exampleURL, MockResponse.image(TestImages.pngSignature).held())
        let client = self.client
        let call = Task { try await client.image(for: URLRequest(url: exampleURL)) }
        let task = await loader.waitForTask(for: exampleURL)
        call.cancel()
        await #expect(throws: CancellationError.self) { try await call.value }
        #expect(task.isCancelled)
        #expect(loader.cancelledRequests.map(\.url) == [exampleURL])
        #expect(decoder.calls.isEmpty)
    }

    @Test func aHeldResponseCompletesWhenTheTestReleasesIt() async throws {
        loader.stub(exampleURL, MockResponse.image(TestImages.pngSignature).held())
        let client = self.client
        let call = Task { try await client.image(for: URLRequest(url: exampleURL)) }
        let task = await loader.waitForTask(for: exampleURL)
        #expect(decoder.calls.isEmpty)
        task.complete()
        _ = try await call.value
        #expect(decoder.calls.count == 1)
    }

    // MARK: raw data

    @Test func dataReturnsTheBodyUnchangedWhateverItsType() async throws {
        let body = Data("<html>not an image</html>".utf8)
        loader.stub(exampleURL, .data(body, contentType: "text/html"))
        let data = try await client.data(for: URLRequest(url: exampleURL))
        #expect(data == body)
        #expect(decoder.calls.isEmpty)
    }

    @Test func dataAcceptsOnlyTheGivenContentTypes() async throws {
        loader.stub(exampleURL, .data(Data("<html></html>".utf8), contentType: "text/html"))
        let error = try await #require(throws: NetworkClientError.self) {
            try await client.data(for: URLRequest(url: exampleURL), accepting: .images)
        }
        #expect(error.code == .handlerFailed)
        #expect(error.responseError?.code == .unacceptableContentType)
    }

    @Test func dataWithAnErrorStatusIsAHandlerFailureWithTheStatus() async throws {
        loader.stub(exampleURL, .status(503, body: Data("busy".utf8)))
        let error = try await #require(throws: NetworkClientError.self) { try await client.data(for: URLRequest(url: exampleURL)) }
        #expect(error.code == .handlerFailed)
        #expect(error.responseError?.code == .unacceptableStatus)
        #expect(error.statusCode == 503)
    }

    @Test func dataSessionFailureIsASessionFailureWithTheSameError() async throws {
        let original = IdentityError("reset")
        loader.stub(exampleURL, MockResponse.data(Data(count: 8)).failing(with: original))
        let error = try await #require(throws: NetworkClientError.self) { try await client.data(for: URLRequest(url: exampleURL)) }
        #expect(error.code == .sessionFailed)
        #expect((error.underlying as? IdentityError) === original)
    }

    @Test func dataReportsProgressForEveryChunk() async throws {
        loader.stub(exampleURL, .data(Data(repeating: 3, count: 6), chunkSize: 3))
        let reports = Recorder<LoadingProgress>()
        let data = try await client.data(for: URLRequest(url: exampleURL)) { reports.record($0) }
        #expect(data.count == 6)
        #expect(reports.values == [LoadingProgress(completed: 3, total: 6), LoadingProgress(completed: 6, total: 6)])
    }

    // MARK: JSON

    @Test func jsonIsDecoded() async throws {
        loader.stub(feedURL, try .json(encoding: [Album(artist: "Joni Mitchell", name: "Blue")]))
        let albums = try await client.json([Album].self, for: URLRequest(url: feedURL))
        #expect(albums == [Album(artist: "Joni Mitchell", name: "Blue")])
    }

    @Test func jsonUsesTheGivenDecoder() async throws {
        loader.stub(feedURL, .json(Data(#"{"artist_name":"Nina","album_name":"x"}"#.utf8)))
        struct Snake: Decodable { let artistName: String }
        let value = try await client.json(Snake.self, for: URLRequest(url: feedURL)) {
            let decoder = JSONDecoder()
            decoder.keyDecodingStrategy = .convertFromSnakeCase
            return decoder
        }
        #expect(value.artistName == "Nina")
    }

    @Test func jsonWithTheWrongContentTypeIsAHandlerFailure() async throws {
        loader.stub(feedURL, .data(Data("[]".utf8), contentType: "text/html"))
        let error = try await #require(throws: NetworkClientError.self) {
            try await client.json([Album].self, for: URLRequest(url: feedURL))
        }
        #expect(error.code == .handlerFailed)
        #expect(error.responseError?.code == .unacceptableContentType)
    }

    @Test func jsonServerErrorIsAHandlerFailureWithTheStatus() async throws {
        loader.stub(feedURL, .json(Data("{}".utf8), statusCode: 500))
        let error = try await #require(throws: NetworkClientError.self) {
            try await client.json([Album].self, for: URLRequest(url: feedURL))
        }
        #expect(error.code == .handlerFailed)
        #expect(error.statusCode == 500)
    }

    @Test func malformedJSONIsAHandlerFailureCarryingTheDecodingError() async throws {
        loader.stub(feedURL, .json(Data("{not json".utf8)))
        let error = try await #require(throws: NetworkClientError.self) {
            try await client.json([Album].self, for: URLRequest(url: feedURL))
        }
        #expect(error.responseError?.code == .decodingFailed)
        #expect(error.responseError?.underlying is DecodingError)
    }

    @Test func jsonSessionFailureIsASessionFailureWithTheSameError() async throws {
        let original = IdentityError()
        loader.stub(feedURL, .failure(original))
        let error = try await #require(throws: NetworkClientError.self) {
            try await client.json([Album].self, for: URLRequest(url: feedURL))
        }
        #expect(error.code == .sessionFailed)
        #expect((error.underlying as? IdentityError) === original)
    }

    @Test func defaultDecoderRejectsImagesAsUnsupported() async throws {
        let client = NetworkClient(loader: loader)
        loader.stub(exampleURL, .image(TestImages.pngSignature))
        let error = try await #require(throws: NetworkClientError.self) { try await client.image(for: URLRequest(url: exampleURL)) }
        #expect((error.responseError?.underlying as? ImageDecodingError)?.code == .unsupportedFormat)
    }
}

