import Foundation
import HummingbirdTesting
import Imago
import ImagoAsyncHTTPClient
import ImagoServer
import LoopbackServer
import Testing
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// URLs made and signed by an existing imgproxy URL builder (PyPI `imgproxy`,
/// written to Fixtures/ by scripts/fixtures/imgproxy-builder-urls.py) are
/// served, with imgproxy's geometry.
@Suite struct ImgproxyBuilderTests {
    struct Fixtures: Decodable {
        struct Case: Decodable { let path: String; let width: Int; let height: Int; let contentType: String }
        let key: String
        let salt: String
        let source: String
        let cases: [Case]
    }

    /// Sends every request to the loopback origin, whatever host it names.
    struct ToOrigin: DataLoading {
        let origin: URL
        let inner: AsyncHTTPClientDataLoader
        func load(_ request: URLRequest) async throws -> DataLoadingResponse {
            var rewritten = request
            rewritten.url = origin.appendingPathComponent(request.url?.path ?? "/")
            return try await inner.load(rewritten)
        }
    }

    @Test func everyBuilderURLIsServedWithImgproxysGeometry() async throws {
        let file = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures/imgproxy-builder-urls.json")
        let fixtures = try JSONDecoder().decode(Fixtures.self, from: Data(contentsOf: file))
        #expect(fixtures.cases.count == 10)
        let origin = try await Fixture.origin(["/photo.jpg": .ok(Fixture.jpeg, contentType: "image/jpeg")])
        var loader = AsyncHTTPClientDataLoader.Configuration()
        loader.followsRedirects = false
        let configuration = Fixture.configuration {
            $0.acceptsUnsignedPaths = false
            $0.signingKeys = [try! SigningKey(hexKey: fixtures.key, hexSalt: fixtures.salt)]
            $0.transport = ToOrigin(origin: origin.baseURL, inner: AsyncHTTPClientDataLoader(configuration: loader))
        }
        try await Fixture.withServer(configuration) { client, _ in
            for item in fixtures.cases {
                let response = try await client.execute(uri: "/img" + item.path, method: .get)
                #expect(response.status == .ok, "\(item.path): \(String(decoding: response.data, as: UTF8.self))")
                #expect(response.header("Content-Type") == item.contentType, "\(item.path)")
                let image = try response.image()
                #expect((image.width, image.height) == (item.width, item.height), "\(item.path)")
            }
        }
    }
}
