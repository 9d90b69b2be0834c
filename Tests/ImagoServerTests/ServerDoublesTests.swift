#if Server && os(Linux)
import Foundation
import HummingbirdTesting
import Imago
import ImagoCodecs
import ImagoServer
import ImagoTesting
import Testing
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// ImagoTesting's server doubles (`MockOrigin`, `MockHostResolver`,
/// `ImageServerConfiguration.testing`) through their public API, with the
/// server's real source guard between them and the router: what is stubbed
/// is served, and what the guard must refuse is refused before the origin
/// sees a request.
@Suite struct ServerDoublesTests {
    static let png = try! ImageEncoders.png().encode(TestImages.gradient(width: 64, height: 48))
    let cat = URL(string: "http://images.example/cat.png")!

    /// What a GET of `source` (resized to 16 pixels wide) answered.
    struct Answer: Sendable {
        let status: Int
        let body: Data
        var image: Image? { try? ImageDecoders.all.decode(body) }
        /// The code and message of a JSON error body.
        var error: (code: String, message: String)? {
            struct Body: Decodable { struct Detail: Decodable { let code: String; let message: String }; let error: Detail }
            return (try? JSONDecoder().decode(Body.self, from: body)).map { ($0.error.code, $0.error.message) }
        }
    }

    func get(_ source: URL, from configuration: ImageServerConfiguration, signedWith key: SigningKey? = nil) async throws -> Answer {
        var options = ProcessingOptions()
        options.width = 16
        let path = "/img" + ImageServerPath(source: source, options: options).path(signedWith: key)
        return try await Fixture.withServer(configuration) { client, _ in
            let response = try await client.execute(uri: path, method: .get)
            return Answer(status: Int(response.status.code), body: response.data)
        }
    }

    @Test func aStubbedSourceIsServedThroughTheGuardAndRecordedByName() async throws {
        let origin = MockOrigin()
        origin.stub(cat, .image(Self.png))

        let answer = try await get(cat, from: .testing(origin: origin))

        #expect(answer.status == 200)
        #expect(answer.image?.width == 16)
        #expect(origin.requests.map(\.url) == [cat])
        #expect(origin.requests.first?.value(forHTTPHeaderField: "Host") == nil)
        #expect(origin.resolver.lookups == ["images.example"])
    }

    @Test func anHTTPSSourceIsServedToo() async throws {
        let origin = MockOrigin()
        let secure = URL(string: "https://images.example/cat.png")!
        origin.stub(secure, .image(Self.png))

        let answer = try await get(secure, from: .testing(origin: origin))

        #expect(answer.status == 200)
        #expect(origin.requests.map(\.url) == [secure])
    }

    @Test func aSigningKeyRefusesUnsignedPathsAndServesSignedOnes() async throws {
        let origin = MockOrigin()
        origin.stub(cat, .image(Self.png))
        let key = SigningKey(key: Array("test key".utf8), salt: Array("test salt".utf8))
        let configuration = ImageServerConfiguration.testing(origin: origin, signingKey: key)

        let unsigned = try await get(cat, from: configuration)
        let signed = try await get(cat, from: configuration, signedWith: key)

        #expect(unsigned.status == 403)
        #expect(unsigned.error?.code == "bad_signature")
        #expect(signed.status == 200)
        #expect(origin.requests.map(\.url) == [cat])
    }

