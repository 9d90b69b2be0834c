#if Server && os(Linux)
import Foundation
import HTTPTypes
import HummingbirdTesting
import Imago
import ImagoAsyncHTTPClient
import ImagoCodecs
import ImagoServer
import LoopbackServer
import Testing

/// `raw` (the source streamed through unchanged) and `skip_processing`
/// (sources of listed formats delivered as they are), parsed and over HTTP.
@Suite struct RawAndSkipTests {
    func parse(_ path: String) throws -> ProcessingOptions {
        try ImageServerPath(parsing: path).options
    }

    @Test func theOptionsParseAndAreWrittenBack() throws {
        let options = try parse("/insecure/skp:jpg:GIF:svg/raw:1/plain/http%3A%2F%2Fx%2Fa.png@webp")
        #expect(options.skipProcessingFormats == [.jpeg, .gif], "svg is accepted, and never matches")
        #expect(options.isRaw)
        #expect(options.format == nil, "a raw path's extension names no output format, as imgproxy")
        #expect(try parse("/insecure/skp:heif/plain/http%3A%2F%2Fx%2Fa.png@webp").format == .webp)
        #expect(try parse("/insecure/skp:heif/plain/http%3A%2F%2Fx%2Fa.png").skipProcessingFormats == [.heic])
        let written = ImageServerPath(source: URL(string: "http://x/a.png")!, options: options).path(signedWith: nil)
        #expect(written.contains("/skp:gif:jpeg/raw:1/"))
        #expect(try ImageServerPath(parsing: written).options == options)
        for bad in ["skp", "skp:tga", "raw", "raw:2", "raw:1:1"] {
            #expect(throws: ImageServerError.self, "\(bad)") { try parse("/insecure/\(bad)/plain/http%3A%2F%2Fx%2Fa.png") }
        }
    }

    // MARK: raw

    @Test func rawStreamsTheSourceUnchanged() async throws {
        let big = Data((0..<3_000_000).map { UInt8(truncatingIfNeeded: $0 &* 2_654_435_761 >> 7) })
        let origin = try await Fixture.origin([
            "/big.bin": ServedResponse(headers: [("Content-Type", "image/x-raw; charset=binary")], body: big).delivered(.chunked(chunkSize: 65_536)),
            "/page.html": .text("<script>alert(1)</script>", status: 200, contentType: "text/html"),
            "/gone.jpg": .text("gone", status: 404),
        ])
        try await Fixture.withServer(Fixture.configuration()) { client, _ in
            // An image is passed through byte for byte, whatever the other options say.
            let gif = try await client.execute(uri: Fixture.path("raw:1/rs:fill:10:10/bl:5", origin.url("/a.gif"), extension: "png"), method: .get)
            #expect(gif.status == .ok)
            #expect(gif.data == Fixture.gif)
            #expect(gif.header("Content-Type") == "image/gif")
            #expect(gif.header("Content-Disposition") == "inline; filename=\"a.gif\"")
            #expect(gif.header("X-Content-Type-Options") == "nosniff")
            // A body of many chunks arrives whole.
            let streamed = try await client.execute(uri: Fixture.path("raw:1/fn:data/att:1", origin.url("/big.bin")), method: .get)
            #expect(streamed.status == .ok)
            #expect(streamed.data == big)
            #expect(streamed.header("Content-Type") == "image/x-raw")
            // A type with no known extension names none, as imgproxy.
            #expect(streamed.header("Content-Disposition") == "attachment; filename=\"data\"")
            // Not an image: the bytes go out, but never as a page of the server's origin.
            let page = try await client.execute(uri: Fixture.path("raw:1", origin.url("/page.html")), method: .get)
            #expect(page.status == .ok)
            #expect(page.header("Content-Type") == "application/octet-stream")
            #expect(page.header("Content-Security-Policy")?.contains("sandbox") == true)
            // The source's failures are answered as for images.
            let gone = try await client.execute(uri: Fixture.path("raw:1", origin.url("/gone.jpg")), method: .get)
            #expect(gone.status == .notFound)
            #expect(gone.errorCode == "source_not_found")
        }
    }

