#if Server && os(Linux)
import Foundation
import ChildProcesses
import HummingbirdTesting
import Imago
import ImagoAsyncHTTPClient
import ImagoServer
import ImagoCodecs
import ImagoTesting
import LoopbackServer
import Testing
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A result store shared by replicas: a render is written once, and another
/// server answers from the store without the source; stale, broken or
/// corrupt stores fall back to rendering.
@Suite struct ResultStoreTests {
    static func folder() -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("imago-results-\(UUID().uuidString)")
    }

    /// The files a folder store holds.
    static func files(in folder: URL) -> [URL] {
        (FileManager.default.enumerator(at: folder, includingPropertiesForKeys: nil)?.compactMap { $0 as? URL } ?? [])
            .filter { !$0.hasDirectoryPath && !$0.lastPathComponent.hasPrefix(".") }
    }

    /// The inode number of `file` (a store write renames a new file into place).
    static func inode(_ file: URL) -> Int? {
        (try? FileManager.default.attributesOfItem(atPath: file.path))?[.systemFileNumber] as? Int
    }

    /// A store that passes everything on to `wrapped` and records each
    /// write's key once the write has ended, kept or failed: the server
    /// writes after its answer, and a test awaits that write.
    struct RecordingStore: ResultStore {
        let wrapped: any ResultStore
        let writes = Recorder<String>()

        func result(for key: String) async throws -> StoredResult? { try await wrapped.result(for: key) }

        func store(_ result: StoredResult, for key: String) async throws {
            defer { writes.record(key) }
            try await wrapped.store(result, for: key)
        }
    }

    @Test func aSecondReplicaAnswersFromTheStore() async throws {
        let origin = try await Fixture.origin()
        let directory = Self.folder()
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = RecordingStore(wrapped: try FileResultStore(directory: directory))
        let path = Fixture.path("rs:fit:50:50", origin.url("/a.jpg"), extension: "webp")
        let first = try await Fixture.withServer(Fixture.configuration { $0.resultStore = store }) { client, _ in
            let response = try await client.execute(uri: path, method: .get)
            #expect(response.status == .ok)
            return response
        }
        await store.writes.waitForValues(1)
        #expect(Self.files(in: directory).count == 1)
        try await Fixture.withServer(Fixture.configuration { $0.resultStore = store }) { client, server in
            let second = try await client.execute(uri: path, method: .get)
            #expect(second.status == .ok)
            #expect(second.data == first.data)
            #expect(second.header("ETag") == first.header("ETag"))
            #expect(second.header("Content-Type") == "image/webp")
            #expect(server.decodeCount == 0, "answered from the store")
        }
        #expect(origin.requestCount(for: "/a.jpg") == 1)
    }

    @Test func staleCorruptOrBrokenStoresAreMissesNotErrors() async throws {
        let origin = try await Fixture.origin()
        let directory = Self.folder()
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = RecordingStore(wrapped: try FileResultStore(directory: directory))
        let path = Fixture.path("w:30", origin.url("/a.png"))
        // A time to live of 0: every stored result is stale. Each pass waits
        // for its own write (a new file renamed into place, so a new inode):
        // a write still in flight would otherwise replace the corrupt object
        // written below.
        var written: Int?
        for pass in 1...2 {
            try await Fixture.withServer(Fixture.configuration { $0.resultStore = store; $0.timeToLive = 0 }) { client, _ in
                let response = try await client.execute(uri: path, method: .get)
                #expect(response.status == .ok)
            }
            await store.writes.waitForValues(pass)
            let before = written
            written = Self.files(in: directory).first.flatMap(Self.inode)
            #expect(written != nil && written != before, "pass \(pass) wrote a new file")
        }
        #expect(origin.requestCount(for: "/a.png") == 2)
        // A corrupt object: rendered again, and replaced whole.
        let file = try #require(Self.files(in: directory).first)
        try Data("imago-result 1 image/png \"x\" 0 999\ncut".utf8).write(to: file)
        try await Fixture.withServer(Fixture.configuration { $0.resultStore = store }) { client, server in
            let response = try await client.execute(uri: path, method: .get)
            #expect(response.status == .ok)
            #expect(server.decodeCount == 1)
        }
        await store.writes.waitForValues(3)
        #expect((try? Data(contentsOf: file).count) ?? 0 > 100, "the render replaced the corrupt object")
        // A broken store (its folder is now a file): every request still answered.
        try FileManager.default.removeItem(at: directory)
        try Data("not a folder".utf8).write(to: directory)
        try await Fixture.withServer(Fixture.configuration { $0.resultStore = store }) { client, _ in
            let again = try await client.execute(uri: path, method: .get)
            #expect(again.status == .ok)
            let other = try await client.execute(uri: Fixture.path("w:31", origin.url("/a.png")), method: .get)
            #expect(other.status == .ok)
        }
        try? FileManager.default.removeItem(at: directory)
    }

    @Test func anS3StoreIsSharedToo() async throws {
        let moto = try await S3Tests.Moto()
        #expect(try await S3Tests.put(moto.endpoint.appendingPathComponent("results")) == 200)
        let origin = try await Fixture.origin()
        let loader = S3DataLoader(configuration: .init(endpoint: moto.endpoint, credentials: S3Tests.credentials),
                                  transport: AsyncHTTPClientDataLoader())
        let store = RecordingStore(wrapped: S3ResultStore(bucket: "results", prefix: "/renders/", loader: loader))
        let path = Fixture.path("rs:fit:40:40", origin.url("/a.jpg"))
        let first = try await Fixture.withServer(Fixture.configuration { $0.resultStore = store }) { client, _ in
            try await client.execute(uri: path, method: .get)
        }
        #expect(first.status == .ok)
        await store.writes.waitForValues(1)
        // Listing the bucket through moto: one object under the prefix.
        let (data, _) = try await AsyncHTTPClientDataLoader().data(for: URLRequest(url: moto.endpoint.appendingPathComponent("results")))
        let listing = String(decoding: data, as: UTF8.self)
        let range = try #require(listing.range(of: "<Key>renders/"), "\(listing)")
        let key = String(listing[range.upperBound...].prefix(64))
        #expect(key.count == 64)
        try await Fixture.withServer(Fixture.configuration { $0.resultStore = store }) { client, server in
            let second = try await client.execute(uri: path, method: .get)
            #expect(second.data == first.data)
            #expect(second.header("ETag") == first.header("ETag"))
            #expect(server.decodeCount == 0)
        }
        #expect(origin.requestCount(for: "/a.jpg") == 1)
    }

    /// A store that never answers (a hung connection that ignores cancellation).
    struct HangingStore: ResultStore {
        /// Each call, as it starts: "result" or "store".
        let calls = Recorder<String>()
        func result(for key: String) async throws -> StoredResult? { try await hang("result") }
        func store(_ result: StoredResult, for key: String) async throws { try await hang("store") }
        private func hang(_ call: String) async throws -> Never {
            calls.record(call)
            await withCheckedContinuation { (_: CheckedContinuation<Void, Never>) in }
            fatalError("never resumed")
        }
    }

    /// (The time limit catches a hang, not a slow machine: under the thread
    /// sanitizer beside the process-spawning suites, one minute was not enough.)
    @Test(.timeLimit(.minutes(10))) func aHangingStoreIsAMissAfterItsTimeout() async throws {
        let origin = try await Fixture.origin()
        let store = HangingStore()
        try await Fixture.withServer(Fixture.configuration { $0.resultStore = store; $0.resultStoreTimeout = 0.2 }) { client, server in
            let response = try await client.execute(uri: Fixture.path("rs:fit:20:20", origin.url("/a.png")), method: .get)
            #expect(response.status == .ok)
            #expect(try response.image().width == 20)
            #expect(server.decodeCount == 1)
        }
        // The lookup, then the write (after the answer).
        #expect(await store.calls.waitForValues(2) == ["result", "store"])
    }

    @Test func temporaryFilesACrashLeftAreDeletedOnceAnHourOld() throws {
        let directory = Self.folder()
        defer { try? FileManager.default.removeItem(at: directory) }
        let shard = directory.appendingPathComponent("ab")
        try FileManager.default.createDirectory(at: shard, withIntermediateDirectories: true)
        let abandoned = shard.appendingPathComponent(".abcd.\(UUID().uuidString)")
        let live = shard.appendingPathComponent(".abce.\(UUID().uuidString)")
        let kept = shard.appendingPathComponent("ab" + String(repeating: "0", count: 62))
        for file in [abandoned, live, kept] { try Data("x".utf8).write(to: file) }
        try FileManager.default.setAttributes([.modificationDate: Date().addingTimeInterval(-7200)], ofItemAtPath: abandoned.path)
        try FileManager.default.setAttributes([.modificationDate: Date().addingTimeInterval(-7200)], ofItemAtPath: kept.path)
        _ = try FileResultStore(directory: directory)
        #expect(!FileManager.default.fileExists(atPath: abandoned.path))
        #expect(FileManager.default.fileExists(atPath: live.path), "a writer may still be renaming it")
        #expect(FileManager.default.fileExists(atPath: kept.path), "results are not temporary files")
    }

    #if os(Linux)
    /// A store on a file system with no room: every client still gets its
    /// image, and no partial or temporary file stays behind.
    @Test func aFullDiskCostsNoAnswerAndLeavesNoPartialFile() async throws {
        let directory = Self.folder()
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        // A 64 KiB tmpfs (the tests run as root in CI, as ip netns does).
        let mount = Process()
        mount.executableURL = URL(fileURLWithPath: "/bin/mount")
        mount.arguments = ["-t", "tmpfs", "-o", "size=64k", "tmpfs", directory.path]
        try mount.startTiedToThisProcess()
        mount.waitUntilExit()
        try #require(mount.terminationStatus == 0, "mounting a small tmpfs needs root")
        defer {
            let unmount = Process()
            unmount.executableURL = URL(fileURLWithPath: "/bin/umount")
            // Lazily: a store's file still open for a moment must not keep
            // the mount (and the folder under it) behind.
            unmount.arguments = ["-l", directory.path]
            try? unmount.startTiedToThisProcess()
            unmount.waitUntilExit()
        }
        // Nearly full: 60 KiB taken by another file.
        try Data(count: 60 * 1024).write(to: directory.appendingPathComponent("filler"))
        let store = RecordingStore(wrapped: try FileResultStore(directory: directory.appendingPathComponent("results")))
        // Noise: its PNG cannot fit in the room left.
        var generator = SystemRandomNumberGenerator()
        let noise = Image(width: 400, height: 400, pixels: (0..<(400 * 400 * 4)).map { _ in UInt8.random(in: 0...255, using: &generator) })
        let origin = try await Fixture.origin(["/big.png": .ok(try ImageEncoders.png().encode(noise), contentType: "image/png")])
        let path = Fixture.path("rs:fit:300:300", origin.url("/big.png"))
        let renders = try await Fixture.withServer(Fixture.configuration { $0.resultStore = store }) { client, server in
            for _ in 0..<2 {
                let response = try await client.execute(uri: path, method: .get)
                #expect(response.status == .ok)
                #expect(try response.image().width == 300)
            }
            return server.decodeCount
        }
        // Each render's write has ended, and failed (the lookup found nothing either time it was made).
        #expect(renders >= 1)
        await store.writes.waitForValues(renders)
        let left = FileManager.default.enumerator(at: directory.appendingPathComponent("results"), includingPropertiesForKeys: nil)?
            .compactMap { $0 as? URL }.filter { !$0.hasDirectoryPath } ?? []
        #expect(left.isEmpty, "no partial result and no temporary file: \(left)")
        #expect(try await store.result(for: "anything") == nil)
    }
    #endif

    /// How a scripted S3 store misbehaves, per method.
    enum StoreFault: CaseIterable, Sendable {
        /// 500 to every request.
        case serverError
        /// A GET cut short (fewer bytes than its Content-Length), as an object
        /// deleted or replaced while it was read; PUTs reset before an answer.
        case cutShort
        /// A GET whose object is whole but whose metadata does not match it.
        case wrongMetadata
        /// A bucket that does not exist: S3's 404 NoSuchBucket to both.
        case noSuchBucket
    }

    static func faultyStore(_ fault: StoreFault) async throws -> LoopbackServer {
        try await LoopbackServer.start(handler: { request in
            let body = Fixture.png
            switch (fault, request.method) {
            case (.serverError, _):
                return .text("<Error><Code>InternalError</Code></Error>", status: 500, contentType: "application/xml")
            case (.cutShort, "GET"):
                return ServedResponse(headers: [("Content-Type", "image/png"), ("x-amz-meta-imago-etag", "\"x\""),
                                                ("x-amz-meta-imago-stored", "\(Date().timeIntervalSince1970)"),
                                                ("x-amz-meta-imago-length", "\(body.count)")],
                                      body: body, delivery: .truncated(afterBytes: body.count / 2))
            case (.cutShort, _):
                return ServedResponse(delivery: .resetBeforeHead)
            case (.wrongMetadata, "GET"):
                return ServedResponse(headers: [("Content-Type", "image/png"), ("x-amz-meta-imago-etag", "\"x\""),
                                                ("x-amz-meta-imago-stored", "\(Date().timeIntervalSince1970)"),
                                                ("x-amz-meta-imago-length", "\(body.count + 1)")], body: body)
            case (.wrongMetadata, _):
                return ServedResponse(status: 200)
            case (.noSuchBucket, _):
                return .text("<Error><Code>NoSuchBucket</Code></Error>", status: 404, contentType: "application/xml")
            }
        })
    }

    /// Every way an S3 store can fail costs the client nothing: each request
    /// is rendered and answered, and nothing the store sent is served.
    @Test(.timeLimit(.minutes(10)), arguments: StoreFault.allCases)
    func anS3StoreThatFailsIsAMissNotAnError(_ fault: StoreFault) async throws {
        let s3 = try await Self.faultyStore(fault)
        let origin = try await Fixture.origin()
        let loader = S3DataLoader(configuration: .init(endpoint: s3.baseURL, credentials: S3Tests.credentials),
                                  transport: AsyncHTTPClientDataLoader())
        let store = S3ResultStore(bucket: "results", prefix: "renders", loader: loader)
        let path = Fixture.path("rs:fit:30:30", origin.url("/a.jpg"), extension: "png")
        for round in 1...2 {
            // A server per round, as replicas: the output cache does not answer the second.
            try await Fixture.withServer(Fixture.configuration { $0.resultStore = store }) { client, server in
                let response = try await client.execute(uri: path, method: .get)
                #expect(response.status == .ok, "round \(round)")
                #expect(try response.image().width == 30)
                #expect(response.data != Fixture.png, "nothing from the store is served")
                #expect(server.decodeCount == 1)
            }
        }
        #expect(origin.requestCount(for: "/a.jpg") >= 1)
        #expect(s3.requests.contains { $0.method == "GET" } && s3.requests.contains { $0.method == "PUT" })
    }
}
#endif

#if Server && os(Linux)
import Imago

/// A source's caching headers travel with its render through a store, and a
/// hostile origin's oversized ones are dropped rather than failing the write.
@Suite struct StoredSourceHeadersTests {
    @Test func sourceHeadersRoundTripAndOversizedOnesAreDropped() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("imago-store-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = try FileResultStore(directory: folder)
        let headers = SourceCacheHeaders(etag: "\"v1\"", lastModified: "Wed, 21 Oct 2015 07:28:00 GMT", cacheControl: "max-age=60")
        try await store.store(StoredResult(data: Data([1, 2, 3]), contentType: "image/png", etag: "\"x\"", storedAt: Date(),
                                           sourceCacheHeaders: headers), for: "a")
        #expect(try await store.result(for: "a")?.sourceCacheHeaders == headers)
        let huge = SourceCacheHeaders(cacheControl: String(repeating: "a", count: 100_000))
        try await store.store(StoredResult(data: Data([4]), contentType: "image/png", etag: "\"y\"", storedAt: Date(),
                                           sourceCacheHeaders: huge), for: "b")
        let kept = try await store.result(for: "b")
        #expect(kept?.data == Data([4]) && kept?.sourceCacheHeaders == SourceCacheHeaders())
    }
}
#endif
