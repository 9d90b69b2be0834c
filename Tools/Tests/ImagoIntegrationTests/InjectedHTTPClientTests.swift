import AsyncHTTPClient
import Foundation
import Imago
import ImagoAsyncHTTPClient
import ImagoCodecs
import ImagoTesting
import InMemoryLogging
import Logging
import LoopbackServer
import Testing
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `AsyncHTTPClientDataLoader` over a client the application owns; both
/// network loaders log through the logger they are given.
@Suite struct InjectedHTTPClientTests {
    let png = try! ImageEncoders.png().encode(TestImages.gradient(width: 10, height: 5))
    let logs = InMemoryLogHandler()

    /// A debug-level logger into ``logs``.
    var logger: Logger {
        var logger = Logger(label: "test") { [logs] _ in logs }
        logger.logLevel = .debug
        return logger
    }

    @Test func theURLSessionLoaderLogsItsLoads() async throws {
        let server = try await LoopbackServer.start(routes: ["/a.png": .ok(png, contentType: "image/png")])
        let loader = URLSessionDataLoader(logger: logger)
        let (data, _) = try await loader.data(for: URLRequest(url: server.url("/a.png")))
        #expect(data == png)
        #expect(logs.entries.contains { $0.message.description == "loaded" && $0.metadata["bytes"]?.description == String(png.count) })
        try await server.stop()
    }

    @Test func theSharedClientLoadsAndOutlivesTheLoader() async throws {
        let server = try await LoopbackServer.start(routes: ["/a.png": .ok(png, contentType: "image/png")])
        do {
            var configuration = ImagePipeline.Configuration.withCodecs
            configuration.dataLoader = AsyncHTTPClientDataLoader(client: HTTPClient.shared, logger: logger)
            let image = try await ImagePipeline(configuration: configuration).image(from: server.url("/a.png"))
            #expect((image.width, image.height) == (10, 5))
        }
        // The loader is gone; the shared client it borrowed still works.
        let response = try await HTTPClient.shared.execute(HTTPClientRequest(url: server.url("/a.png").absoluteString), timeout: .seconds(10))
        #expect(response.status == .ok)
        #expect(logs.entries.contains { $0.message.description == "response" && $0.metadata["status"]?.description == "200" })
        try await server.stop()
    }
}
