import Foundation
import HummingbirdTesting
import Imago
import ImagoCodecs
@_spi(Testing) import ImagoServer
import Testing

/// `local:///PATH` sources under a local root: served through the same
/// pipeline and limits as HTTP sources, and never outside the root.
@Suite struct LocalSourceTests {
    /// A root with `a.png`, `sub/b.jpg`, a link to a file outside the root,
    /// a large file and a GIF whose header claims 60000x60000; the outside
    /// file beside the root.
    final class Tree {
        let base = FileManager.default.temporaryDirectory.appendingPathComponent("imago-local-\(UUID().uuidString)")
        var root: URL { base.appendingPathComponent("root") }

        init() throws {
            let manager = FileManager.default
            try manager.createDirectory(at: root.appendingPathComponent("sub"), withIntermediateDirectories: true)
            try Fixture.png.write(to: root.appendingPathComponent("a.png"))
            try Fixture.jpeg.write(to: root.appendingPathComponent("sub/b.jpg"))
            try Fixture.png.write(to: base.appendingPathComponent("outside.png"))
            try manager.createSymbolicLink(at: root.appendingPathComponent("link.png"), withDestinationURL: base.appendingPathComponent("outside.png"))
            try manager.createSymbolicLink(at: root.appendingPathComponent("inner.png"), withDestinationURL: root.appendingPathComponent("a.png"))
            try Data(count: 300_000).write(to: root.appendingPathComponent("large.png"))
            var huge = Fixture.gif
            huge.replaceSubrange(6..<10, with: [0x60, 0xEA, 0x60, 0xEA])
            try huge.write(to: root.appendingPathComponent("huge.gif"))
        }

        deinit { try? FileManager.default.removeItem(at: base) }
    }

    func get(_ client: any TestClientProtocol, _ options: String, _ source: String) async throws -> TestResponse {
        let encoded = source.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
        return try await client.execute(uri: "/img/insecure/\(options)/plain/\(encoded)", method: .get)
    }

    @Test func filesUnderTheRootAreServedAndNothingElse() async throws {
        let tree = try Tree()
        let configuration = Fixture.configuration {
            $0.sourcePolicy.localRoot = tree.root
            $0.maximumSourceBytes = 200_000
        }
        try await Fixture.withServer(configuration) { client, server in
            let png = try await get(client, "w:50", "local:///a.png")
            #expect(png.status == .ok)
            #expect(try png.image().width == 50)
            #expect(try await get(client, "w:50", "local:///sub/b.jpg").status == .ok)
            #expect(try await get(client, "w:50", "local:///inner.png").status == .ok, "a link that stays inside")
            // The same file twice: one read, one render (the output cache answers the second).
            _ = try await get(client, "w:50", "local:///a.png")
            #expect(server.decodeCount == 3)
            for escape in ["local:///../outside.png", "local:///sub/%2e%2e/%2e%2e/outside.png", "local:///sub/..%2F..%2Foutside.png",
                           "local:///link.png", "local:////etc/passwd", "local://host/a.png", "local:///./a.png", "local:///sub//b.jpg"] {
                let response = try await get(client, "w:50", escape)
                #expect(response.status == .forbidden, "\(escape)")
                #expect(response.errorCode == "forbidden_source", "\(escape)")
            }
            let missing = try await get(client, "w:50", "local:///missing.png")
            #expect(missing.status == .notFound)
            #expect(missing.errorCode == "source_not_found")
            // The same limits as any source.
            let large = try await get(client, "w:50", "local:///large.png")
            #expect(large.status == .contentTooLarge)
            let huge = try await get(client, "w:50", "local:///huge.gif")
            #expect(huge.status == .contentTooLarge)
            #expect(huge.errorCode == "source_too_large")
        }
    }

    @Test func withoutALocalRootLocalSourcesAreRefused() async throws {
        let tree = try Tree()
        _ = tree
        try await Fixture.withServer(Fixture.configuration()) { client, _ in
            let response = try await get(client, "w:50", "local:///a.png")
            #expect(response.status == .forbidden)
            #expect(response.errorCode == "forbidden_source")
        }
    }
}
