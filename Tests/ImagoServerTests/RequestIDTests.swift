#if Server && os(Linux)
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import ImagoServer
import Testing

/// `ImageServerHeadersMiddleware`'s `X-Request-ID`: the client's when it is
/// a safe token, a new random one otherwise.
@Suite struct RequestIDTests {
    static let name = HTTPField.Name("X-Request-ID")!

    /// The ids of `count` answers, each asked with `given` as its `X-Request-ID` (none when `nil`).
    static func ids(count: Int, given: String? = nil) async throws -> [String] {
        let router = Router()
        router.add(middleware: ImageServerHeadersMiddleware())
        router.get("ping") { _, _ in "pong" }
        return try await Application(router: router).test(.router) { client in
            var ids: [String] = []
            for _ in 0..<count {
                let headers: HTTPFields = given.map { [name: $0] } ?? [:]
                let response = try await client.execute(uri: "/ping", method: .get, headers: headers)
                ids.append(try #require(response.headers[name]))
            }
            return ids
        }
    }

    @Test func aNewIDIs22Base64URLCharactersAndEachOneIsNew() async throws {
        let ids = try await Self.ids(count: 300)
        let alphabet = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
        #expect(ids.allSatisfy { $0.count == 22 && $0.allSatisfy(alphabet.contains) }, "\(ids.prefix(3))")
        #expect(Set(ids).count == ids.count)
        // Every position is random: over 300 ids, each takes many of the 64 characters.
        for position in 0..<22 {
            let seen = Set(ids.map { Array($0)[position] })
            #expect(seen.count > 40, "position \(position) took only \(seen.count) characters")
        }
    }

    @Test func aSafeIDFromTheClientIsKeptAndAnUnsafeOneReplaced() async throws {
        #expect(try await Self.ids(count: 1, given: "valid-id_123") == ["valid-id_123"])
        let replaced = try await Self.ids(count: 1, given: "not safe!")
        #expect(replaced.first?.count == 22)
        #expect(try await Self.ids(count: 1, given: String(repeating: "a", count: 101)).first?.count == 22, "over 100 characters")
    }
}
#endif
