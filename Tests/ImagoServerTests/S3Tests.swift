#if Server && os(Linux)
import AsyncHTTPClient
import Foundation
import ChildProcesses
import HummingbirdTesting
@_spi(Testing) import Imago
import ImagoAsyncHTTPClient
import ImagoCodecs
import ImagoServer
import LoopbackServer
import NIOCore
import S3Peer
import Testing
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// AWS Signature Version 4 against AWS's published vectors, and `s3://`
/// sources against a real S3-compatible server (moto, from PyPI, started
/// here on loopback).
@Suite struct S3Tests {
    static func date(_ text: String) -> Date {
        ISO8601DateFormatter().date(from: text)!
    }

    // MARK: Signature Version 4

    /// AWS's Signature Version 4 test suite, `get-vanilla`.
    @Test func theTestSuitesVanillaGET() throws {
        let signer = AWSSignatureV4(credentials: .init(accessKeyID: "AKIDEXAMPLE", secretAccessKey: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"),
                                    region: "us-east-1", service: "service")
        let url = URL(string: "https://example.amazonaws.com/")!
        let headers = signer.signedHeaders(method: "GET", url: url, headers: [:], payloadHash: AWSSignatureV4.emptyPayloadHash,
                                           date: Self.date("2015-08-30T12:36:00Z"))
        #expect(headers["x-amz-date"] == "20150830T123600Z")
        #expect(headers["authorization"] == "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, "
                + "SignedHeaders=host;x-amz-date, Signature=5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31")
    }

    /// The S3 documentation's example: GET /test.txt from examplebucket with a Range.
    @Test func theS3DocumentationsGETObjectExample() throws {
        let signer = AWSSignatureV4(credentials: .init(accessKeyID: "AKIAIOSFODNN7EXAMPLE", secretAccessKey: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"),
                                    region: "us-east-1", service: "s3")
        let url = URL(string: "https://examplebucket.s3.amazonaws.com/test.txt")!
        let headers = signer.signedHeaders(method: "GET", url: url, headers: ["Range": "bytes=0-9"], payloadHash: AWSSignatureV4.emptyPayloadHash,
                                           date: Self.date("2013-05-24T00:00:00Z"))
        #expect(headers["authorization"] == "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request, "
                + "SignedHeaders=host;range;x-amz-content-sha256;x-amz-date, Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41")
        #expect(headers["x-amz-content-sha256"] == AWSSignatureV4.emptyPayloadHash)
    }

