#if Server && os(Linux)
import Foundation
import HTTPTypes
import HummingbirdTesting
import Imago
import ImagoCodecs
import ImagoServer
import LoopbackServer
import Testing

/// What a good request gets back: the image, its headers, 304 and HEAD.
@Suite struct ResponseTests {
    /// imgproxy's names: HEIC answers are `image/heif`; TIFF bytes named
    /// like a camera raw file (`.cr2`) are not an image the server reads.
    @Test func heicIsImageHeifAndCameraRawIsRefused() async throws {
        let tiff = try ImageEncoders.tiff().encode(Fixture.photo(width: 20, height: 15))
        let origin = try await Fixture.origin(["/shot.cr2": .ok(tiff, contentType: "application/octet-stream"),
                                               "/shot.tif": .ok(tiff, contentType: "image/tiff")])
        try await Fixture.withServer(Fixture.configuration()) { client, _ in
            let heic = try await client.execute(uri: Fixture.path("w:16/f:heic", origin.url("/a.png")), method: .get)
            #expect(heic.status == .ok)
            #expect(heic.header("Content-Type") == "image/heif")
            #expect(heic.header("Content-Disposition") == "inline; filename=\"a.heic\"")
            let raw = try await client.execute(uri: Fixture.path("w:10", origin.url("/shot.cr2")), method: .get)
            #expect(raw.status == .unprocessableContent)
            #expect(raw.errorCode == "source_not_an_image")
            #expect(try await client.execute(uri: Fixture.path("w:10", origin.url("/shot.tif")), method: .get).status == .ok)
        }
    }

    /// imgproxy's `IMGPROXY_ENABLE_DEBUG_HEADERS` and `IMGPROXY_SET_CANONICAL_HEADER`:
    /// the sizes of the source and the result, and the source as the canonical link
    /// (HTTP sources only, raw answers too); neither unless asked for.
    @Test func debugHeadersAndTheCanonicalLinkAreSentWhenAsked() async throws {
        let origin = try await Fixture.origin()
        let source = origin.url("/a.jpg")
        let configuration = Fixture.configuration {
            $0.sendsDebugHeaders = true
            $0.sendsCanonicalLink = true
        }
        try await Fixture.withServer(configuration) { client, _ in
            for _ in 0..<2 {   // rendered, then from the output cache
                let response = try await client.execute(uri: Fixture.path("rs:fit:64:64", source), method: .get)
                #expect(response.header("X-Origin-Width") == "200" && response.header("X-Origin-Height") == "150")
                #expect(response.header("X-Origin-Content-Length") == String(Fixture.jpeg.count))
                #expect(response.header("X-Result-Width") == "64" && response.header("X-Result-Height") == "48")
                #expect(response.header("Link") == "<\(source.absoluteString)>; rel=\"canonical\"")
            }
            let raw = try await client.execute(uri: Fixture.path("raw:1", source), method: .get)
            #expect(raw.header("Link") == "<\(source.absoluteString)>; rel=\"canonical\"")
            #expect(raw.header("X-Result-Width") == nil)
        }
        try await Fixture.withServer(Fixture.configuration()) { client, _ in
            let plain = try await client.execute(uri: Fixture.path("rs:fit:64:64", source), method: .get)
            #expect(plain.header("X-Origin-Width") == nil && plain.header("Link") == nil)
        }
    }

