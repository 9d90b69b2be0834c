#if Server && os(Linux)
import FaultInjection
import Foundation
import HTTPTypes
import HummingbirdTesting
import Imago
import ImagoCodecs
import ImagoServer
import ImagoTesting
import LoopbackServer
import Testing

/// The fallback image (imgproxy's `IMGPROXY_FALLBACK_IMAGE_*`): answered,
/// processed as the path asks, for a source that cannot be loaded; never
/// for one that loads and does not decode, nor for a path the server refuses.
@Suite struct FallbackImageTests {
    /// A 40x30 blue PNG: unlike every fixture the origin serves.
    static let placeholder = try! ImageEncoders.png().encode(TestImages.solid(width: 40, height: 30, red: 0, green: 0, blue: 255))

    static func configuration(status: Int? = 200, timeToLive: Int? = nil, _ configure: (inout ImageServerConfiguration) -> Void = { _ in })
        -> ImageServerConfiguration {
        Fixture.configuration {
            $0.fallbackImage = FallbackImage(data: placeholder, status: status, timeToLive: timeToLive)
            $0.timeToLive = 3600
            configure(&$0)
        }
    }

    /// Whether `response` is the placeholder scaled to `width` pixels wide.
    func expectPlaceholder(_ response: TestResponse, width: Int, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let image = try response.image()
        #expect(image.width == width && image.height == width * 3 / 4, sourceLocation: sourceLocation)
        let pixel = image.pixel(x: image.width / 2, y: image.height / 2)
        #expect(pixel[0] < 8 && pixel[1] < 8 && pixel[2] > 247, "\(pixel)", sourceLocation: sourceLocation)
        #expect(response.header("ETag") == nil && response.header("Last-Modified") == nil, sourceLocation: sourceLocation)
    }

    @Test func everyFailureToLoadIsAnsweredWithTheFallback() async throws {
        let origin = try await Fixture.origin([
            "/missing.jpg": .text("gone", status: 404),
            "/gone.jpg": .text("gone", status: 410),
            "/broken.jpg": .text("boom", status: 500),
            "/oversized.jpg": ServedResponse.oversized(),
            "/cut.jpg": ServedResponse.ok(Fixture.jpeg, contentType: "image/jpeg").delivered(.truncated(afterBytes: 100)),
        ])
        let closed = try RefusingPort()
        let sources = ["/missing.jpg", "/gone.jpg", "/broken.jpg", "/oversized.jpg", "/cut.jpg"].map(origin.url) + [closed.url("/a.jpg")]
        try await Fixture.withServer(Self.configuration()) { client, _ in
            for source in sources {
                let response = try await client.execute(uri: Fixture.path("rs:fit:20:20/f:png", source), method: .get)
                #expect(response.status == .ok, "\(source): \(String(decoding: response.data, as: UTF8.self))")
                #expect(response.header("Content-Type") == "image/png")
                #expect(response.header("Cache-Control") == "max-age=3600, public")
                try expectPlaceholder(response, width: 20)
            }
        }
        withExtendedLifetime(closed) {}
    }

    @Test func theStatusIsTheFallbacksOrTheFailuresOwn() async throws {
        let origin = try await Fixture.origin(["/missing.jpg": .text("gone", status: 404), "/broken.jpg": .text("boom", status: 500)])
        try await Fixture.withServer(Self.configuration(status: 404)) { client, _ in
            let response = try await client.execute(uri: Fixture.path("w:12", origin.url("/broken.jpg")), method: .get)
            #expect(response.status == .notFound)
            // An error status without a time to live of its own is not cached (the error rule).
            #expect(response.header("Cache-Control") == "no-store")
            try expectPlaceholder(response, width: 12)
        }
        try await Fixture.withServer(Self.configuration(status: nil, timeToLive: 60)) { client, _ in
            for (path, status) in [("/missing.jpg", HTTPResponse.Status.notFound), ("/broken.jpg", .badGateway)] {
                let response = try await client.execute(uri: Fixture.path("w:12", origin.url(path)), method: .get)
                #expect(response.status == status)
                #expect(response.header("Cache-Control") == "max-age=60, public")
                try expectPlaceholder(response, width: 12)
            }
        }
    }

