#if Server && os(Linux)
import FaultInjection
import Foundation
import HTTPTypes
import HummingbirdTesting
import Imago
import ImagoAsyncHTTPClient
import ImagoCodecs
import ImagoServer
import ImagoTesting
import LoopbackServer
import Testing

/// Every error status of the image server (``ImageServerError/Code``), with its JSON body, from a real origin.
@Suite struct ErrorStatusTests {
    /// Requests `path` and checks the status, the code and the headers every error carries.
    func expectError(_ client: any TestClientProtocol, _ path: String, status: HTTPResponse.Status, code: String,
                     sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let response = try await client.execute(uri: path, method: .get)
        #expect(response.status == status, "\(path): \(String(decoding: response.data, as: UTF8.self))", sourceLocation: sourceLocation)
        #expect(response.errorCode == code, sourceLocation: sourceLocation)
        #expect(response.header("Content-Type") == "application/json", sourceLocation: sourceLocation)
        #expect(response.header("Cache-Control") == "no-store", sourceLocation: sourceLocation)
    }

    /// imgproxy answers a malformed path or option 404 ("Invalid URL").
    @Test func malformedPathsAre404() async throws {
        let origin = try await Fixture.origin()
        let source = origin.url("/a.jpg")
        try await Fixture.withServer(Fixture.configuration()) { client, _ in
            for options in ["rs:fit:0:-1", "w:1000000000", "rs:stretch:10:10", "unknown:1", "q:101", "bl:1e9", "g:middle", "rs:fit:10:10:maybe"] {
                try await expectError(client, Fixture.path(options, source), status: .notFound, code: "bad_options")
            }
            try await expectError(client, Fixture.path("", source, extension: "tga"), status: .notFound, code: "bad_options")
            try await expectError(client, "/img/insecure/rs:fit:10:10/!!!not-base64!!!", status: .notFound, code: "bad_options")
            try await expectError(client, "/img/insecure/rs:fit:10:10/plain/", status: .notFound, code: "bad_options")
            try await expectError(client, "/img/insecure", status: .notFound, code: "bad_options")
        }
        #expect(origin.requests.isEmpty)
    }

    /// imgproxy answers a refused source 404 ("Invalid source URL").
    @Test func forbiddenSourcesAre404BeforeAnyConnection() async throws {
        let origin = try await Fixture.origin()
        try await Fixture.withServer(Fixture.configuration { $0.sourcePolicy.allowedHosts = ["images.example"] }) { client, _ in
            try await expectError(client, Fixture.path("w:10", origin.url("/a.jpg")), status: .notFound, code: "forbidden_source")
            try await expectError(client, Fixture.path("w:10", URL(string: "file:///etc/passwd")!), status: .notFound, code: "forbidden_source")
        }
        #expect(origin.requests.isEmpty)
    }

    @Test func sourceFailuresGetTheirStatuses() async throws {
        let corrupt = Data([0xFF, 0xD8, 0xFF, 0xE0]) + Data(repeating: 0x42, count: 200)
        let origin = try await Fixture.origin([
            "/missing.jpg": .text("gone", status: 404),
            "/gone.jpg": .text("gone", status: 410),
            "/page.html": .ok(Data("<html></html>".utf8), contentType: "text/html"),
            "/corrupt.jpg": .ok(corrupt, contentType: "image/jpeg"),
            "/huge.png": ServedResponse.pngBomb(),
            "/oversized.jpg": ServedResponse.oversized(),
            "/broken.jpg": .text("boom", status: 500),
            "/bomb.png": ServedResponse.gzipBomb(),
        ])
        let closed = try RefusingPort()
        let closedURL = closed.url("/a.jpg")
        try await Fixture.withServer(Fixture.configuration()) { client, _ in
            let cases: [(String, HTTPResponse.Status, String)] = [
                ("/missing.jpg", .notFound, "source_not_found"),
                ("/gone.jpg", .gone, "source_refused"),
                ("/page.html", .unprocessableContent, "source_not_an_image"),
                ("/corrupt.jpg", .unprocessableContent, "undecodable"),
                ("/huge.png", .unprocessableContent, "source_too_large"),
                ("/oversized.jpg", .unprocessableContent, "source_too_large"),
                ("/broken.jpg", .badGateway, "source_failed"),
                ("/bomb.png", .unprocessableContent, "source_too_large"),
            ]
            for (path, status, code) in cases {
                try await expectError(client, Fixture.path("w:10", origin.url(path)), status: status, code: code)
            }
            try await expectError(client, Fixture.path("w:10", closedURL), status: .notFound, code: "source_unreachable")
        }
        withExtendedLifetime(closed) {}   // the port stays reserved until here
    }