    @Test func aFitThumbnailComesBackAsJPEGWithItsHeaders() async throws {
        let origin = try await Fixture.origin()
        try await Fixture.withServer(Fixture.configuration()) { client, _ in
            let response = try await client.execute(uri: Fixture.path("rs:fit:64:64", origin.url("/a.jpg")), method: .get)
            #expect(response.status == .ok)
            #expect(response.header("Content-Type") == "image/jpeg")
            #expect(response.header("Content-Length") == String(response.data.count))
            #expect(response.header("Cache-Control") == "max-age=31536000, public")
            #expect(response.header("Vary") == nil)
            // Where the time went, from the pipeline's per-request metrics.
            let timing = try #require(response.header("Server-Timing"))
            for part in ["wait;dur=", "load;dur=", "decode;dur=", "render;dur="] { #expect(timing.contains(part)) }
            let etag = try #require(response.header("ETag"))
            // The origin sends no ETag: the server's own, a hash of the bytes.
            #expect(etag.hasPrefix("\"sha256-") && etag.hasSuffix("\"") && etag.count == 73)
            let image = try response.image()
            #expect((image.width, image.height) == (64, 48))
        }
    }

    @Test(arguments: [
        ("rs:fill:50:50/g:nowe", "/a.png", nil, "image/png", 50, 50),
        ("rs:force:30:90", "/a.jpg", "png", "image/png", 30, 90),
        ("w:100/f:webp", "/a.jpg", nil, "image/webp", 100, 75),
        ("h:30", "/a.webp", nil, "image/webp", 40, 30),
        ("rs:fit:500:500:1", "/a.jpg", "jpg", "image/jpeg", 500, 375),
        ("rs:fit:500:500", "/a.jpg", nil, "image/jpeg", 200, 150),
        ("rs:fit:8:8", "/a.gif", nil, "image/png", 8, 8),
        ("w:100", "/a.avif", nil, "image/avif", 100, 75),
        ("w:50/f:avif", "/a.png", nil, "image/avif", 50, 38),
        ("w:48", "/a.jpg", "avif", "image/avif", 48, 36),
        ("w:48", "/a.heic", nil, "image/jpeg", 48, 32),
    ] as [(String, String, String?, String, Int, Int)])
    func optionsAndFormats(options: String, source: String, ext: String?, type: String, width: Int, height: Int) async throws {
        let origin = try await Fixture.origin()
        try await Fixture.withServer(Fixture.configuration()) { client, _ in
            let response = try await client.execute(uri: Fixture.path(options, origin.url(source), extension: ext), method: .get)
            #expect(response.status == .ok, "\(response.data.count) bytes: \(String(decoding: response.data, as: UTF8.self))")
            #expect(response.header("Content-Type") == type)
            let image = try response.image()
            #expect((image.width, image.height) == (width, height))
            #expect(!image.isAnimated)
        }
    }

    @Test func aBase64SourceWithAnExtension() async throws {
        let origin = try await Fixture.origin()
        let encoded = Data(origin.url("/a.jpg").absoluteString.utf8).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
        try await Fixture.withServer(Fixture.configuration()) { client, _ in
            let response = try await client.execute(uri: "/img/insecure/rs:fit:20:20/\(encoded).png", method: .get)
            #expect(response.status == .ok)
            #expect(response.header("Content-Type") == "image/png")
        }
    }

    @Test func automaticWebPFollowsAcceptAndSaysVary() async throws {
        let origin = try await Fixture.origin()
        try await Fixture.withServer(Fixture.configuration { $0.automaticWebP = true }) { client, _ in
            let path = Fixture.path("rs:fit:32:32", origin.url("/a.jpg"))
            let webp = try await client.execute(uri: path, method: .get, headers: [.accept: "image/avif,image/webp,*/*"])
            #expect(webp.header("Content-Type") == "image/webp")
            #expect(webp.header("Vary") == "Accept")
            let jpeg = try await client.execute(uri: path, method: .get, headers: [.accept: "image/webp;q=0, */*"])
            #expect(jpeg.header("Content-Type") == "image/jpeg")
            #expect(jpeg.header("Vary") == "Accept")
            #expect(jpeg.header("ETag") != webp.header("ETag"))
            // A path that names its format does not vary.
            let named = try await client.execute(uri: Fixture.path("rs:fit:32:32", origin.url("/a.jpg"), extension: "png"), method: .get, headers: [.accept: "image/webp"])
            #expect(named.header("Content-Type") == "image/png")
            #expect(named.header("Vary") == nil)
        }
        // Off, Accept changes nothing.
        try await Fixture.withServer(Fixture.configuration()) { client, _ in
            let response = try await client.execute(uri: Fixture.path("rs:fit:32:32", origin.url("/a.jpg")), method: .get, headers: [.accept: "image/webp"])
            #expect(response.header("Content-Type") == "image/jpeg")
            #expect(response.header("Vary") == nil)
        }
    }

    @Test func ifNoneMatchGets304WithTheValidators() async throws {
        let origin = try await Fixture.origin()
        try await Fixture.withServer(Fixture.configuration()) { client, _ in
            let path = Fixture.path("rs:fit:32:32", origin.url("/a.jpg"))
            let first = try await client.execute(uri: path, method: .get)
            let etag = try #require(first.header("ETag"))
            for condition in [etag, "W/\(etag)", "\"other\", \(etag)", "*"] {
                let response = try await client.execute(uri: path, method: .get, headers: [.ifNoneMatch: condition])
                #expect(response.status == .notModified, "\(condition)")
                #expect(response.data.isEmpty)
                #expect(response.header("ETag") == etag)
                #expect(response.header("Cache-Control") == "max-age=31536000, public")
            }
            let changed = try await client.execute(uri: path, method: .get, headers: [.ifNoneMatch: "\"other\""])
            #expect(changed.status == .ok)
            #expect(changed.data == first.data)
        }
    }

    @Test func headHasTheHeadersOfGetAndNoBody() async throws {
        let origin = try await Fixture.origin()
        try await Fixture.withServer(Fixture.configuration()) { client, _ in
            let path = Fixture.path("rs:fit:32:32", origin.url("/a.png"))
            let get = try await client.execute(uri: path, method: .get)
            let head = try await client.execute(uri: path, method: .head)
            #expect(head.status == .ok)
            #expect(head.data.isEmpty)
            #expect(head.header("Content-Length") == String(get.data.count))
            #expect(head.header("ETag") == get.header("ETag"))
            #expect(head.header("Content-Type") == "image/png")
        }
    }

    @Test func signedPathsWithAnyOfSeveralKeys() async throws {
        let origin = try await Fixture.origin()
        let old = try SigningKey(hexKey: "736563726574", hexSalt: "68656C6C6F")
        let new = try SigningKey(hexKey: "0123456789abcdef", hexSalt: "fedcba")
        var options = ProcessingOptions()
        options.width = 16
        let path = ImageServerPath(source: origin.url("/a.jpg"), options: options)
        let configuration = Fixture.configuration {
            $0.acceptsUnsignedPaths = false
            $0.signingKeys = [old, new]
        }
        try await Fixture.withServer(configuration) { client, _ in
            for key in [old, new] {
                let response = try await client.execute(uri: "/img" + path.path(signedWith: key), method: .get)
                #expect(response.status == .ok)
            }
            let other = try SigningKey(hexKey: "00", hexSalt: "00")
            for bad in ["/img" + path.path(signedWith: other), "/img" + path.path(signedWith: nil)] {
                let response = try await client.execute(uri: bad, method: .get)
                #expect(response.status == .forbidden)
                #expect(response.errorCode == "bad_signature")
            }
        }
        #expect(origin.requestCount(for: "/a.jpg") == 1)
    }

    /// A signature has one spelling over HTTP too: padding, `=` inside, the
    /// standard alphabet, an extra character, stray low bits in the last
    /// one, whitespace: each is a 403 that reaches no origin, so no CDN can
    /// be made to cache one image under many keys.
    @Test func respelledSignaturesAre403() async throws {
        let origin = try await Fixture.origin()
        let key = try SigningKey(hexKey: "736563726574", hexSalt: "68656C6C6F")
        var options = ProcessingOptions()
        options.width = 16
        let signed = ImageServerPath(source: origin.url("/a.jpg"), options: options).path(signedWith: key)
        let parts = signed.dropFirst().split(separator: "/", maxSplits: 1).map(String.init)
        let (good, rest) = (parts[0], parts[1])
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
        let lastCharacter = try #require(good.last)
        let last = try #require(alphabet.firstIndex(of: lastCharacter))
        let middle = good.index(good.startIndex, offsetBy: 20)
        let spellings = [good + "=", good + "==", "=" + good, String(good[..<middle]) + "=" + String(good[middle...]),
                         good.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "%2F"),
                         good + "A", "%20" + good, good + "%0A", String(good.dropLast()),
                         String(good.dropLast()) + String(alphabet[(last + 1) % 64]), String(good.dropLast()) + String(alphabet[(last + 2) % 64])]
        let configuration = Fixture.configuration {
            $0.acceptsUnsignedPaths = false
            $0.signingKeys = [key]
        }
        try await Fixture.withServer(configuration) { client, _ in
            for spelling in spellings where spelling != good {
                let response = try await client.execute(uri: "/img/" + spelling + "/" + rest, method: .get)
                #expect(response.status == .forbidden, "\(spelling)")
                #expect(response.errorCode == "bad_signature", "\(spelling)")
            }
            #expect(try await client.execute(uri: "/img/" + good + "/" + rest, method: .get).status == .ok)
        }
        #expect(origin.requestCount(for: "/a.jpg") == 1, "only the exact spelling reached the origin")
    }
}
#endif
