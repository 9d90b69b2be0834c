import Foundation
import SharedState
import Imago
import ImagoTesting
import FaultInjection
import LoopbackServer
import Testing
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The URLSession loader and the response contract against a real HTTP
/// server on loopback.
@Suite struct LoopbackNetworkTests {
    static let imageBytes: Data = {
        var data = TestImages.pngSignature
        data.append(Data((0..<5_000).map { UInt8($0 % 256) }))
        return data
    }()

    static let routes: [String: ServedResponse] = [
        "/cat.png": .ok(imageBytes, contentType: "image/png"),
        "/shouting.png": .ok(imageBytes, contentType: "IMAGE/PNG"),
        "/octet": .ok(imageBytes, contentType: "application/octet-stream"),
        "/missing": .text("<html>not here</html>", status: 404, contentType: "text/html"),
        "/missing-image": .ok(imageBytes, contentType: "image/png", status: 404),
        "/broken": .text("<html>oops</html>", status: 500, contentType: "text/html; charset=utf-8"),
        "/broken-image": .ok(imageBytes, contentType: "image/png", status: 500),
        "/moved": .redirect(to: "/cat.png"),
        "/loop-a": .redirect(to: "/loop-b", status: 302),
        "/loop-b": .redirect(to: "/loop-a", status: 302),
        "/page": .text("<html><body>a page</body></html>", status: 200, contentType: "text/html"),
        "/empty": .ok(Data(), contentType: "image/png"),
        "/slow": ServedResponse.ok(imageBytes, contentType: "image/png").delivered(.trickle(chunkSize: 1_000, interval: .milliseconds(20))),
        "/cut": ServedResponse.ok(imageBytes, contentType: "image/png").delivered(.truncated(afterBytes: 1_000)),
        "/chunked": ServedResponse.ok(imageBytes, contentType: "image/png").delivered(.chunked(chunkSize: 700)),
        "/feed.json": .ok(Data(#"{"feed":{"entry":[{"name":"Blue"}]}}"#.utf8), contentType: "application/json; charset=utf-8"),
        "/stalled": ServedResponse.ok(imageBytes, contentType: "image/png").delivered(.trickle(chunkSize: 1, interval: .seconds(5))),
    ]

    let server: LoopbackServer
    let decoder = MockImageDecoder(returning: TestImages.solid(width: 3, height: 3))
    let client: NetworkClient

    init() async throws {
        server = try await LoopbackServer.start(routes: Self.routes)
        client = NetworkClient(
            loader: DataLoader(network: URLSessionDataLoader()),
            imageDecoder: ImageDecoderRegistry([.png: decoder])
        )
    }

    /// A client over a URLSession loader configured by `configure`.
    private func client(_ configure: (inout URLSessionDataLoader.Configuration) -> Void) -> NetworkClient {
        var configuration = URLSessionDataLoader.Configuration()
        configure(&configuration)
        return NetworkClient(loader: URLSessionDataLoader(configuration: configuration), imageDecoder: ImageDecoderRegistry([.png: decoder]))
    }

    /// The error loading the image at `path` throws; the test fails when it throws none, or another type.
    private func imageError(_ path: String, client: NetworkClient? = nil,
                            sourceLocation: SourceLocation = #_sourceLocation) async throws -> NetworkClientError {
        let client = client ?? self.client
        return try await #require(throws: NetworkClientError.self, sourceLocation: sourceLocation) {
            try await client.image(for: URLRequest(url: server.url(path)))
        }
    }

    @Test func imageBytesArriveWholeAndAreDecoded() async throws {
        let image = try await client.image(for: URLRequest(url: server.url("/cat.png")))
        #expect(image == TestImages.solid(width: 3, height: 3))
        #expect(decoder.calls.map(\.data) == [Self.imageBytes])
        #expect(server.requests(for: "/cat.png").map(\.method) == ["GET"])
    }

    @Test func wrongCaseContentTypeIsAccepted() async throws {
        _ = try await client.image(for: URLRequest(url: server.url("/shouting.png")))
        #expect(decoder.calls.count == 1)
    }

    @Test func octetStreamIsDecidedByTheBytes() async throws {
        _ = try await client.image(for: URLRequest(url: server.url("/octet")))
        #expect(decoder.calls.count == 1)
    }

    @Test func notFoundPageFailsOnItsContentTypeAndCarriesTheStatus() async throws {
        let error = try await imageError("/missing")
        #expect(error.code == .handlerFailed)
        #expect(error.responseError?.code == .unacceptableContentType)
        #expect(error.statusCode == 404)
        #expect(decoder.calls.isEmpty)
    }

    @Test func notFoundWithAnImageTypeFailsOnTheStatus() async throws {
        let error = try await imageError("/missing-image")
        #expect(error.responseError?.code == .unacceptableStatus)
        #expect(error.statusCode == 404)
        #expect(decoder.calls.isEmpty)
    }

    @Test func serverErrorFails() async throws {
        let page = try await imageError("/broken")
        #expect(page.responseError?.code == .unacceptableContentType)
        #expect(page.statusCode == 500)
        let image = try await imageError("/broken-image")
        #expect(image.responseError?.code == .unacceptableStatus)
        #expect(image.statusCode == 500)
        #expect(decoder.calls.isEmpty)
    }

    @Test func redirectIsFollowedByDefault() async throws {
        _ = try await client.image(for: URLRequest(url: server.url("/moved")))
        #expect(server.requests(for: "/moved").count == 1)
        #expect(server.requests(for: "/cat.png").count == 1)
        #expect(decoder.calls.map(\.data) == [Self.imageBytes])
    }

    @Test func unfollowedRedirectFailsWithItsStatus() async throws {
        let client = client { $0.followsRedirects = false }
        let error = try await imageError("/moved", client: client)
        #expect(error.responseError?.code == .unacceptableStatus)
        #expect(error.statusCode == 301)
        #expect(server.requests(for: "/cat.png").isEmpty)
    }

    @Test func redirectLoopIsALoadingFailure() async throws {
        let error = try await imageError("/loop-a")
        #expect(error.code == .sessionFailed)
        #expect((error.underlying as? DataLoadingError)?.code == .redirectLoop)
        // /loop-a, /loop-b, then the redirect back to /loop-a is refused.
        #expect(server.requests.count == 2)
    }

    @Test func htmlBodyIsRejectedBeforeDecoding() async throws {
        let error = try await imageError("/page")
        #expect(error.responseError?.code == .unacceptableContentType)
        #expect(error.responseError?.contentType == "text/html")
        #expect(decoder.calls.isEmpty)
    }

    @Test func emptyBodyFailsAtDecodingAsUnsupported() async throws {
        let error = try await imageError("/empty")
        #expect(error.responseError?.code == .decodingFailed)
        #expect((error.responseError?.underlying as? ImageDecodingError)?.code == .unsupportedFormat)
        #expect(decoder.calls.isEmpty)
    }

    @Test func slowBodyArrivesWholeWithProgressAlongTheWay() async throws {
        let reports = ProgressLog()
        _ = try await client.image(for: URLRequest(url: server.url("/slow"))) { reports.append($0) }
        #expect(decoder.calls.map(\.data) == [Self.imageBytes])
        let values = reports.values
        #expect(values.count >= 3)
        #expect(values.map(\.completed) == values.map(\.completed).sorted())
        #expect(values.last == LoadingProgress(completed: Int64(Self.imageBytes.count), total: Int64(Self.imageBytes.count)))
    }

    @Test func chunkedBodyWithoutLengthArrivesWhole() async throws {
        _ = try await client.image(for: URLRequest(url: server.url("/chunked")))
        #expect(decoder.calls.map(\.data) == [Self.imageBytes])
    }

    @Test func connectionClosedMidBodyIsAConnectionLost() async throws {
        let error = try await imageError("/cut")
        #expect(error.code == .sessionFailed)
        let loading = error.underlying as? DataLoadingError
        #expect(loading?.code == .connectionLost)
        #expect(loading?.underlying is URLError)
        #expect(decoder.calls.isEmpty)
    }

    @Test func declaredLengthOverTheLimitFailsBeforeTheBody() async throws {
        let client = client { $0.maximumResponseSize = 1_000 }
        let error = try await imageError("/cat.png", client: client)
        #expect((error.underlying as? DataLoadingError)?.code == .responseTooLarge)
    }

    @Test func streamedBodyOverTheLimitIsCutOff() async throws {
        let client = client { $0.maximumResponseSize = 1_000 }
        let error = try await imageError("/chunked", client: client)
        #expect((error.underlying as? DataLoadingError)?.code == .responseTooLarge)
        #expect(decoder.calls.isEmpty)
    }

    @Test func idleTimeoutIsATimeout() async throws {
        let client = client { $0.idleTimeout = 1 }
        let error = try await imageError("/stalled", client: client)
        let loading = error.underlying as? DataLoadingError
        #expect(loading?.code == .timedOut)
        #expect((loading?.underlying as? URLError)?.code == .timedOut)
    }

    @Test func cancellingTheCallerStopsTheDownload() async {
        let client = self.client
        let url = server.url("/stalled")
        let call = Task { try await client.image(for: URLRequest(url: url)) }
        while server.requests(for: "/stalled").isEmpty { await Task.yield() }
        call.cancel()
        await #expect(throws: CancellationError.self) { try await call.value }
        #expect(decoder.calls.isEmpty)
    }

    @Test func refusedConnectionCannotConnect() async throws {
        let closed = try RefusingPort()
        let url = closed.url("/cat.png")
        let error = try await #require(throws: NetworkClientError.self) { try await client.image(for: URLRequest(url: url)) }
        #expect(error.code == .sessionFailed)
        #expect((error.underlying as? DataLoadingError)?.code == .cannotConnect)
        withExtendedLifetime(closed) {}   // the port stays reserved until here
    }

    @Test func jsonIsFetchedAndDecoded() async throws {
        struct Feed: Decodable { struct Inner: Decodable { let entry: [Entry] }; struct Entry: Decodable { let name: String }; let feed: Inner }
        let feed = try await client.json(Feed.self, for: URLRequest(url: server.url("/feed.json")))
        #expect(feed.feed.entry.map(\.name) == ["Blue"])
    }

    @Test func jsonFromAnHTMLPageIsRejected() async throws {
        struct Feed: Decodable {}
        let error = try await #require(throws: NetworkClientError.self) {
            try await client.json(Feed.self, for: URLRequest(url: server.url("/page")))
        }
        #expect(error.responseError?.code == .unacceptableContentType)
    }
}

/// Collects progress reports from a `@Sendable` callback.
final class ProgressLog: Sendable {
    private let storage = Locked<[LoadingProgress]>([])
    func append(_ value: LoadingProgress) { storage.withLock { $0.append(value) } }
    var values: [LoadingProgress] { storage.withLock { $0 } }
}



