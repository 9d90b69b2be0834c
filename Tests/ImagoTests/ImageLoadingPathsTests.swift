import Foundation
import Imago
import ImagoTesting
import Testing
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// There is one way to check and decode an image response.
/// `NetworkClient.image` and `ImagePipeline` run the same checks (content
/// type, status, decode, in that order), so they reject the same responses
/// with the same ``ResponseError`` codes.
@Suite(.timeLimit(.minutes(1))) struct ImageLoadingPathsTests {
    struct Case: Sendable, CustomTestStringConvertible {
        let name: String
        let response: MockResponse
        let code: ResponseError.Code
        var testDescription: String { name }
    }

    static let png = TestImages.pngSignature

    static let rejected: [Case] = [
        Case(
            name: "HTML instead of an image",
            response: .data(Data("<html></html>".utf8), contentType: "text/html; charset=utf-8"),
            code: .unacceptableContentType
        ),
        Case(name: "JSON instead of an image", response: .json(Data("{}".utf8)), code: .unacceptableContentType),
        Case(
            name: "HTML error page: the type is checked first",
            response: .status(500, body: Data("oops".utf8), contentType: "text/html"),
            code: .unacceptableContentType
        ),
        Case(name: "404 with an image type", response: .status(404, body: png, contentType: "image/png"), code: .unacceptableStatus),
        Case(name: "500 with no type", response: .status(500), code: .unacceptableStatus),
        Case(name: "redirect left unfollowed", response: .status(301, contentType: "image/png"), code: .unacceptableStatus),
        Case(name: "304 with nothing cached", response: MockResponse(statusCode: 304), code: .unacceptableStatus),
        Case(
            name: "not an HTTP response for an https URL",
            response: MockResponse(statusCode: nil, headers: ["Content-Type": "image/png"], chunks: [png]),
            code: .notHTTPResponse
        ),
    ]

    let url = URL(string: "https://img.example/shared.png")!
    let loader = MockDataLoader()
    let decoder = MockImageDecoder(returning: TestImages.gradient(width: 4, height: 3))
    let client: NetworkClient
    let pipeline: ImagePipeline

    init() {
        client = NetworkClient(loader: loader, imageDecoder: decoder)
        pipeline = ImagePipeline(configuration: .init(dataLoader: loader, imageCache: nil, decoder: decoder))
    }

    @Test(arguments: rejected) func bothRejectTheSameResponsesWithTheSameCode(_ rejected: Case) async throws {
        loader.stub(url, rejected.response)
        let clientError = try await #require(throws: NetworkClientError.self) { try await client.image(for: URLRequest(url: url)) }
        let pipelineError = try await #require(throws: ImagePipelineError.self) { try await pipeline.image(for: ImageRequest(url: url)) }
        let pipelineResponseError = pipelineError.underlying as? ResponseError
        #expect(clientError.code == .handlerFailed)
        #expect(clientError.responseError?.code == rejected.code)
        #expect(pipelineError.code == .responseRejected)
        #expect(pipelineResponseError?.code == rejected.code)
        #expect(clientError.responseError?.statusCode == pipelineResponseError?.statusCode)
        #expect(clientError.responseError?.contentType == pipelineResponseError?.contentType)
        #expect(decoder.calls.isEmpty)
    }

    @Test(arguments: ["image/png", "IMAGE/PNG; charset=binary", "application/octet-stream", nil])
    func bothDecodeWhatEitherAccepts(contentType: String?) async throws {
        loader.stub(url, .data(Self.png, contentType: contentType))
        let image = try await client.image(for: URLRequest(url: url))
        let response = try await pipeline.image(for: ImageRequest(url: url))
        #expect(image == response.image)
        #expect(decoder.calls.map(\.data) == [Self.png, Self.png])
    }

    @Test func anUndecodableBodyFailsBothWithTheDecodersErrorUnchanged() async throws {
        let original = IdentityError("corrupt")
        decoder.setResult(.failure(original))
        loader.stub(url, .image(Self.png))
        let clientError = try await #require(throws: NetworkClientError.self) { try await client.image(for: URLRequest(url: url)) }
        let pipelineError = try await #require(throws: ImagePipelineError.self) { try await pipeline.image(for: ImageRequest(url: url)) }
        #expect(clientError.code == .handlerFailed)
        #expect(clientError.responseError?.code == .decodingFailed)
        #expect(clientError.responseError?.statusCode == 200)
        #expect((clientError.responseError?.underlying as? IdentityError) === original)
        #expect(pipelineError.code == .decodingFailed)
        #expect((pipelineError.underlying as? IdentityError) === original)
    }

    @Test func bothPassTheLoadersErrorThroughUnchanged() async throws {
        let original = IdentityError("offline")
        loader.stub(url, .failure(original))
        let clientError = try await #require(throws: NetworkClientError.self) { try await client.image(for: URLRequest(url: url)) }
        let pipelineError = try await #require(throws: ImagePipelineError.self) { try await pipeline.image(for: ImageRequest(url: url)) }
        #expect(clientError.code == .sessionFailed)
        #expect((clientError.underlying as? IdentityError) === original)
        #expect(pipelineError.code == .dataLoadingFailed)
        #expect((pipelineError.underlying as? IdentityError) === original)
        #expect(decoder.calls.isEmpty)
    }
}