    /// As imgproxy's stream handler: the client's conditional, range and
    /// encoding headers go to the source and nothing else of the client's;
    /// the source's validators, range headers and status (206, 304) come back.
    @Test func rawPassesRangesAndValidatorsBetweenClientAndSource() async throws {
        let origin = try await Fixture.origin()
        let body = Fixture.png
        origin.route("/ranged.png") { request in
            let tags: [(name: String, value: String)] = [("ETag", "\"v1\""), ("Last-Modified", "Wed, 21 Oct 2015 07:28:00 GMT"),
                                                         ("Accept-Ranges", "bytes"), ("X-Secret", "internal"), ("Content-Type", "image/png")]
            if request.header("If-None-Match") == "\"v1\"" { return ServedResponse(status: 304, headers: tags) }
            if request.header("Range") == "bytes=10-19" {
                return ServedResponse(status: 206, headers: tags + [("Content-Range", "bytes 10-19/\(body.count)")], body: body[10..<20])
            }
            return ServedResponse(headers: tags, body: body)
        }
        try await Fixture.withServer(Fixture.configuration()) { client, _ in
            let path = Fixture.path("raw:1", origin.url("/ranged.png"))
            let whole = try await client.execute(uri: path, method: .get, headers: [.cookie: "session=1", .authorization: "Bearer x"])
            #expect(whole.status == .ok && whole.data == body)
            #expect(whole.header("ETag") == "\"v1\"" && whole.header("Last-Modified") == "Wed, 21 Oct 2015 07:28:00 GMT")
            #expect(whole.header("Accept-Ranges") == "bytes" && whole.header("Content-Length") == "\(body.count)")
            #expect(whole.header("X-Secret") == nil)
            let part = try await client.execute(uri: path, method: .get, headers: [.range: "bytes=10-19"])
            #expect(part.status == .partialContent)
            #expect(part.data == body[10..<20])
            #expect(part.header("Content-Range") == "bytes 10-19/\(body.count)")
            let unchanged = try await client.execute(uri: path, method: .get, headers: [.ifNoneMatch: "\"v1\""])
            #expect(unchanged.status == .notModified && unchanged.data.isEmpty)
            #expect(unchanged.header("ETag") == "\"v1\"")
        }
        let sent = origin.requests(for: "/ranged.png")
        #expect(sent.count == 3)
        #expect(sent.allSatisfy { $0.header("Cookie") == nil && $0.header("Authorization") == nil }, "nothing else of the client's")
    }

    /// imgproxy's cookie passthrough, on raw answers only: to a source on
    /// the host the client asked (or every source with `.all`), never on a
    /// redirect to another host, never for a rendered answer.
    @Test func cookiesReachOnlyTheirOwnHost() async throws {
        let origin = try await Fixture.origin()
        let elsewhere = try await Fixture.origin()
        let other = URL(string: "http://localhost:\(elsewhere.port)/a.png")!
        origin.route("/moved.png", .redirect(to: other.absoluteString))
        // The host the client asked for, as a proxy in front says it (the router client sends no Host).
        let cookie: HTTPFields = [.cookie: "session=s3cr3t", HTTPField.Name("X-Forwarded-Host")!: "127.0.0.1:8080"]
        for (passthrough, toOther) in [(CookiePassthrough.sameHost(as: nil), false), (.all, true)] {
            let before = elsewhere.requests(for: "/a.png").count
            try await Fixture.withServer(Fixture.configuration { $0.cookiePassthrough = passthrough }) { client, _ in
                _ = try await client.execute(uri: Fixture.path("raw:1", origin.url("/a.png")), method: .get, headers: cookie)
                _ = try await client.execute(uri: Fixture.path("raw:1", other), method: .get, headers: cookie)
                _ = try await client.execute(uri: Fixture.path("raw:1", origin.url("/moved.png")), method: .get, headers: cookie)
                _ = try await client.execute(uri: Fixture.path("w:10", origin.url("/a.jpg")), method: .get, headers: cookie)
            }
            #expect(origin.requests(for: "/a.png").last?.header("Cookie") == "session=s3cr3t")
            #expect(origin.requests(for: "/moved.png").last?.header("Cookie") == "session=s3cr3t")
            #expect(origin.requests(for: "/a.jpg").allSatisfy { $0.header("Cookie") == nil }, "not for a rendered answer")
            let reached = elsewhere.requests(for: "/a.png").dropFirst(before).map { $0.header("Cookie") }
            #expect(reached.count == 2)
            #expect(reached.first! == (toOther ? "session=s3cr3t" : nil), "another host, asked directly")
            #expect(reached.last! == nil, "never through a redirect to another host")
        }
    }