    /// imgproxy's writer: the fallback's time to live is used as it is (even
    /// above the server's), and a URL's `expires` that comes sooner shortens it.
    @Test func theFallbacksTimeToLiveYieldsToTheURLsExpiry() async throws {
        let origin = try await Fixture.origin(["/missing.jpg": .text("gone", status: 404)])
        try await Fixture.withServer(Self.configuration(timeToLive: 7200)) { client, _ in
            let lasting = try await client.execute(uri: Fixture.path("w:8", origin.url("/missing.jpg")), method: .get)
            #expect(lasting.header("Cache-Control") == "max-age=7200, public")
            let asked = Date()
            let soon = Int(asked.timeIntervalSince1970) + 100
            let expiring = try await client.execute(uri: Fixture.path("w:8/exp:\(soon)", origin.url("/missing.jpg")), method: .get)
            // The seconds left when the server answered: at most 100, less by the time the answer took.
            let taken = Int(Date().timeIntervalSince(asked).rounded(.up))
            let age = expiring.header("Cache-Control").flatMap { Int($0.dropFirst("max-age=".count).prefix { $0.isNumber }) }
            #expect((99 - taken...100).contains(age ?? 0), "\(expiring.header("Cache-Control") ?? "none") after \(taken) s")
        }
    }

    /// A source that loads but is not an image, does not decode or has too
    /// many pixels is an error still; so are the paths the server refuses.
    @Test func whatLoadedOrWasRefusedIsNotHidden() async throws {
        let corrupt = Data([0xFF, 0xD8, 0xFF, 0xE0]) + Data(repeating: 0x42, count: 200)
        let origin = try await Fixture.origin([
            "/page.html": .ok(Data("<html></html>".utf8), contentType: "text/html"),
            "/corrupt.jpg": .ok(corrupt, contentType: "image/jpeg"),
            "/huge.png": ServedResponse.pngBomb(),
        ])
        let configuration = Self.configuration { $0.sourcePolicy.allowedHosts = ["127.0.0.1"] }
        try await Fixture.withServer(configuration) { client, _ in
            for (path, code) in [("/page.html", "source_not_an_image"), ("/corrupt.jpg", "undecodable"), ("/huge.png", "source_too_large")] {
                let response = try await client.execute(uri: Fixture.path("w:10", origin.url(path)), method: .get)
                #expect(response.status == .unprocessableContent)
                #expect(response.errorCode == code)
            }
            let forbidden = try await client.execute(uri: Fixture.path("w:10", URL(string: "http://elsewhere.example/a.jpg")!), method: .get)
            #expect(forbidden.errorCode == "forbidden_source")
            let malformed = try await client.execute(uri: Fixture.path("w:-1", origin.url("/missing.jpg")), method: .get)
            #expect(malformed.errorCode == "bad_options")
        }
    }

    /// The fallback is rendered once per set of options, whatever source
    /// failed, and is never kept as the failed source's render: once the
    /// source loads, its own image is answered.
    @Test func theFallbackIsNeverKeptAsTheSourcesRender() async throws {
        let origin = try await Fixture.origin(["/later.jpg": .text("not yet", status: 404), "/other.jpg": .text("gone", status: 404)])
        let store = CountingStore()
        try await Fixture.withServer(Self.configuration { $0.resultStore = store }) { client, server in
            for path in ["/later.jpg", "/other.jpg", "/later.jpg"] {
                let response = try await client.execute(uri: Fixture.path("w:16", origin.url(path)), method: .get)
                try expectPlaceholder(response, width: 16)
            }
            #expect(server.decodeCount == 1)
            origin.route("/later.jpg", .ok(Fixture.jpeg, contentType: "image/jpeg"))
            let recovered = try await client.execute(uri: Fixture.path("w:16", origin.url("/later.jpg")), method: .get)
            #expect(recovered.status == .ok)
            #expect(try recovered.image().height == 12)
        }
        // Only the real render reaches the result store.
        #expect(await store.keys.count <= 1)
    }

    /// A result store that keeps what it is given, in memory.
    actor CountingStore: ResultStore {
        var results: [String: StoredResult] = [:]
        var keys: [String] { Array(results.keys) }
        func result(for key: String) async throws -> StoredResult? { results[key] }
        func store(_ result: StoredResult, for key: String) async throws { results[key] = result }
    }
}
#endif
