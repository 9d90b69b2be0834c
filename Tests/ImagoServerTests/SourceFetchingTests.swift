#if Server && os(Linux)
import Foundation
import HummingbirdTesting
import Imago
import ImagoServer
import LoopbackServer
import S3Peer
import Testing

/// How sources are fetched over HTTP (``SourceFetching``, imgproxy's
/// fetcher variables), against real origins on loopback.
@Suite struct SourceFetchingTests {
    @Test func theUserAgentReachesTheOriginOnEveryHop() async throws {
        let origin = try await Fixture.origin(["/jump.jpg": .redirect(to: "/a.jpg", status: 302)])
        let configuration = Fixture.configuration { $0.sourceFetching.userAgent = "thumbs/2.1 (+https://example.com/bot)" }
        try await Fixture.withServer(configuration) { client, _ in
            let response = try await client.execute(uri: Fixture.path("w:40", origin.url("/jump.jpg")), method: .get)
            #expect(response.status == .ok)
        }
        let agents = origin.requests.map { request in request.headers.first { $0.name.lowercased() == "user-agent" }?.value }
        #expect(agents == ["thumbs/2.1 (+https://example.com/bot)", "thumbs/2.1 (+https://example.com/bot)"])
    }

    @Test func theDefaultUserAgentIsImagos() async throws {
        let origin = try await Fixture.origin()
        try await Fixture.withServer(Fixture.configuration()) { client, _ in
            let response = try await client.execute(uri: Fixture.path("w:40", origin.url("/a.png")), method: .get)
            #expect(response.status == .ok)
        }
        #expect(origin.requests.first?.headers.first { $0.name.lowercased() == "user-agent" }?.value == "imago")
    }

    /// A chain of three redirects is followed with a limit of three, and is
    /// `404 source_unreachable` with two, as imgproxy answers.
    @Test(arguments: [(3, 200), (2, 404), (0, 404)])
    func redirectsAreFollowedUpToTheLimit(limit: Int, status: Int) async throws {
        let origin = try await Fixture.origin([
            "/r1": .redirect(to: "/r2", status: 302), "/r2": .redirect(to: "/r3", status: 301), "/r3": .redirect(to: "/a.jpg", status: 307),
        ])
        let configuration = Fixture.configuration { $0.sourceFetching.maximumRedirects = limit }
        try await Fixture.withServer(configuration) { client, _ in
            let response = try await client.execute(uri: Fixture.path("w:40", origin.url("/r1")), method: .get)
            #expect(response.status.code == status)
            if status == 404 { #expect(response.errorCode == "source_unreachable") }
        }
        // No hop past the limit reached the origin.
        #expect(origin.requests.count == min(limit, 3) + 1)
    }

    /// A source that trickles in for 4 s is given up after the download
    /// timeout (half a second), not at the request's deadline: 504.
    @Test func aDownloadPastItsTimeoutIs504() async throws {
        let origin = try await Fixture.origin([
            "/slow.jpg": ServedResponse.ok(Fixture.jpeg, contentType: "image/jpeg")
                .delivered(.trickle(chunkSize: Fixture.jpeg.count / 4 + 1, interval: .seconds(1))),
        ])
        let configuration = Fixture.configuration {
            $0.sourceFetching.downloadTimeout = 0.5
            $0.timeout = 60
        }
        try await Fixture.withServer(configuration) { client, _ in
            let response = try await client.execute(uri: Fixture.path("w:40", origin.url("/slow.jpg")), method: .get)
            // The download's own timeout, not the request's deadline (which is 503 timeout).
            #expect(response.status == .gatewayTimeout)
            #expect(response.errorCode == "source_timed_out")
            #expect(String(decoding: response.data, as: UTF8.self).contains("longer than 0.5 s"), "\(String(decoding: response.data, as: UTF8.self))")
        }
    }

    /// Kept-alive connections to an origin are reused within the timeout
    /// and closed after it: two sources a second apart take one connection
    /// with the default 90 s and two with a tenth of a second.
    @Test(arguments: [(90.0, 1), (0.1, 2)])
    func idleConnectionsAreKeptForTheKeepAliveTimeout(keepAlive: Double, connections: Int) async throws {
        let origin = try await Fixture.origin()
        let configuration = Fixture.configuration { $0.sourceFetching.keepAliveTimeout = keepAlive }
        try await Fixture.withServer(configuration) { client, _ in
            #expect(try await client.execute(uri: Fixture.path("w:40", origin.url("/a.jpg")), method: .get).status == .ok)
            try await Task.sleep(for: .seconds(1))
            let response = try await client.execute(uri: Fixture.path("w:40", origin.url("/a.png")), method: .get)
            #expect(response.status == .ok)
        }
        #expect(origin.acceptedConnections == connections)
    }

    /// An `https` origin with a self-signed certificate is refused unless
    /// certificates are not verified (imgproxy's `IMGPROXY_IGNORE_SSL_VERIFICATION`).
    @Test func aSelfSignedOriginIsRefusedUnlessCertificatesAreNotVerified() async throws {
        let origin = try await SelfSignedOrigin(body: Fixture.png, contentType: "image/png")
        let path = Fixture.path("w:40", origin.url("/a.png"))
        try await Fixture.withServer(Fixture.configuration()) { client, _ in
            let response = try await client.execute(uri: path, method: .get)
            #expect(response.status == .notFound)
            #expect(response.errorCode == "source_unreachable")
        }
        let trusting = Fixture.configuration { $0.sourceFetching.verifiesCertificates = false }
        try await Fixture.withServer(trusting) { client, _ in
            let response = try await client.execute(uri: path, method: .get)
            #expect(response.status == .ok)
            #expect(try response.image().width == 40)
        }
    }
}
#endif