    @Test func rawStaysUnderTheSourcePolicyAndTheSizeLimit() async throws {
        let origin = try await Fixture.origin([
            "/large.jpg": ServedResponse(headers: [("Content-Type", "image/jpeg")], body: Data(count: 400_000)),
            "/hop": .redirect(to: "http://169.254.169.254/latest/meta-data"),
        ])
        var loader = AsyncHTTPClientDataLoader.Configuration()
        loader.followsRedirects = false
        loader.maximumResponseSize = 100_000
        let transport = AsyncHTTPClientDataLoader(configuration: loader)
        try await Fixture.withServer(Fixture.configuration { $0.transport = transport }) { client, _ in
            let large = try await client.execute(uri: Fixture.path("raw:1", origin.url("/large.jpg")), method: .get)
            #expect(large.status == .unprocessableContent)
            #expect(large.errorCode == "source_too_large")
            let small = try await client.execute(uri: Fixture.path("raw:1", origin.url("/a.jpg")), method: .get)
            #expect(small.data == Fixture.jpeg)
        }
        // Private networks refused: loopback itself, and a redirect to the metadata address.
        try await Fixture.withServer(Fixture.configuration { $0.sourcePolicy.allowsPrivateNetworks = false }) { client, _ in
            let direct = try await client.execute(uri: Fixture.path("raw:1", origin.url("/a.jpg")), method: .get)
            #expect(direct.status == .notFound)
            #expect(direct.errorCode == "forbidden_source")
        }
        #expect(origin.requestCount(for: "/a.jpg") == 1, "the refused load never reached the origin")
    }

    // MARK: skip_processing

    @Test func listedFormatsAreDeliveredAsTheyAre() async throws {
        let origin = try await Fixture.origin()
        try await Fixture.withServer(Fixture.configuration { $0.outputPolicy.automatic = [.webp] }) { client, _ in
            // A GIF in the list: its bytes, though the path resizes and the client takes WebP.
            let gif = try await client.execute(uri: Fixture.path("skp:gif/rs:fit:20:20", origin.url("/a.gif")), method: .get,
                                               headers: [.accept: "image/webp,*/*"])
            #expect(gif.status == .ok)
            #expect(gif.data == Fixture.gif)
            #expect(gif.header("Content-Type") == "image/gif")
            // The path names the source's own format: still skipped.
            let jpeg = try await client.execute(uri: Fixture.path("skp:jpg:gif/w:20", origin.url("/a.jpg"), extension: "jpg"), method: .get)
            #expect(jpeg.data == Fixture.jpeg)
            // The path names another format: processed.
            let converted = try await client.execute(uri: Fixture.path("skp:gif/w:8", origin.url("/a.gif"), extension: "png"), method: .get)
            #expect(converted.header("Content-Type") == "image/png")
            #expect(try converted.image().width == 8)
            // A source not in the list: processed, negotiated format and all.
            let png = try await client.execute(uri: Fixture.path("skp:gif/w:20", origin.url("/a.png")), method: .get,
                                               headers: [.accept: "image/webp"])
            #expect(png.header("Content-Type") == "image/webp")
            #expect(try png.image().width == 20)
        }
    }

    @Test func skippedSourcesAreStillChecked() async throws {
        // A GIF whose screen claims 60000x60000: over the pixel limit, never decoded.
        var huge = Fixture.gif
        huge.replaceSubrange(6..<10, with: [0x60, 0xEA, 0x60, 0xEA])
        let origin = try await Fixture.origin([
            "/huge.gif": .ok(huge, contentType: "image/gif"),
            "/text.gif": .text("not a gif", status: 200, contentType: "image/gif"),
        ])
        try await Fixture.withServer(Fixture.configuration()) { client, _ in
            let tooLarge = try await client.execute(uri: Fixture.path("skp:gif", origin.url("/huge.gif")), method: .get)
            #expect(tooLarge.status == .unprocessableContent)
            #expect(tooLarge.errorCode == "source_too_large")
            let notImage = try await client.execute(uri: Fixture.path("skp:gif", origin.url("/text.gif")), method: .get)
            #expect(notImage.status == .unprocessableContent)
        }
    }
}
#endif
