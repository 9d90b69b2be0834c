#if Server
import Foundation
import Imago
import ImagoServer
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The origins an image server fetches its sources from, stood in for by
/// a table of URLs and ``MockResponse``s: no socket, no DNS, and the
/// server's source guard still checks every URL and address.
///
/// ```swift
/// let origin = MockOrigin()
/// origin.stub("https://images.example/cat.jpg", .image(catJPEG))
/// let server = ImageServer<BasicRequestContext>(configuration: .testing(origin: origin))
/// // ... a request for /insecure/w:100/plain/https%3A%2F%2Fimages.example%2Fcat.jpg ...
/// #expect(origin.requests.map(\.url) == [URL(string: "https://images.example/cat.jpg")!])
/// ```
///
/// Stubbing a URL also makes its host resolve, in ``resolver``, to a public
/// documentation address (203.0.113.0/24, which is never connected to)
/// unless the resolver already has it; give it another address to test
/// the guard (`origin.resolver.resolve("intranet.example", to: "10.0.0.7")`).
///
/// The guard pins an `http` connection to the address it checked: the URL
/// it sends names the address, and `Host` the name. The origin reads the
/// name back from `Host`, so a stub matches by scheme, host name, port,
/// path and query whatever address the guard connected to, and
/// ``requests`` shows each URL as the source URL named it. A URL with no
/// stub fails with ``Unstubbed``, which lists what is stubbed (the server
/// answers `502 source_failed` with that message); a name the resolver
/// does not know fails in the guard with ``MockHostResolver/UnknownHost``
/// (`404 source_unreachable`).
///
/// Responses are ``MockDataLoader``'s: sequences, held responses released
/// by the test (``waitForTask(for:)``), failures. A redirect is answered
/// with ``MockResponse/redirect(to:statusCode:)``; the guard follows and
/// checks it as it would a real one.
public final class MockOrigin: DataLoading {
    /// The error for a request whose URL has no stub.
    public struct Unstubbed: Error, Sendable, CustomStringConvertible {
        /// The URL that had no stub, with the host name rather than an address.
        public let url: URL?
        /// The URLs that have stubs, in the order they were stubbed.
        public let stubbed: [URL]
        /// "MockOrigin has no response for URL (stubbed: URL, URL)".
        public var description: String {
            let stubs = stubbed.isEmpty ? "nothing is stubbed" : "stubbed: \(stubbed.map(\.absoluteString).joined(separator: ", "))"
            return "MockOrigin has no response for \(url?.absoluteString ?? "<no URL>") (\(stubs))"
        }
    }

    /// The table the server's guard resolves host names with: every
    /// stubbed host is in it. Hand it to the server as its `resolver`
    /// (`ImageServerConfiguration.testing(origin:signingKey:)` and
    /// `prepareForTesting(origin:)` do).
    public let resolver: MockHostResolver

    private struct State {
        /// The stubbed URLs as written, in order, by what they match.
        var stubs: [(url: URL, key: Key)] = []
        var requests: [URLRequest] = []
    }

    private let state = Locked(State())
    /// Answers each stubbed URL, under the URL as the stub wrote it.
    private let responses = MockDataLoader()

    /// Creates an origin with no stubs, whose hosts go into `resolver`
    /// (a new, empty one by default).
    public init(resolver: MockHostResolver = MockHostResolver()) {
        self.resolver = resolver
    }

    /// Sets the response for `url`, replacing any earlier one.
    public func stub(_ url: URL, _ response: MockResponse) {
        stub(url, sequence: [response])
    }

    /// Sets the response for the URL written as `string`.
    ///
    /// - Precondition: `string` is a URL.
    public func stub(_ string: String, _ response: MockResponse) {
        guard let url = URL(string: string) else { preconditionFailure("MockOrigin: \(string) is not a URL") }
        stub(url, response)
    }

    /// Sets the responses for successive requests of `url`: the first
    /// request gets the first, and so on; the last answers every request
    /// after that.
    ///
    /// - Precondition: `url` has a host and `responses` is not empty.
    public func stub(_ url: URL, sequence responses: [MockResponse]) {
        guard let key = Key(url) else { preconditionFailure("MockOrigin: \(url) has no host") }
        state.withLock { state in
            if let index = state.stubs.firstIndex(where: { $0.key == key }) {
                state.stubs[index].url = url
            } else {
                state.stubs.append((url, key))
            }
        }
        if IPAddress(key.host) == nil, !resolver.knows(key.host) {
            resolver.resolve(key.host, to: [Self.documentationAddress(resolver.hosts.count)])
        }
        self.responses.stub(url, sequence: responses)
    }

