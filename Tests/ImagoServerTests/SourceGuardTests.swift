#if Server && os(Linux)
import Foundation
import HummingbirdTesting
import Imago
import ImagoAsyncHTTPClient
import ImagoServer
import ImagoTesting
import LoopbackServer
import Synchronization
import Testing
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The source guard end to end, with the workplace rule that no test may
/// reach a non-loopback address even if the guard were broken: names
/// resolve through a table, and the transport connects only to loopback,
/// standing in for one public address (198.51.100.7, TEST-NET-2).
@Suite struct SourceGuardTests {
    static let publicAddress = "198.51.100.7"

    /// Sends requests for the stand-in public address to loopback; refuses
    /// (without connecting) anything else, and records every URL it is given.
    final class LoopbackOnlyTransport: DataLoading {
        let inner: AsyncHTTPClientDataLoader
        let given = Mutex<[URL]>([])

        init() {
            var configuration = AsyncHTTPClientDataLoader.Configuration()
            configuration.followsRedirects = false
            inner = AsyncHTTPClientDataLoader(configuration: configuration)
        }

        var hosts: [String] { given.withLock { $0.compactMap(\.host) } }

        func load(_ request: URLRequest) async throws -> DataLoadingResponse {
            let url = request.url!
            given.withLock { $0.append(url) }
            guard url.host == SourceGuardTests.publicAddress, var components = URLComponents(url: url, resolvingAgainstBaseURL: false) else {
                throw DataLoadingError(.cannotConnect, url: url, message: "the test transport connects to loopback only")
            }
            components.host = "127.0.0.1"
            var rewritten = request
            rewritten.url = components.url
            return try await inner.load(rewritten)
        }
    }

    func configuration(_ transport: LoopbackOnlyTransport, _ table: [String: [String]],
                       _ configure: (inout ImageServerConfiguration) -> Void = { _ in }) -> ImageServerConfiguration {
        var configuration = ImageServerConfiguration(acceptsUnsignedPaths: true)
        configuration.timeout = 120   // as Fixture.configuration: a loaded test machine is no deadline test
        configuration.transport = transport
        configuration.resolver = MockHostResolver(table)   // names to addresses, as each test wants them
        configuration.logger = .disabled
        configure(&configuration)
        return configuration
    }

    @Test func aPublicNameIsFetchedPinnedToItsCheckedAddress() async throws {
        let origin = try await Fixture.origin()
        let transport = LoopbackOnlyTransport()
        try await Fixture.withServer(configuration(transport, ["images.test": [Self.publicAddress]])) { client, _ in
            let response = try await client.execute(uri: Fixture.path("w:10", URL(string: "http://images.test:\(origin.port)/a.jpg")!), method: .get)
            #expect(response.status == .ok)
        }
        #expect(transport.hosts == [Self.publicAddress])
        #expect(origin.requests(for: "/a.jpg").first?.header("Host") == "images.test:\(origin.port)")
    }

    @Test(arguments: [
        "http://127.0.0.1/a.jpg", "http://127.1/a.jpg", "http://[::1]/a.jpg", "http://0.0.0.0/a.jpg",
        "http://10.1.2.3/a.jpg", "http://172.16.0.1/a.jpg", "http://192.168.1.1/a.jpg", "http://100.64.0.1/a.jpg",
        "http://169.254.169.254/latest/meta-data", "http://224.0.0.1/a.jpg", "http://[fd00::1]/a.jpg",
        "http://[fe80::1]/a.jpg", "http://[ff02::1]/a.jpg", "http://[::ffff:127.0.0.1]/a.jpg", "http://[::ffff:10.0.0.1]/a.jpg",
        "http://[64:ff9b::a00:1]/a.jpg", "http://localhost/a.jpg", "http://printer.localhost/a.jpg",
        "http://private.test/a.jpg", "http://mapped.test/a.jpg", "http://mixed.test/a.jpg", "http://cgnat.test/a.jpg",
        "ftp://images.test/a.jpg", "https://metadata.test/a.jpg",
        // IPv6 forms that carry a private IPv4 address, as literals and as names.
        "http://[64:ff9b:1:a00:0:100::]/a.jpg", "http://[64:ff9b:1::a00:1]/a.jpg", "http://[2001:0:4136:e378:8000:63bf:3f57:fefe]/a.jpg",
        "http://[2001:db8::5efe:a00:1]/a.jpg", "http://[2001:db8::200:5efe:c0a8:1]/a.jpg",
        "http://nat64local.test/a.jpg", "http://teredo.test/a.jpg", "http://isatap.test/a.jpg",
    ])
    func aNonPublicSourceIsRefusedWithoutAConnection(source: String) async throws {
        let transport = LoopbackOnlyTransport()
        let table = [
            "private.test": ["192.168.0.10"], "mapped.test": ["::ffff:192.168.0.10"],
            "mixed.test": [Self.publicAddress, "10.0.0.1"], "cgnat.test": ["100.100.100.100"],
            "metadata.test": ["169.254.169.254"], "images.test": [Self.publicAddress],
            "nat64local.test": ["64:ff9b:1:7f00:0:100::"], "teredo.test": ["2001:0:4136:e378:8000:63bf:80ff:fffe"],
            "isatap.test": ["2001:db8::5efe:a9fe:a9fe"],
            // Not a literal the guard reads (inet_pton's strict form), so it is
            // resolved: the system's resolver reads it as 127.0.0.1 without DNS.
            "127.1": ["127.0.0.1"],
        ]
        try await Fixture.withServer(configuration(transport, table)) { client, _ in
            let response = try await client.execute(uri: Fixture.path("w:10", URL(string: source)!), method: .get)
            #expect(response.status == .notFound, "\(source)")
            #expect(response.errorCode == "forbidden_source")
        }
        #expect(transport.hosts.isEmpty)
    }