    @Test func anUnknownHostIsUnreachableAndNamedWithoutARequest() async throws {
        let origin = MockOrigin()
        origin.stub(cat, .image(Self.png))

        let answer = try await get(URL(string: "http://elsewhere.example/cat.png")!, from: .testing(origin: origin))

        #expect(answer.status == 404)
        #expect(answer.error?.code == "source_unreachable")
        #expect(answer.error?.message.contains("MockHostResolver has no address for elsewhere.example (it has images.example)") == true,
                "\(answer.error?.message ?? "no message")")
        #expect(origin.requests.isEmpty)
    }

    @Test(arguments: [["10.0.0.7"], ["127.0.0.1"], ["169.254.169.254"], ["203.0.113.9", "192.168.1.1"], ["::ffff:10.0.0.1"]])
    func aPrivateAddressIsRefusedBeforeAnyRequest(addresses: [String]) async throws {
        let origin = MockOrigin()
        let intranet = URL(string: "http://intranet.example/cat.png")!
        origin.stub(intranet, .image(Self.png))
        origin.resolver.resolve("intranet.example", to: addresses.map { IPAddress($0)! })

        let answer = try await get(intranet, from: .testing(origin: origin))

        #expect(answer.status == 404)
        #expect(answer.error?.code == "forbidden_source")
        #expect(origin.requests.isEmpty)
    }

    @Test func aPolicyThatAllowsPrivateNetworksReachesTheSameStubByName() async throws {
        let origin = MockOrigin()
        let intranet = URL(string: "http://intranet.example/cat.png")!
        origin.stub(intranet, .image(Self.png))
        origin.resolver.resolve("intranet.example", to: "10.0.0.7")
        var configuration = ImageServerConfiguration.testing(origin: origin)
        configuration.sourcePolicy.allowsPrivateNetworks = true

        let answer = try await get(intranet, from: configuration)

        #expect(answer.status == 200)
        #expect(origin.requests.map(\.url) == [intranet])
    }

    @Test func aRedirectToAnotherStubbedHostIsCheckedAndFollowed() async throws {
        let origin = MockOrigin()
        let moved = URL(string: "https://cdn.example/cats/1.png")!
        origin.stub(cat, .redirect(to: moved.absoluteString, statusCode: 301))
        origin.stub(moved, .image(Self.png))

        let answer = try await get(cat, from: .testing(origin: origin))

        #expect(answer.status == 200)
        #expect(answer.image?.width == 16)
        #expect(origin.requests.map(\.url) == [cat, moved])
        #expect(origin.resolver.lookups == ["images.example", "cdn.example"])
    }

    @Test func aRedirectToAPrivateAddressIsRefusedBeforeItIsFollowed() async throws {
        let origin = MockOrigin()
        let inside = URL(string: "http://metadata.example/latest/meta-data")!
        origin.stub(cat, .redirect(to: inside.absoluteString))
        origin.stub(inside, .image(Self.png))
        origin.resolver.resolve("metadata.example", to: "169.254.169.254")

        let answer = try await get(cat, from: .testing(origin: origin))

        #expect(answer.status == 404)
        #expect(answer.error?.code == "forbidden_source")
        #expect(origin.requests.map(\.url) == [cat])
    }

    @Test func anUnstubbedPathFailsNamingItAndWhatIsStubbed() async throws {
        let origin = MockOrigin()
        origin.stub(cat, .image(Self.png))
        let missing = URL(string: "http://images.example/dog.png")!

        let answer = try await get(missing, from: .testing(origin: origin))

        #expect(answer.status == 502)
        #expect(answer.error?.code == "source_failed")
        #expect(answer.error?.message.contains(
            "MockOrigin has no response for http://images.example/dog.png (stubbed: http://images.example/cat.png)") == true,
            "\(answer.error?.message ?? "no message")")
        #expect(origin.requests.map(\.url) == [missing])
    }

    @Test func aHeldResponseWaitsForTheTest() async throws {
        let origin = MockOrigin()
        origin.stub(cat, MockResponse.image(Self.png).held())

        async let answer = get(cat, from: .testing(origin: origin))
        let load = await origin.waitForTask(for: cat)
        #expect(load.remainingStepCount > 0)
        load.complete()

        #expect(try await answer.status == 200)
        #expect(origin.tasks.count == 1)
    }

    /// The request the guard sends for an `http` source: the URL pinned to
    /// the checked address, the name in `Host`.
    func pinned(_ url: String, host: String) -> URLRequest {
        var request = URLRequest(url: URL(string: url)!)
        request.setValue(host, forHTTPHeaderField: "Host")
        return request
    }

    @Test func aPinnedRequestMatchesByNamePortPathAndQuery() async throws {
        let origin = MockOrigin()
        let stubbed = URL(string: "http://images.example:8080/cat.png?v=2")!
        origin.stub(stubbed, .image(Self.png))

        let loaded = try await origin.load(pinned("http://203.0.113.1:8080/cat.png?v=2", host: "Images.Example:8080"))
        #expect((loaded.response as? HTTPURLResponse)?.statusCode == 200)
        #expect(origin.requests.last?.url == URL(string: "http://Images.Example:8080/cat.png?v=2"))
        #expect(origin.requests(for: stubbed).count == 1)

        for (url, host) in [("http://203.0.113.1:8080/cat.png?v=3", "images.example:8080"),   // another query
                            ("http://203.0.113.1:8081/cat.png?v=2", "images.example:8081"),   // another port
                            ("http://203.0.113.1:8080/dog.png?v=2", "images.example:8080"),   // another path
                            ("http://203.0.113.1:8080/cat.png?v=2", "cdn.example:8080")] {    // another host
            await #expect(throws: MockOrigin.Unstubbed.self, "\(url) \(host)") { try await origin.load(pinned(url, host: host)) }
        }
        // An https stub is not an http one.
        await #expect(throws: MockOrigin.Unstubbed.self) { try await origin.load(URLRequest(url: URL(string: "https://images.example:8080/cat.png?v=2")!)) }
    }

    @Test func eachStubbedHostResolvesToAPublicAddressOfItsOwn() async throws {
        let origin = MockOrigin()
        origin.stub("http://images.example/a.png", .image(Self.png))
        origin.stub("http://images.example/b.png", .image(Self.png))
        origin.stub("https://cdn.example/a.png", .image(Self.png))
        origin.stub("http://198.51.100.7/a.png", .image(Self.png))   // an address needs no name

        let first = try await origin.resolver.addresses(for: "images.example")
        let second = try await origin.resolver.addresses(for: "CDN.example.")
        #expect(first.count == 1 && second.count == 1)
        #expect(first != second)
        #expect((first + second).allSatisfy { $0.nonPublicRange == nil })
        #expect(origin.resolver.hosts == ["cdn.example", "images.example"])
    }

    @Test func theResolverNamesAnUnknownHostAndWhatItKnows() async throws {
        let resolver = MockHostResolver(["images.example": ["203.0.113.7", "2001:db8::7"]])
        resolver.resolve("cdn.example", to: "198.51.100.7")

        #expect(try await resolver.addresses(for: "IMAGES.example.").map(\.description) == ["203.0.113.7", "2001:db8::7"])
        let error = await #expect(throws: MockHostResolver.UnknownHost.self) { try await resolver.addresses(for: "other.example") }
        #expect(error?.host == "other.example")
        #expect(error?.knownHosts == ["cdn.example", "images.example"])
        #expect(error?.description == "MockHostResolver has no address for other.example (it has cdn.example, images.example)")
        #expect(resolver.lookups == ["IMAGES.example.", "other.example"])
    }
}
#endif
