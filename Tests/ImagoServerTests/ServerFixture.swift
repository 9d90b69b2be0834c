#if Server && os(Linux)
import ImageFixtures
import Foundation
import AsyncHTTPClient
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Imago
import ImagoAsyncHTTPClient
import ImagoCodecs
import ImagoServer
import LoopbackServer
import NIOCore

/// Sources for the server tests: a loopback origin with a few real images,
/// and the server mounted on a Hummingbird router.
enum Fixture {
    /// A 200x150 photo-like gradient (``ProcessingFixtures/photo(width:height:varyingAlpha:)``).
    static func photo(width: Int = 200, height: Int = 150) -> Image {
        ProcessingFixtures.photo(width: width, height: height)
    }

    static let jpeg = try! ImageEncoders.jpeg(quality: 90).encode(photo())
    static let png = try! ImageEncoders.png().encode(photo())
    static let webp = try! ImageEncoders.webp(quality: 90).encode(photo())
    static let gif = try! Data(contentsOf: URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().appendingPathComponent("../ImagoCodecsTests/Resources/gif/pillow-animation.gif"))
    static let avif = try! ImageEncoders.avif(quality: 70, speed: 9).encode(photo())
    /// A 96x64 HEIC made by pillow-heif.
    static let heic = try! Data(contentsOf: URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().appendingPathComponent("../ImagoCodecsTests/Resources/heic/rgb8.heic"))

    /// An origin serving `/a.jpg`, `/a.png`, `/a.webp`, `/a.gif`, `/a.avif`, `/a.heic` and whatever `routes` adds.
    static func origin(_ routes: [String: ServedResponse] = [:]) async throws -> LoopbackServer {
        var all: [String: ServedResponse] = [
            "/a.jpg": .ok(jpeg, contentType: "image/jpeg"),
            "/a.png": .ok(png, contentType: "image/png"),
            "/a.webp": .ok(webp, contentType: "image/webp"),
            "/a.gif": .ok(gif, contentType: "image/gif"),
            "/a.avif": .ok(avif, contentType: "image/avif"),
            "/a.heic": .ok(heic, contentType: "image/heic"),
        ]
        all.merge(routes) { $1 }
        return try await LoopbackServer.start(routes: all)
    }

    /// A configuration for a loopback origin: unsigned paths, private
    /// networks allowed, and a render deadline and a download timeout of
    /// two minutes (the defaults, 10 s and 5 s, are for production: a debug
    /// build under the thread sanitizer, beside the other suites, can take
    /// longer; the tests of those limits set theirs).
    static func configuration(_ configure: (inout ImageServerConfiguration) -> Void = { _ in }) -> ImageServerConfiguration {
        var configuration = ImageServerConfiguration(acceptsUnsignedPaths: true)
        configuration.sourcePolicy.allowsPrivateNetworks = true
        configuration.timeout = 120
        configuration.sourceFetching.downloadTimeout = 120
        configuration.logger = .disabled
        configure(&configuration)
        return configuration
    }

    /// Runs `test` against the server mounted at `/img` of a router, in
    /// process through the router with no socket (`.router`, the default),
    /// or served over HTTP on loopback (`.live`: for what only a socket
    /// shows, such as many connections at once or a client that hangs up).
    static func withServer<Value: Sendable>(
        _ configuration: ImageServerConfiguration,
        over setup: TestingSetup = .router,
        _ test: @Sendable (any TestClientProtocol, ImageServer<BasicRequestContext>) async throws -> Value
    ) async throws -> Value {
        let router = Router()
        let server = ImageServer<BasicRequestContext>(configuration: configuration)
        server.addRoutes(to: router.group("img"))
        let app = Application(router: router)
        return try await app.test(setup) { client in try await test(client, server) }
    }

    /// `/img/insecure/OPTIONS/plain/ENCODED-SOURCE`.
    static func path(_ options: String, _ source: URL, extension ext: String? = nil) -> String {
        let encoded = source.absoluteString.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
        let optionPart = options.isEmpty ? "" : "/" + options
        return "/img/insecure\(optionPart)/plain/\(encoded)" + (ext.map { "@\($0)" } ?? "")
    }
}

/// Real concurrent requests to a `.live` server: the test client sends one
/// request at a time over one connection, so tests of concurrency use their
/// own AsyncHTTPClient with many connections, through ``with(port:connections:_:)``.
struct ConcurrentClient: Sendable {
    struct NotLive: Error, CustomStringConvertible {
        var description: String { "a ConcurrentClient needs a server over a socket: Fixture.withServer(..., over: .live)" }
    }

    let client: HTTPClient
    let port: Int

    private init(port: Int, connections: Int) {
        var configuration = HTTPClient.Configuration()
        configuration.connectionPool = .init(idleTimeout: .seconds(30), concurrentHTTP1ConnectionsPerHostSoftLimit: connections)
        client = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration)
        self.port = port
    }

    /// Runs `body` with a client of `connections` connections to the
    /// server on `port` (a `.live` test client's), and shuts the client
    /// down on every path: an `HTTPClient` dropped without `shutdown()`
    /// stops the whole test process, taking every other test's result with it.
    @discardableResult
    static func with<Value: Sendable>(
        port: Int?, connections: Int, _ body: (ConcurrentClient) async throws -> Value
    ) async throws -> Value {
        guard let port else { throw NotLive() }
        let client = ConcurrentClient(port: port, connections: connections)
        let value: Value
        do {
            value = try await body(client)
        } catch {
            try? await client.client.shutdown()
            throw error
        }
        try await client.client.shutdown()
        return value
    }

    /// The status, the `ETag` and `Retry-After`, and the error code of a GET.
    func get(_ path: String, timeout: TimeAmount = .seconds(60)) async throws
        -> (status: Int, etag: String?, retryAfter: String?, errorCode: String?) {
        let response = try await client.execute(HTTPClientRequest(url: "http://127.0.0.1:\(port)\(path)"), timeout: timeout)
        let body = try await response.body.collect(upTo: 16 << 20)
        struct Body: Decodable { struct Detail: Decodable { let code: String }; let error: Detail }
        let code = try? JSONDecoder().decode(Body.self, from: Data(body.readableBytesView)).error.code
        return (Int(response.status.code), response.headers.first(name: "ETag"), response.headers.first(name: "Retry-After"), code)
    }
}

extension TestResponse {
    /// The body as bytes.
    var data: Data { Data(body.readableBytesView) }

    /// The decoded body.
    func image() throws -> Image { try ImageDecoders.all.decode(data) }

    /// The error code of a JSON error body.
    var errorCode: String? {
        struct Body: Decodable { struct Detail: Decodable { let code: String; let message: String }; let error: Detail }
        return try? JSONDecoder().decode(Body.self, from: data).error.code
    }

    func header(_ name: String) -> String? { headers[HTTPField.Name(name)!] }
}
#endif