    /// Bytes that do not decode leave the server's disk cache (the next
    /// request downloads them again: the origin may have fixed them);
    /// bytes that decode stay.
    @Test func undecodableBytesLeaveTheDiskCache() async throws {
        let corrupt = Data([0xFF, 0xD8, 0xFF, 0xE0]) + Data(repeating: 0x42, count: 200)
        let origin = try await Fixture.origin(["/corrupt.jpg": .ok(corrupt, contentType: "image/jpeg")])
        let cache = InMemoryDataCache()
        try await Fixture.withServer(Fixture.configuration { $0.dataCache = cache }) { client, _ in
            for width in [10, 11] {
                try await expectError(client, Fixture.path("w:\(width)", origin.url("/corrupt.jpg")), status: .unprocessableContent, code: "undecodable")
                #expect(cache.keys.isEmpty)
            }
            for width in [10, 11] {
                let response = try await client.execute(uri: Fixture.path("w:\(width)", origin.url("/a.jpg")), method: .get)
                #expect(response.status == .ok)
            }
            #expect(cache.keys.count == 1)
        }
    }

    /// The same for an animation, decoded a frame at a time. (Its decoders
    /// are lenient, as browsers are, so the failure here is the pixel limit,
    /// which counts every frame: the first frame alone is within it.)
    @Test func anAnimationThatFailsToDecodeLeavesTheDiskCache() async throws {
        let info = try ImageDecoders.info(for: Fixture.gif)
        try #require(info.frameCount >= 3)
        let origin = try await Fixture.origin(["/long.gif": .ok(Fixture.gif, contentType: "image/gif")])
        let cache = InMemoryDataCache()
        let configuration = Fixture.configuration {
            $0.dataCache = cache
            $0.maximumSourcePixels = info.width * info.height * 2
            $0.maximumAnimationFrames = 100
        }
        try await Fixture.withServer(configuration) { client, _ in
            try await expectError(client, Fixture.path("w:10", origin.url("/long.gif")), status: .unprocessableContent, code: "source_too_large")
            #expect(cache.keys.isEmpty)
        }
    }

    @Test func aSlowSourceIs504() async throws {
        let origin = try await Fixture.origin([
            "/slow.jpg": ServedResponse.ok(Fixture.jpeg, contentType: "image/jpeg").delivered(.trickle(chunkSize: 1, interval: .milliseconds(200))),
        ])
        var loader = AsyncHTTPClientDataLoader.Configuration()
        loader.followsRedirects = false
        loader.totalTimeout = 0.5
        let transport = AsyncHTTPClientDataLoader(configuration: loader)
        try await Fixture.withServer(Fixture.configuration { $0.transport = transport }) { client, _ in
            try await expectError(client, Fixture.path("w:10", origin.url("/slow.jpg")), status: .gatewayTimeout, code: "source_timed_out")
        }
    }

    @Test func aFullQueueIs503WithRetryAfter() async throws {
        // A source that never ends holds the only place until the loader's
        // total timeout (15 s: the refused and the joining request must both
        // arrive before it, even on a loaded machine running the suite in
        // parallel under the thread sanitizer, where 6 s was once too short).
        let origin = try await Fixture.origin([
            "/endless.jpg": ServedResponse(headers: [("Content-Type", "image/jpeg")], body: Fixture.jpeg)
                .delivered(.endlessChunks(chunkSize: 256, interval: .milliseconds(50))),
        ])
        var loader = AsyncHTTPClientDataLoader.Configuration()
        loader.followsRedirects = false
        loader.totalTimeout = 15
        let transport = AsyncHTTPClientDataLoader(configuration: loader)
        let configuration = Fixture.configuration {
            $0.workers = 1
            $0.maximumQueue = 0
            $0.transport = transport
            $0.timeout = 60   // the source's own timeout (15 s) answers first: 504
        }
        try await Fixture.withServer(configuration, over: .live) { client, _ in
            try await ConcurrentClient.with(port: client.port, connections: 4) { concurrent in
                let endless = Fixture.path("w:10", origin.url("/endless.jpg"))
                async let first = concurrent.get(endless)
                for _ in 0..<500 where origin.requestCount(for: "/endless.jpg") == 0 { try await Task.sleep(for: .milliseconds(10)) }
                let refused = try await concurrent.get(Fixture.path("w:10", origin.url("/a.jpg")))
                #expect(refused.status == 429)
                #expect(refused.retryAfter == "1")
                #expect(refused.errorCode == "saturated")
                // The same image joins the job in progress instead of being refused.
                let joined = try await concurrent.get(endless)
                #expect(joined.status == 504)
                #expect(try await first.status == 504)
                // Once it is done, there is room again.
                let later = try await concurrent.get(Fixture.path("w:10", origin.url("/a.jpg")))
                #expect(later.status == 200)
            }
        }
        #expect(origin.requestCount(for: "/endless.jpg") == 1)
    }
}
#endif