    @Test func aSessionTokenIsSentAndSigned() {
        let signer = AWSSignatureV4(credentials: .init(accessKeyID: "AKID", secretAccessKey: "secret", sessionToken: "TOKEN"), region: "eu-west-1", service: "s3")
        let headers = signer.signedHeaders(method: "GET", url: URL(string: "http://127.0.0.1:9000/b/k")!, headers: [:],
                                           payloadHash: AWSSignatureV4.emptyPayloadHash, date: Self.date("2026-01-01T00:00:00Z"))
        #expect(headers["x-amz-security-token"] == "TOKEN")
        #expect(headers["host"] == "127.0.0.1:9000")
        #expect(headers["authorization"]?.contains("SignedHeaders=host;x-amz-content-sha256;x-amz-date;x-amz-security-token,") == true)
        #expect(AWSSignatureV4.Credentials.fromEnvironment(["AWS_ACCESS_KEY_ID": "a", "AWS_SECRET_ACCESS_KEY": "b", "AWS_SESSION_TOKEN": "c"])
                == .init(accessKeyID: "a", secretAccessKey: "b", sessionToken: "c"))
        #expect(AWSSignatureV4.Credentials.fromEnvironment(["AWS_ACCESS_KEY_ID": "a"]) == nil)
    }

    @Test func objectURLsArePathStyleWithAnEndpoint() throws {
        let withEndpoint = S3DataLoader(configuration: .init(endpoint: URL(string: "http://127.0.0.1:9000")!), transport: FileDataLoader())
        #expect(try withEndpoint.objectURL(for: URL(string: "s3://photos/2026/a%20b.jpg")!).absoluteString == "http://127.0.0.1:9000/photos/2026/a%20b.jpg")
        let aws = S3DataLoader(configuration: .init(region: "eu-west-1"), transport: FileDataLoader())
        #expect(try aws.objectURL(for: URL(string: "s3://photos/a.jpg")!).absoluteString == "https://photos.s3.eu-west-1.amazonaws.com/a.jpg")
        #expect(throws: ImageServerError.self) { try aws.objectURL(for: URL(string: "s3://photos")!) }
        // A version after the separator: S3's versionId (encoded), GCS's generation (a positive number, else none).
        #expect(try withEndpoint.objectURL(for: URL(string: "s3://photos/a.jpg?3/L4kqtJl+v")!).absoluteString
                == "http://127.0.0.1:9000/photos/a.jpg?versionId=3%2FL4kqtJl%2Bv")
        let gcs = S3DataLoader(configuration: .googleCloudStorage(credentials: nil), transport: FileDataLoader(), service: .googleCloudStorage)
        #expect(try gcs.objectURL(for: URL(string: "gs://photos/a.jpg?1700000000000001")!).absoluteString
                == "https://storage.googleapis.com/photos/a.jpg?generation=1700000000000001")
        #expect(try gcs.objectURL(for: URL(string: "gs://photos/a.jpg?latest")!).absoluteString == "https://storage.googleapis.com/photos/a.jpg")
    }

    // MARK: A real S3-compatible server

    /// moto's server on a free loopback port, stopped with the returned object.
    /// moto, shared with the tools' tests.
    typealias Moto = MotoServer

    static let credentials = AWSSignatureV4.Credentials(accessKeyID: "testing", secretAccessKey: "testing")

    /// A signed PUT (a bucket, or an object) to `url`.
    static func put(_ url: URL, _ body: Data = Data(), contentType: String? = nil) async throws -> Int {
        let signer = AWSSignatureV4(credentials: credentials, region: "us-east-1", service: "s3")
        let hash = AWSSignatureV4.payloadHash(of: body)
        var request = HTTPClientRequest(url: url.absoluteString)
        request.method = .PUT
        request.body = .bytes(ByteBuffer(bytes: body))
        var extra: [String: String] = [:]
        if let contentType { extra["Content-Type"] = contentType }
        for (name, value) in signer.signedHeaders(method: "PUT", url: url, headers: extra, payloadHash: hash, date: Date()) where name != "host" {
            request.headers.replaceOrAdd(name: name, value: value)
        }
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(30))
        _ = try await response.body.collect(upTo: 1 << 20)
        return Int(response.status.code)
    }

    @Test func s3SourcesAreServedFromARealS3CompatibleServer() async throws {
        let moto = try await Moto()
        #expect(try await Self.put(moto.endpoint.appendingPathComponent("photos")) == 200)
        #expect(try await Self.put(URL(string: "\(moto.endpoint)/photos/2026/a%20b.jpg")!, Fixture.jpeg, contentType: "image/jpeg") == 200)
        #expect(try await Self.put(URL(string: "\(moto.endpoint)/photos/b.png")!, Fixture.png, contentType: "image/png") == 200)
        let configuration = Fixture.configuration {
            $0.s3 = S3DataLoader.Configuration(endpoint: moto.endpoint, region: "us-east-1", credentials: Self.credentials)
        }
        try await Fixture.withServer(configuration) { client, server in
            let jpeg = try await client.execute(uri: Fixture.path("w:40", URL(string: "s3://photos/2026/a%20b.jpg")!), method: .get)
            #expect(jpeg.status == .ok, "\(String(decoding: jpeg.data.prefix(300), as: UTF8.self))")
            #expect(try jpeg.image().width == 40)
            let png = try await client.execute(uri: Fixture.path("w:40", URL(string: "s3://photos/b.png")!), method: .get)
            #expect(png.status == .ok)
            // The same object again: one download (the output cache, then the data stage, merge the rest).
            _ = try await client.execute(uri: Fixture.path("w:40", URL(string: "s3://photos/b.png")!), method: .get)
            #expect(server.pipeline.statistics.downloads == 2)
            let missing = try await client.execute(uri: Fixture.path("w:40", URL(string: "s3://photos/missing.jpg")!), method: .get)
            #expect(missing.status == .notFound)
            #expect(missing.errorCode == "source_not_found")
            let noBucket = try await client.execute(uri: Fixture.path("w:40", URL(string: "s3://nobucket/a.jpg")!), method: .get)
            #expect(noBucket.status == .notFound)
            // Raw streams from S3 too.
            let raw = try await client.execute(uri: Fixture.path("raw:1", URL(string: "s3://photos/b.png")!), method: .get)
            #expect(raw.data == Fixture.png)
        }
        // Without S3 configured, s3:// sources are refused.
        try await Fixture.withServer(Fixture.configuration()) { client, _ in
            let refused = try await client.execute(uri: Fixture.path("w:40", URL(string: "s3://photos/b.png")!), method: .get)
            #expect(refused.status == .notFound)
            #expect(refused.errorCode == "forbidden_source")
        }
    }

    /// A signed PUT that answers the object's version (`x-amz-version-id`).
    static func putVersion(_ url: URL, _ body: Data, contentType: String) async throws -> String? {
        let signer = AWSSignatureV4(credentials: credentials, region: "us-east-1", service: "s3")
        var request = HTTPClientRequest(url: url.absoluteString)
        request.method = .PUT
        request.body = .bytes(ByteBuffer(bytes: body))
        for (name, value) in signer.signedHeaders(method: "PUT", url: url, headers: ["Content-Type": contentType],
                                                  payloadHash: AWSSignatureV4.payloadHash(of: body), date: Date()) where name != "host" {
            request.headers.replaceOrAdd(name: name, value: value)
        }
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(30))
        _ = try await response.body.collect(upTo: 1 << 20)
        return response.headers.first(name: "x-amz-version-id")
    }

    /// imgproxy's bucket lists (`IMGPROXY_S3_ALLOWED_BUCKETS`,
    /// `_DENIED_BUCKETS`) and object versions after the query separator
    /// (`s3://BUCKET/KEY?VERSION`; `IMGPROXY_SOURCE_URL_QUERY_SEPARATOR`).
    @Test func bucketListsAndObjectVersions() async throws {
        let moto = try await Moto()
        #expect(try await Self.put(moto.endpoint.appendingPathComponent("photos")) == 200)
        #expect(try await Self.put(moto.endpoint.appendingPathComponent("private")) == 200)
        let versioning = Data("<VersioningConfiguration><Status>Enabled</Status></VersioningConfiguration>".utf8)
        #expect(try await Self.put(URL(string: "\(moto.endpoint)/photos?versioning")!, versioning) == 200)
        let object = URL(string: "\(moto.endpoint)/photos/a.png")!
        let first = try #require(try await Self.putVersion(object, Fixture.png, contentType: "image/png"))
        let second = try #require(try await Self.putVersion(object, Fixture.jpeg, contentType: "image/jpeg"))
        #expect(first != second)
        #expect(try await Self.put(URL(string: "\(moto.endpoint)/private/a.png")!, Fixture.png, contentType: "image/png") == 200)
        func served(_ configure: @escaping (inout S3DataLoader.Configuration) -> Void, _ sources: [String]) async throws -> [(Int, String?, String?)] {
            var store = S3DataLoader.Configuration(endpoint: moto.endpoint, region: "us-east-1", credentials: Self.credentials)
            configure(&store)
            let configuration = Fixture.configuration { $0.s3 = store }
            return try await Fixture.withServer(configuration) { client, _ in
                var answers: [(Int, String?, String?)] = []
                for source in sources {
                    let response = try await client.execute(uri: Fixture.path("w:40", URL(string: source)!), method: .get)
                    answers.append((Int(response.status.code), response.header("Content-Type"), response.errorCode))
                }
                return answers
            }
        }
        // The latest version, the first one by its id, the second by its id.
        let versions = try await served({ _ in }, ["s3://photos/a.png", "s3://photos/a.png?\(first)", "s3://photos/a.png?\(second)"])
        #expect(versions.map(\.1) == ["image/jpeg", "image/png", "image/jpeg"], "\(versions)")
        // With no separator the query is part of the key, which does not exist.
        let noSeparator = try await served({ $0.versionSeparator = "" }, ["s3://photos/a.png?\(first)"])
        #expect(noSeparator.map(\.0) == [404] && noSeparator.first?.2 == "source_not_found", "\(noSeparator)")
        // A separator of one's own.
        let atSign = try await served({ $0.versionSeparator = "@" }, ["s3://photos/a.png@\(first)"])
        #expect(atSign.map(\.1) == ["image/png"], "\(atSign)")
        // Only the allowed buckets; never the denied ones.
        let allowed = try await served({ $0.allowedBuckets = ["photos"] }, ["s3://photos/a.png", "s3://private/a.png"])
        #expect(allowed.map(\.0) == [200, 404] && allowed.last?.2 == "forbidden_source", "\(allowed)")
        let denied = try await served({ $0.deniedBuckets = ["private"] }, ["s3://photos/a.png", "s3://private/a.png"])
        #expect(denied.map(\.0) == [200, 404] && denied.last?.2 == "forbidden_source", "\(denied)")
    }

    /// imgproxy's `IMGPROXY_S3_ASSUME_ROLE_ARN`: requests are signed as a
    /// role whose credentials STS gives (moto's, with authentication on).
    /// The calling user may only assume roles, so only the role's
    /// credentials read the object; a refusal of STS is a 403 that says so.
    @Test func aRoleIsAssumedThroughSTS() async throws {
        let moto = try await Moto()
        #expect(try await Self.put(moto.endpoint.appendingPathComponent("photos")) == 200)
        #expect(try await Self.put(URL(string: "\(moto.endpoint)/photos/a.png")!, Fixture.png, contentType: "image/png") == 200)
        let readS3 = #"{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"s3:*","Resource":"*"}]}"#
        let assumeOnly = #"{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"sts:AssumeRole","Resource":"*"}]}"#
        let arn = try await moto.createRole("image-reader", policy: readS3)
        let caller = try await moto.createUser("caller", policy: assumeOnly)
        try await moto.requireAuthentication()
        let callerCredentials = AWSSignatureV4.Credentials(accessKeyID: caller.accessKeyID, secretAccessKey: caller.secretAccessKey)
        func answer(credentials: AWSSignatureV4.Credentials, role: AWSAssumedRole?, times: Int = 1) async throws -> [(Int, String?, String)] {
            var store = S3DataLoader.Configuration(endpoint: moto.endpoint, region: "us-east-1", credentials: credentials)
            store.role = role
            return try await Fixture.withServer(Fixture.configuration { $0.s3 = store }) { client, _ in
                var answers: [(Int, String?, String)] = []
                for index in 0..<times {
                    let response = try await client.execute(uri: Fixture.path("w:\(40 + index)", URL(string: "s3://photos/a.png")!), method: .get)
                    answers.append((Int(response.status.code), response.errorCode, String(decoding: response.data.prefix(400), as: UTF8.self)))
                }
                return answers
            }
        }
        let role = AWSAssumedRole(arn: arn, externalID: "thumbs", endpoint: moto.endpoint)
        // As the role: read, twice (the second with the kept credentials).
        let asRole = try await answer(credentials: callerCredentials, role: role, times: 2)
        #expect(asRole.map(\.0) == [200, 200], "\(asRole)")
        // As the caller itself: S3 refuses.
        let asCaller = try await answer(credentials: callerCredentials, role: nil)
        #expect(asCaller.map(\.0) == [403] && asCaller.first?.1 == "source_access_denied", "\(asCaller)")
        // A wrong secret: STS refuses, and says so.
        let wrong = AWSSignatureV4.Credentials(accessKeyID: caller.accessKeyID, secretAccessKey: "wrong")
        let refused = try await answer(credentials: wrong, role: role)
        #expect(refused.map(\.0) == [403] && refused.first?.1 == "source_access_denied", "\(refused)")
        #expect(refused.first?.2.contains("STS refused to assume the role") == true, "\(refused)")
    }

    /// A hostile STS (no credentials in its answer, an endless one, none
    /// at all) fails the source with a bounded answer, and S3 is never asked.
    @Test func aHostileSTSIsBounded() async throws {
        let store = try await LoopbackServer.start(routes: ["/photos/a.png": .ok(Fixture.png, contentType: "image/png")])
        let sts = try await LoopbackServer.start(routes: [
            "/garbage/": .text("<html>not STS</html>", status: 200),
            "/huge/": .ok(Data(repeating: 0x41, count: 1 << 20), contentType: "text/xml"),
            "/refusing/": .text("<ErrorResponse><Error><Code>AccessDenied</Code><Message>no</Message></Error></ErrorResponse>", status: 403),
        ])
        for (path, code) in [("/garbage/", "source_failed"), ("/huge/", "source_failed"), ("/refusing/", "source_access_denied")] {
            var configuration = S3DataLoader.Configuration(endpoint: store.baseURL, region: "us-east-1", credentials: Self.credentials)
            configuration.role = AWSAssumedRole(arn: "arn:aws:iam::123456789012:role/r", endpoint: sts.url(path))
            try await Fixture.withServer(Fixture.configuration { $0.s3 = configuration }) { client, _ in
                let response = try await client.execute(uri: Fixture.path("w:40", URL(string: "s3://photos/a.png")!), method: .get)
                #expect(response.errorCode == code, "\(path): \(String(decoding: response.data.prefix(300), as: UTF8.self))")
                #expect(response.data.count < 2048)
            }
        }
        #expect(store.requestCount(for: "/photos/a.png") == 0)
    }

    /// S3 answers an object stored without a type as `binary/octet-stream`
    /// (moto as AWS): the bytes decide, as with `application/octet-stream`.
    /// A key that a normalising store would read elsewhere is never sent.
    @Test func untypedObjectsAreSniffedAndDotSegmentsAreRefused() async throws {
        let moto = try await Moto()
        #expect(try await Self.put(moto.endpoint.appendingPathComponent("photos")) == 200)
        #expect(try await Self.put(moto.endpoint.appendingPathComponent("secret")) == 200)
        #expect(try await Self.put(URL(string: "\(moto.endpoint)/photos/untyped")!, Fixture.png) == 200)
        #expect(try await Self.put(URL(string: "\(moto.endpoint)/secret/key.png")!, Fixture.png, contentType: "image/png") == 200)
        let configuration = Fixture.configuration {
            $0.s3 = S3DataLoader.Configuration(endpoint: moto.endpoint, region: "us-east-1", credentials: Self.credentials)
        }
        try await Fixture.withServer(configuration) { client, server in
            let untyped = try await client.execute(uri: Fixture.path("w:40", URL(string: "s3://photos/untyped")!), method: .get)
            #expect(untyped.status == .ok, "\(String(decoding: untyped.data.prefix(300), as: UTF8.self))")
            #expect(try untyped.image().width == 40)
            for key in ["photos/../secret/key.png", "photos/%2E%2E/secret/key.png", "photos/%2e./secret/key.png",
                        "photos/./untyped", "photos/%2E/untyped", "photos/a/.."] {
                let refused = try await client.execute(uri: Fixture.path("w:40", URL(string: "s3://\(key)")!), method: .get)
                #expect(refused.status == .notFound, "\(key)")
                #expect(refused.errorCode == "forbidden_source", "\(key)")
            }
            #expect(server.pipeline.statistics.downloads == 1, "only the untyped object was fetched")
        }
    }

    @Test func aRefusalIsA403WithS3sReasonAnd5xxIsRetried() async throws {
        let denied = """
        <?xml version="1.0" encoding="UTF-8"?><Error><Code>RequestTimeTooSkewed</Code><Message>The difference between the request time and the current time is too large.</Message></Error>
        """
        let store = try await LoopbackServer.start(routes: [
            "/photos/denied.jpg": .text(denied, status: 403, contentType: "application/xml"),
            "/photos/flaky.jpg": .text("<Error><Code>SlowDown</Code></Error>", status: 503, contentType: "application/xml"),
        ])
        let configuration = Fixture.configuration {
            $0.s3 = S3DataLoader.Configuration(endpoint: store.baseURL, region: "us-east-1", credentials: Self.credentials)
        }
        try await Fixture.withServer(configuration) { client, _ in
            let response = try await client.execute(uri: Fixture.path("w:40", URL(string: "s3://photos/denied.jpg")!), method: .get)
            #expect(response.status == .forbidden)
            #expect(response.errorCode == "source_access_denied")
            #expect(String(decoding: response.data, as: UTF8.self).contains("RequestTimeTooSkewed"))
            let flaky = try await client.execute(uri: Fixture.path("w:40", URL(string: "s3://photos/flaky.jpg")!), method: .get)
            #expect(flaky.status == .badGateway)
        }
        #expect(store.requestCount(for: "/photos/flaky.jpg") == 3, "the first try and two retries")
        // Every request to the store was signed.
        #expect(store.requests.allSatisfy { $0.header("Authorization")?.hasPrefix("AWS4-HMAC-SHA256 Credential=testing/") == true })
    }
}
#endif