    @Test(arguments: ["http://127.0.0.1:PORT/x.jpg", "http://localhost:PORT/x.jpg", "http://[::ffff:127.0.0.1]:PORT/x.jpg", "http://inside.test:PORT/x.jpg"])
    func aRedirectFromAnAllowedHostToAForbiddenAddressIsRefused(target: String) async throws {
        let forbidden = try await Fixture.origin(["/x.jpg": .ok(Fixture.jpeg, contentType: "image/jpeg")])
        let location = target.replacingOccurrences(of: "PORT", with: String(forbidden.port))
        let origin = try await Fixture.origin(["/jump.jpg": .redirect(to: location, status: 302)])
        let transport = LoopbackOnlyTransport()
        let table = ["images.test": [Self.publicAddress], "inside.test": ["10.0.0.7"]]
        try await Fixture.withServer(configuration(transport, table) { $0.sourcePolicy.allowedHosts = ["images.test", "inside.test", "localhost", "127.0.0.1", "::ffff:127.0.0.1"] }) { client, _ in
            let response = try await client.execute(uri: Fixture.path("w:10", URL(string: "http://images.test:\(origin.port)/jump.jpg")!), method: .get)
            #expect(response.status == .notFound)
            #expect(response.errorCode == "forbidden_source")
        }
        #expect(origin.requestCount(for: "/jump.jpg") == 1)
        #expect(forbidden.requests.isEmpty)
        #expect(transport.hosts == [Self.publicAddress])
    }

    @Test func aRedirectToAnotherAllowedHostIsCheckedAndFollowed() async throws {
        let origin = try await Fixture.origin()
        origin.route("/jump.jpg", .redirect(to: "http://cdn.test:\(origin.port)/a.jpg", status: 301))
        let transport = LoopbackOnlyTransport()
        let table = ["images.test": [Self.publicAddress], "cdn.test": [Self.publicAddress]]
        try await Fixture.withServer(configuration(transport, table)) { client, _ in
            let response = try await client.execute(uri: Fixture.path("w:10", URL(string: "http://images.test:\(origin.port)/jump.jpg")!), method: .get)
            #expect(response.status == .ok)
        }
        #expect(transport.hosts == [Self.publicAddress, Self.publicAddress])
        #expect(origin.requests(for: "/a.jpg").first?.header("Host") == "cdn.test:\(origin.port)")
    }

    /// imgproxy answers both "Source is unreachable": 404.
    @Test func redirectLoopsAndLongChainsAre404() async throws {
        let origin = try await Fixture.origin()
        origin.route("/loop-a", .redirect(to: "/loop-b", status: 302))
        origin.route("/loop-b", .redirect(to: "/loop-a", status: 302))
        for hop in 0..<12 { origin.route("/chain-\(hop)", .redirect(to: "/chain-\(hop + 1)", status: 302)) }
        let transport = LoopbackOnlyTransport()
        try await Fixture.withServer(configuration(transport, ["images.test": [Self.publicAddress]])) { client, _ in
            for path in ["/loop-a", "/chain-0"] {
                let response = try await client.execute(uri: Fixture.path("w:10", URL(string: "http://images.test:\(origin.port)\(path)")!), method: .get)
                #expect(response.status == .notFound, "\(path)")
                #expect(response.errorCode == "source_unreachable")
            }
        }
        // Ten redirects are followed (imgproxy's default), the eleventh is not.
        #expect(origin.requestCount(for: "/chain-10") == 1)
        #expect(origin.requestCount(for: "/chain-11") == 0)
    }
}
#endif