    /// Every request the origin was sent, stubbed or not, in order: each URL
    /// names the host as the source URL did (never the address the guard
    /// pinned the connection to), with the headers the server sent.
    public var requests: [URLRequest] { state.withLock { $0.requests } }

    /// The requests that match `url` (scheme, host name, port, path and query).
    public func requests(for url: URL) -> [URLRequest] {
        let key = Key(url)
        return requests.filter { $0.url.flatMap(Key.init) == key }
    }

    /// Every load of a stubbed URL, in order: to release held responses
    /// or see which loads the server cancelled.
    public var tasks: [MockDataTask] { responses.tasks }

    /// Waits until the server requests `url` (any stubbed URL when `nil`)
    /// and returns that load: with a held response, the test then releases
    /// it (``MockDataTask/complete()``) or sees it cancelled.
    ///
    /// ```swift
    /// origin.stub(catURL, MockResponse.image(catJPEG).held())
    /// async let answer = client.execute(uri: path, method: .get)
    /// let load = await origin.waitForTask(for: catURL)
    /// load.complete()
    /// ```
    public func waitForTask(for url: URL? = nil) async -> MockDataTask {
        await responses.waitForTask(for: url.map(stubbedURL))
    }

    /// Records the request and answers it with the next scripted response
    /// of the stub it matches.
    ///
    /// - Throws: ``Unstubbed`` when no stub matches.
    public func load(_ request: URLRequest) async throws -> DataLoadingResponse {
        let named = Self.named(request)
        let match = state.withLock { state -> (url: URL?, stubbed: [URL]) in
            state.requests.append(named)
            let key = named.url.flatMap(Key.init)
            return (state.stubs.first { $0.key == key }?.url, state.stubs.map(\.url))
        }
        guard let url = match.url else { throw Unstubbed(url: named.url, stubbed: match.stubbed) }
        var stubbed = named
        stubbed.url = url
        return try await responses.load(stubbed)
    }

    /// The URL `url` was stubbed as, or `url` when it has no stub.
    private func stubbedURL(_ url: URL) -> URL {
        let key = Key(url)
        return state.withLock { $0.stubs.first { $0.key == key }?.url } ?? url
    }

    /// `request` with the host name its `Host` field carries in place of
    /// the address the guard pinned the URL to (and that field removed).
    static func named(_ request: URLRequest) -> URLRequest {
        guard let url = request.url, let host = url.host, IPAddress(host) != nil,
              let field = request.value(forHTTPHeaderField: "Host"),
              var components = URLComponents(url: url, resolvingAgainstBaseURL: false) else { return request }
        var name = Substring(field)
        if let colon = name.lastIndex(of: ":"), !name[name.index(after: colon)...].isEmpty,
           name[name.index(after: colon)...].allSatisfy(\.isNumber) {
            name = name[..<colon]
        }
        guard !name.isEmpty, IPAddress(String(name)) == nil else { return request }
        components.host = String(name)
        guard let named = components.url else { return request }
        var copy = request
        copy.url = named
        copy.setValue(nil, forHTTPHeaderField: "Host")
        return copy
    }

    /// The `index`th address of the documentation ranges (RFC 5737), which
    /// the guard treats as public and nothing ever answers at.
    static func documentationAddress(_ index: Int) -> IPAddress {
        let networks: [[UInt8]] = [[203, 0, 113], [198, 51, 100], [192, 0, 2]]
        let network = networks[(index / 254) % networks.count]
        return IPAddress(bytes: network + [UInt8(index % 254 + 1)])!
    }

    /// What a stub matches: the scheme, the host name (without case), the
    /// port (the scheme's default when none is written), the path and the query.
    struct Key: Hashable {
        let scheme: String
        let host: String
        let port: Int?
        let path: String
        let query: String?

        init?(_ url: URL) {
            guard let components = URLComponents(url: url, resolvingAgainstBaseURL: true),
                  let host = components.host, !host.isEmpty else { return nil }
            scheme = components.scheme?.lowercased() ?? ""
            self.host = MockHostResolver.key(host)
            port = components.port ?? ["http": 80, "https": 443][scheme]
            path = components.percentEncodedPath.isEmpty ? "/" : components.percentEncodedPath
            query = components.percentEncodedQuery
        }
    }
}
#endif
