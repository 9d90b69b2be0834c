#if Server && os(Linux)
import AsyncHTTPClient
import Foundation
import HummingbirdTesting
@_spi(Testing) import Imago
import ImagoAsyncHTTPClient
import ImagoCodecs
import ImagoServer
import ImagoTesting
import LoopbackServer
import NIOCore
import S3Peer
import Testing
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `gs://BUCKET/KEY` sources: Google Cloud Storage through its
/// S3-compatible XML API, signed with Signature Version 4 from an HMAC key
/// for the region `auto`. moto stands in for storage.googleapis.com: once
/// ``MotoServer/requireSignatures()`` turns its authentication on, it checks
/// every signature as the XML API does.
@Suite struct GCSTests {
    static func configuration(_ endpoint: URL, _ credentials: AWSSignatureV4.Credentials?,
                              _ configure: (inout ImageServerConfiguration) -> Void = { _ in }) -> ImageServerConfiguration {
        Fixture.configuration {
            $0.gcs = .googleCloudStorage(endpoint: endpoint, credentials: credentials)
            configure(&$0)
        }
    }

    static func path(_ options: String, _ source: String) -> String {
        Fixture.path(options, URL(string: source)!)
    }

    // MARK: Addresses and signatures

    @Test func gsURLsArePathStyleAtTheXMLAPI() throws {
        let gcs = S3DataLoader(configuration: .googleCloudStorage(credentials: nil), transport: MockDataLoader(), service: .googleCloudStorage)
        #expect(gcs.configuration.region == "auto")
        #expect(try gcs.objectURL(for: URL(string: "gs://photos/2026/a%20b.jpg")!).absoluteString
                == "https://storage.googleapis.com/photos/2026/a%20b.jpg")
        // A GCS loader without an endpoint still goes to the XML API, path-style (S3's would go to AWS's virtual hosts).
        let bare = S3DataLoader(configuration: .init(), transport: MockDataLoader(), service: .googleCloudStorage)
        #expect(try bare.objectURL(for: URL(string: "gs://b/k.png")!).absoluteString == "https://storage.googleapis.com/b/k.png")
        // Its sources are gs:// only, with a bucket and a key.
        #expect(throws: ImageServerError.self) { try gcs.objectURL(for: URL(string: "s3://photos/a.jpg")!) }
        #expect(throws: ImageServerError.self) { try gcs.objectURL(for: URL(string: "gs://photos")!) }
        #expect(throws: ImageServerError.self) { try gcs.objectURL(for: URL(string: "gs://photos/a/../b.jpg")!) }
        // imgproxy's IMGPROXY_GCS_ENDPOINT names the JSON API; its client reads objects from the XML API at that host.
        let emulator = S3DataLoader.Configuration.googleCloudStorage(endpoint: URL(string: "http://127.0.0.1:4443/storage/v1/")!, credentials: nil)
        #expect(emulator.endpoint?.absoluteString == "http://127.0.0.1:4443")
        #expect(S3DataLoader.Service(scheme: "GS") == .googleCloudStorage)
        #expect(S3DataLoader.Service(scheme: "gcs") == nil)
    }

    /// The request a `gs://` source sends: the XML API's address, signed for
    /// GCS's host and the region `auto`. The signature is botocore's
    /// (`S3SigV4Auth(credentials, "s3", "auto")`, AWS's own SDK) for the same
    /// request and time; its canonical request is
    /// `GET\n/photos/2026/a%20b.jpg\n\nhost:storage.googleapis.com\nx-amz-content-sha256:e3b0...b855\nx-amz-date:20260102T030405Z\n\nhost;x-amz-content-sha256;x-amz-date\ne3b0...b855`,
    /// whose SHA-256 is `914155152e47fa4d6ba1d376d80daf1b1df7bacbdce1ae8473aa9274fb342dc1`.
    @Test func theSignatureIsBotocoresForGCSsHostAndRegionAuto() async throws {
        let transport = MockDataLoader()
        let objectURL = URL(string: "https://storage.googleapis.com/photos/2026/a%20b.jpg")!
        transport.stub(objectURL, .image(Fixture.png))
        let key = AWSSignatureV4.Credentials(accessKeyID: "GOOG1EEXAMPLEHMACACCESSID", secretAccessKey: "bGoa+V7g/yqDXvKRqq+JTFn4uQZbPiQJo4pf9RzJ")
        let date = ISO8601DateFormatter().date(from: "2026-01-02T03:04:05Z")!
        let loader = S3DataLoader(configuration: .googleCloudStorage(credentials: key), transport: transport, service: .googleCloudStorage, now: { date })
        let (data, response) = try await loader.data(for: URLRequest(url: URL(string: "gs://photos/2026/a%20b.jpg")!))
        #expect(data == Fixture.png)
        // Answered under the source's own URL, as every loader answers.
        #expect(response.url?.absoluteString == "gs://photos/2026/a%20b.jpg")
        let sent = try #require(transport.requests.first)
        #expect(sent.url == objectURL)
        #expect(sent.value(forHTTPHeaderField: "x-amz-date") == "20260102T030405Z")
        #expect(sent.value(forHTTPHeaderField: "x-amz-content-sha256") == AWSSignatureV4.emptyPayloadHash)
        #expect(sent.value(forHTTPHeaderField: "Authorization")
                == "AWS4-HMAC-SHA256 Credential=GOOG1EEXAMPLEHMACACCESSID/20260102/auto/s3/aws4_request, "
                + "SignedHeaders=host;x-amz-content-sha256;x-amz-date, Signature=74934cc72c1ccec37bdc98973d5c217da8d622b2b2cc904a5f8bcd515e3fab7d")
    }

    // MARK: A real S3-compatible server as the endpoint

    @Test func gsSourcesAreServedSignedWithTheHMACKey() async throws {
        let moto = try await MotoServer()
        #expect(try await moto.put("/photos") == 200)
        #expect(try await moto.put("/photos/2026/a%20b.jpg", Fixture.jpeg, contentType: "image/jpeg") == 200)
        #expect(try await moto.put("/photos/b.png", Fixture.png, contentType: "image/png") == 200)
        #expect(try await moto.put("/secret") == 200)
        #expect(try await moto.put("/secret/key.png", Fixture.png, contentType: "image/png") == 200)
        let created = try await moto.requireSignatures()
        let key = AWSSignatureV4.Credentials(accessKeyID: created.accessKeyID, secretAccessKey: created.secretAccessKey)
        try await Fixture.withServer(Self.configuration(moto.endpoint, key)) { client, server in
            let jpeg = try await client.execute(uri: Self.path("w:40", "gs://photos/2026/a%20b.jpg"), method: .get)
            #expect(jpeg.status == .ok, "\(String(decoding: jpeg.data.prefix(300), as: UTF8.self))")
            #expect(try jpeg.image().width == 40)
            let png = try await client.execute(uri: Self.path("rs:fit:30:30", "gs://photos/b.png"), method: .get)
            #expect(png.status == .ok)
            #expect(try png.image().width == 30)
            #expect(server.pipeline.statistics.downloads == 2)
            // Raw streams the object as it is stored.
            let raw = try await client.execute(uri: Self.path("raw:1", "gs://photos/b.png"), method: .get)
            #expect(raw.data == Fixture.png)
            let missing = try await client.execute(uri: Self.path("w:40", "gs://photos/missing.jpg"), method: .get)
            #expect(missing.status == .notFound)
            #expect(missing.errorCode == "source_not_found")
            let noBucket = try await client.execute(uri: Self.path("w:40", "gs://nobucket/a.jpg"), method: .get)
            #expect(noBucket.status == .notFound)
            #expect(noBucket.errorCode == "source_not_found")
            // A key that a normalising store would read in another bucket is never sent.
            for source in ["gs://photos/../secret/key.png", "gs://photos/%2E%2E/secret/key.png", "gs://photos/./b.png"] {
                let refused = try await client.execute(uri: Self.path("w:40", source), method: .get)
                #expect(refused.status == .notFound, "\(source)")
                #expect(refused.errorCode == "forbidden_source", "\(source)")
            }
            // GCS is not S3: with only GCS configured, s3:// sources stay off.
            let s3 = try await client.execute(uri: Self.path("w:40", "s3://photos/b.png"), method: .get)
            #expect(s3.errorCode == "forbidden_source")
        }
        // A wrong secret: the store's refusal, with its reason, as imgproxy answers an S3 refusal.
        let wrong = AWSSignatureV4.Credentials(accessKeyID: created.accessKeyID, secretAccessKey: "not-the-secret")
        try await Fixture.withServer(Self.configuration(moto.endpoint, wrong)) { client, _ in
            let refused = try await client.execute(uri: Self.path("w:40", "gs://photos/b.png"), method: .get)
            #expect(refused.status == .forbidden)
            #expect(refused.errorCode == "source_access_denied")
            let body = String(decoding: refused.data, as: UTF8.self)
            #expect(body.contains("GCS refused access to gs://photos/b.png") && body.contains("SignatureDoesNotMatch"), "\(body)")
        }
        // Without GCS configured, gs:// sources are refused before any request.
        try await Fixture.withServer(Fixture.configuration()) { client, _ in
            let refused = try await client.execute(uri: Self.path("w:40", "gs://photos/b.png"), method: .get)
            #expect(refused.status == .notFound)
            #expect(refused.errorCode == "forbidden_source")
            #expect(String(decoding: refused.data, as: UTF8.self).contains("GCS sources are off"))
        }
    }

    /// Without an HMAC key, requests go unsigned: a public object is read, a
    /// private one is the store's refusal, and nothing carries a signature.
    @Test func withoutAnHMACKeyRequestsGoUnsigned() async throws {
        let moto = try await MotoServer()
        #expect(try await moto.put("/public") == 200)
        #expect(try await moto.put("/public/open.png", Fixture.png, contentType: "image/png", headers: ["x-amz-acl": "public-read"]) == 200)
        #expect(try await moto.put("/public/closed.png", Fixture.png, contentType: "image/png") == 200)
        try await Fixture.withServer(Self.configuration(moto.endpoint, nil)) { client, _ in
            let open = try await client.execute(uri: Self.path("w:40", "gs://public/open.png"), method: .get)
            #expect(open.status == .ok)
            #expect(try open.image().width == 40)
            let closed = try await client.execute(uri: Self.path("w:40", "gs://public/closed.png"), method: .get)
            #expect(closed.status == .forbidden)
            #expect(closed.errorCode == "source_access_denied")
        }
        let store = try await LoopbackServer.start(routes: ["/public/open.png": .ok(Fixture.png, contentType: "image/png")])
        try await Fixture.withServer(Self.configuration(store.baseURL, nil)) { client, _ in
            let open = try await client.execute(uri: Self.path("w:40", "gs://public/open.png"), method: .get)
            #expect(open.status == .ok)
        }
        #expect(store.requestCount(for: "/public/open.png") == 1)
        #expect(store.requests.allSatisfy { $0.header("Authorization") == nil && $0.header("x-amz-date") == nil })
        try await store.stop()
    }

    /// An endpoint that answers garbage, endlessly, with 5xx, a redirect or
    /// not at all costs what it costs from S3: a bounded read of its error,
    /// two retries, no hop to another host, the request's deadline.
    @Test func aHostileEndpointIsBoundedAsS3Is() async throws {
        let elsewhere = try await LoopbackServer.start(routes: ["/x.png": .ok(Fixture.png, contentType: "image/png")])
        let noise = Data((0..<(1 << 20)).map { UInt8(truncatingIfNeeded: ($0 &* 2_654_435_761) >> 13) })
        let store = try await LoopbackServer.start(routes: [
            "/photos/noise.png": ServedResponse(status: 403, headers: [("Content-Type", "application/xml")], body: noise),
            "/photos/unclosed.png": .text("<Error><Code>" + String(repeating: "A", count: 100_000), status: 403, contentType: "application/xml"),
            "/photos/endless.png": ServedResponse(status: 403, headers: [("Content-Type", "application/xml")], body: Data("<Error>".utf8))
                .delivered(.endlessChunks(chunkSize: 4096, interval: .milliseconds(1))),
            "/photos/flaky.png": .text("<Error><Code>InternalError</Code></Error>", status: 503, contentType: "application/xml"),
            "/photos/moved.png": .redirect(to: elsewhere.url("/x.png").absoluteString, status: 302),
            "/photos/html.png": .text("<html>not an image</html>", status: 200, contentType: "text/html"),
            "/photos/slow.png": ServedResponse(status: 200, headers: [("Content-Type", "image/png")], body: Fixture.png)
                .delivered(.trickle(chunkSize: 1, interval: .milliseconds(500))),
        ])
        let key = AWSSignatureV4.Credentials(accessKeyID: "GOOG1EEXAMPLE", secretAccessKey: "secret")
        try await Fixture.withServer(Self.configuration(store.baseURL, key)) { client, _ in
            for name in ["noise", "unclosed", "endless"] {
                let refused = try await client.execute(uri: Self.path("w:40", "gs://photos/\(name).png"), method: .get)
                #expect(refused.status == .forbidden, "\(name)")
                #expect(refused.errorCode == "source_access_denied", "\(name)")
                // At most 16 KB of the body is read, and 300 characters of it kept.
                #expect(refused.data.count < 2_000, "\(name): \(refused.data.count) bytes")
            }
            let flaky = try await client.execute(uri: Self.path("w:40", "gs://photos/flaky.png"), method: .get)
            #expect(flaky.status == .badGateway)
            // A redirect is the store's failure (as any status but 2xx, 403 and 404), not a hop.
            let moved = try await client.execute(uri: Self.path("w:40", "gs://photos/moved.png"), method: .get)
            #expect(moved.status == .badGateway)
            #expect(moved.errorCode == "source_failed")
            let html = try await client.execute(uri: Self.path("w:40", "gs://photos/html.png"), method: .get)
            #expect(html.status == .unprocessableContent)
            #expect(html.errorCode == "source_not_an_image")
        }
        // A store that trickles its answer is cut at the request's deadline.
        try await Fixture.withServer(Self.configuration(store.baseURL, key) { $0.timeout = 2 }) { client, _ in
            let started = ContinuousClock.now
            let slow = try await client.execute(uri: Self.path("w:40", "gs://photos/slow.png"), method: .get)
            #expect(slow.status == .serviceUnavailable)
            #expect(slow.errorCode == "timeout")
            #expect(ContinuousClock.now - started < .seconds(30))
        }
        #expect(store.requestCount(for: "/photos/flaky.png") == 3, "the first try and two retries")
        #expect(store.requestCount(for: "/photos/moved.png") == 1)
        #expect(elsewhere.requests.isEmpty, "a redirect from the store is not followed")
        // Every request was signed with the HMAC key for the region auto.
        #expect(!store.requests.isEmpty)
        #expect(store.requests.allSatisfy { request in
            let authorization = request.header("Authorization") ?? ""
            return authorization.hasPrefix("AWS4-HMAC-SHA256 Credential=GOOG1EEXAMPLE/") && authorization.contains("/auto/s3/aws4_request,")
        })
        try await store.stop()
        try await elsewhere.stop()
    }

    // MARK: The result store

    /// `--result-store gs://BUCKET/PREFIX`: the S3 result store through the
    /// GCS loader, its PUTs signed for the region auto and checked by moto.
    @Test func aGCSResultStoreIsShared() async throws {
        let moto = try await MotoServer()
        #expect(try await moto.put("/results") == 200)
        let created = try await moto.requireSignatures()
        let key = AWSSignatureV4.Credentials(accessKeyID: created.accessKeyID, secretAccessKey: created.secretAccessKey)
        let origin = try await Fixture.origin()
        let loader = S3DataLoader(configuration: .googleCloudStorage(endpoint: moto.endpoint, credentials: key),
                                  transport: AsyncHTTPClientDataLoader(), service: .googleCloudStorage)
        let store = S3ResultStore(bucket: "results", prefix: "renders", loader: loader)
        let path = Fixture.path("rs:fit:40:40", origin.url("/a.jpg"))
        let first = try await Fixture.withServer(Fixture.configuration { $0.resultStore = store }) { client, _ in
            try await client.execute(uri: path, method: .get)
        }
        #expect(first.status == .ok)
        // The write happens after the answer: the bucket's listing, signed, until it holds the object.
        let listing = moto.endpoint.appendingPathComponent("results")
        let signer = AWSSignatureV4(credentials: key, region: "auto", service: "s3")
        let found: String? = try await { () async throws -> String? in
            for _ in 0..<500 {
                var request = URLRequest(url: listing)
                for (name, value) in signer.signedHeaders(method: "GET", url: listing, headers: [:], payloadHash: AWSSignatureV4.emptyPayloadHash, date: Date())
                where name != "host" {
                    request.setValue(value, forHTTPHeaderField: name)
                }
                let (data, _) = try await AsyncHTTPClientDataLoader().data(for: request)
                let text = String(decoding: data, as: UTF8.self)
                if let range = text.range(of: "<Key>renders/") { return String(text[range.upperBound...].prefix(64)) }
                try await Task.sleep(for: .milliseconds(10))
            }
            return nil
        }()
        let object = try #require(found)
        #expect(object.count == 64)
        try await Fixture.withServer(Fixture.configuration { $0.resultStore = store }) { client, server in
            let second = try await client.execute(uri: path, method: .get)
            #expect(second.data == first.data)
            #expect(second.header("ETag") == first.header("ETag"))
            #expect(server.decodeCount == 0, "answered from the store")
        }
        #expect(origin.requestCount(for: "/a.jpg") == 1)
        try await origin.stop()
    }
}
#endif
