#if Server && os(Linux)
import Foundation
import ChildProcesses
import HummingbirdTesting
import Imago
import ImagoCodecs
import ImagoServer
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
            try manager.createSymbolicLink(atPath: root.appendingPathComponent("inner.png").path, withDestinationPath: "a.png")
            try manager.createSymbolicLink(at: root.appendingPathComponent("absolute.png"), withDestinationURL: root.appendingPathComponent("a.png"))
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
            #expect(try await get(client, "w:50", "local:///inner.png").status == .ok, "a relative link that stays inside")
            // The same file twice: one read, one render (the output cache answers the second).
            _ = try await get(client, "w:50", "local:///a.png")
            #expect(server.decodeCount == 3)
            for escape in ["local:///../outside.png", "local:///sub/%2e%2e/%2e%2e/outside.png", "local:///sub/..%2F..%2Foutside.png",
                           "local:///link.png", "local:///absolute.png", "local:////etc/passwd", "local://host/a.png", "local:///./a.png", "local:///sub//b.jpg"] {
                let response = try await get(client, "w:50", escape)
                #expect(response.status == .notFound, "\(escape)")
                #expect(response.errorCode == "forbidden_source", "\(escape)")
            }
            let missing = try await get(client, "w:50", "local:///missing.png")
            #expect(missing.status == .notFound)
            #expect(missing.errorCode == "source_not_found")
            // The same limits as any source.
            let large = try await get(client, "w:50", "local:///large.png")
            #expect(large.status == .unprocessableContent)
            let huge = try await get(client, "w:50", "local:///huge.gif")
            #expect(huge.status == .unprocessableContent)
            #expect(huge.errorCode == "source_too_large")
        }
    }

    /// A local file's own validators reach the answer, and a client that
    /// holds them gets a 304 with no render; a changed file a new render.
    @Test func aLocalFileIsRevalidatedByItsOwnValidators() async throws {
        let tree = try Tree()
        let file = tree.root.appendingPathComponent("a.png").path
        try await Fixture.withServer(Fixture.configuration { $0.sourcePolicy.localRoot = tree.root }) { client, server in
            let first = try await get(client, "w:40", "local:///a.png")
            let etag = try #require(first.header("ETag"))
            let lastModified = try #require(first.header("Last-Modified"))
            #expect(!etag.contains("sha256-"), "the file's own tag, not a hash of the answer")
            let byTag = try await client.execute(uri: "/img/insecure/w:41/plain/local:%2F%2F%2Fa.png", method: .get, headers: [.ifNoneMatch: etag])
            #expect(byTag.status == .notModified)
            let byDate = try await client.execute(uri: "/img/insecure/w:42/plain/local:%2F%2F%2Fa.png", method: .get,
                                                  headers: [.ifModifiedSince: lastModified])
            #expect(byDate.status == .notModified)
            #expect(server.decodeCount == 1, "no render for a 304")
            try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSinceNow: 60)],
                                                  ofItemAtPath: file)
            let changed = try await client.execute(uri: "/img/insecure/w:43/plain/local:%2F%2F%2Fa.png", method: .get, headers: [.ifNoneMatch: etag])
            #expect(changed.status == .ok)
            #expect(changed.header("ETag") != etag)
        }
        withExtendedLifetime(tree) {}
    }

    @Test func withoutALocalRootLocalSourcesAreRefused() async throws {
        let tree = try Tree()
        _ = tree
        try await Fixture.withServer(Fixture.configuration()) { client, _ in
            let response = try await get(client, "w:50", "local:///a.png")
            #expect(response.status == .notFound)
            #expect(response.errorCode == "forbidden_source")
        }
    }

    /// A FIFO would block the open until a writer came, a device would be
    /// read without end, a socket cannot be read: none is a source, and
    /// none holds the server.
    @Test func specialFilesAreRefusedAtOnceAndNeverRead() async throws {
        let tree = try Tree()
        let root = tree.root
        #expect(mkfifo(root.appendingPathComponent("fifo.png").path, 0o600) == 0)
        var specials = ["fifo.png", "socket.png", "folder.png"]
        try FileManager.default.createDirectory(at: root.appendingPathComponent("folder.png"), withIntermediateDirectories: false)
        let socketDescriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(socketDescriptor) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let socketPath = root.appendingPathComponent("socket.png").path
        withUnsafeMutableBytes(of: &address.sun_path) { buffer in
            socketPath.utf8CString.withUnsafeBytes { buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: $0.prefix(buffer.count - 1))) }
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(socketDescriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        #expect(bound == 0, "a Unix socket in the root")
        // /dev/zero's own device (major 1, minor 5), where the tests may make one (as root).
        if mknod(root.appendingPathComponent("zero.png").path, S_IFCHR | 0o600, dev_t(1 << 8 | 5)) == 0 { specials.append("zero.png") }
        let names = specials
        let configuration = Fixture.configuration {
            $0.sourcePolicy.localRoot = root
            $0.workers = 1
        }
        try await Fixture.withServer(configuration) { client, _ in
            // More requests than there are cores: a blocking open would hold every thread.
            for _ in 0..<4 {
                for name in names {
                    for options in ["w:50", "raw:1"] {
                        let response = try await get(client, options, "local:///\(name)")
                        #expect(response.status == .notFound, "\(name) \(options): \(response.status)")
                        #expect(response.errorCode == "forbidden_source", "\(name) \(options)")
                    }
                }
            }
            #expect(try await get(client, "w:50", "local:///a.png").status == .ok, "the server still serves")
        }
    }

    /// A loop swaps a folder of the path with a link that leads out of the
    /// root while the server is asked for a file beneath it: each answer is
    /// the inside image or a refusal, never the outside one.
    @Test func aFolderSwappedForALinkMidRequestNeverServesTheOutsideFile() async throws {
        let tree = try Tree()
        let manager = FileManager.default
        try manager.createDirectory(at: tree.root.appendingPathComponent("swapped"), withIntermediateDirectories: false)
        try manager.createDirectory(at: tree.base.appendingPathComponent("secret"), withIntermediateDirectories: false)
        try Fixture.png.write(to: tree.root.appendingPathComponent("swapped/image.png"))
        try Fixture.jpeg.write(to: tree.base.appendingPathComponent("secret/image.png"))
        try manager.createSymbolicLink(atPath: tree.root.appendingPathComponent("out").path, withDestinationPath: "../secret")
        let swapper = try NameSwapper(tree.root.appendingPathComponent("swapped"), tree.root.appendingPathComponent("out"))
        defer { swapper.stop() }
        let configuration = Fixture.configuration { $0.sourcePolicy.localRoot = tree.root }
        let (served, refused) = try await Fixture.withServer(configuration) { client, _ in
            var served = 0, refused = 0
            // raw: the file's bytes as they are, with no render to merge or cache.
            for _ in 0..<2_000 {
                let response = try await get(client, "raw:1", "local:///swapped/image.png")
                if response.status == .ok {
                    #expect(response.data == Fixture.png, "the outside file was served")
                    served += 1
                } else {
                    #expect(response.status == .notFound)
                    refused += 1
                }
            }
            return (served, refused)
        }
        #expect(swapper.isRunning, "the swap loop ran throughout")
        #expect(served > 0 && refused > 0, "the race was real: \(served) served, \(refused) refused")
    }
}
#endif
