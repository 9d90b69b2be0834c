#if Server && os(Linux)
import Foundation
import HummingbirdTesting
import Imago
import ImagoCodecs
import ImagoServer
import Testing

/// Presets, per-format quality, cache busting, expiry, file names and the
/// sharpen and pixelate effects, parsed and over HTTP.
@Suite struct DeliveryOptionsTests {
    func parse(_ options: String, presets: ImageServerPresets = .none) throws -> ProcessingOptions {
        try ImageServerPath(parsing: "/insecure/\(options)/plain/http%3A%2F%2Fx%2Fa.png", presets: presets).options
    }

    // MARK: Presets

    @Test func presetsExpandInPlaceAndTheDefaultComesFirst() throws {
        let presets = try ImageServerPresets(["thumb": "rs:fill:200:100/q:70", "sharp": "sh:1/pr:thumb", "default": "q:50/bl:2"])
        let thumb = try parse("pr:thumb", presets: presets)
        #expect((thumb.resizingType, thumb.width, thumb.height, thumb.quality, thumb.blur) == (.fill, 200, 100, 70, 2))
        // A later option overrides the preset; an earlier one is overridden by it.
        #expect(try parse("pr:thumb/q:90", presets: presets).quality == 90)
        #expect(try parse("q:90/preset:thumb", presets: presets).quality == 70)
        // Presets may use presets; several at once apply in order.
        #expect(try parse("pr:sharp", presets: presets).sharpen == 1)
        #expect(try parse("pr:sharp", presets: presets).width == 200)
        #expect(try parse("", presets: presets).quality == 50, "the default preset alone")
        #expect(throws: ImageServerError.self) { try parse("pr:missing", presets: presets) }
    }

    @Test func aPresetThatUsesItselfStops() throws {
        let presets = try ImageServerPresets(["a": "w:10/pr:b", "b": "h:20/pr:a"])
        let options = try parse("pr:a", presets: presets)
        #expect((options.width, options.height) == (10, 20))
    }

    @Test func badPresetsAreRefusedWhenDefined() {
        #expect(throws: ImageServerError.self) { try ImageServerPresets(["x": "rs:stretch:1:1"]) }
        #expect(throws: ImageServerError.self) { try ImageServerPresets(["x": "pr:y"]) }
        #expect(throws: ImageServerError.self) { try ImageServerPresets(parsing: ["no-equals-sign"]) }
        #expect(throws: ImageServerError.self) { try ImageServerPresets(["a:b": "w:1"]) }
        #expect(throws: Never.self) { try ImageServerPresets(parsing: ["thumb=rs:fit:64:64", "big=w:1000/el:1"]) }
    }

    @Test func onlyPresetsModeReadsTheFirstSegmentAsPresetNames() throws {
        let presets = try ImageServerPresets(["thumb": "rs:fit:64:64", "webp": "f:webp"], onlyPresets: true)
        let path = try ImageServerPath(parsing: "/insecure/thumb:webp/plain/http%3A%2F%2Fx%2Fa.png", presets: presets)
        #expect((path.options.width, path.options.format) == (64, .webp))
        #expect(throws: ImageServerError.self) {
            try ImageServerPath(parsing: "/insecure/w:64/plain/http%3A%2F%2Fx%2Fa.png", presets: presets)
        }
    }

    // MARK: Output options

    @Test func formatQualityAppliesUnlessQualityIsSet() throws {
        let options = try parse("fq:jpeg:55:webp:44")
        #expect(options.formatQuality == [.jpeg: 55, .webp: 44])
        let image = Image(width: 64, height: 64, pixelFormat: .rgb8, pixels: (0..<64 * 64 * 3).map { UInt8(($0 * 7) % 256) })
        let at55 = try ImageEncoders.jpeg(quality: 55).encode(image)
        #expect(try options.encoder(for: .jpeg).encode(image) == at55)
        var withQuality = options
        withQuality.quality = 90
        #expect(try withQuality.encoder(for: .jpeg).encode(image) == ImageEncoders.jpeg(quality: 90).encode(image))
        #expect(throws: ImageServerError.self) { try parse("fq:jpeg") }
        #expect(throws: ImageServerError.self) { try parse("fq:tga:50") }
    }

    @Test func theOtherDeliveryOptionsParse() throws {
        let options = try parse("cb:v2/exp:4102444800/fn:cat/att:1/sh:0.5/pix:8")
        #expect(options.cacheBuster == "v2")
        #expect(options.expires == 4_102_444_800)
        #expect(options.filename == "cat")
        #expect(options.returnsAttachment)
        #expect(options.sharpen == 0.5)
        #expect(options.pixelate == 8)
        #expect(try parse("fn:Y2F0IMOpdMOp:1").filename == "cat été")
        #expect(throws: ImageServerError.self) { try parse("exp:soon") }
        #expect(throws: ImageServerError.self) { try parse("fn:!!!:1") }
    }

    @Test func pixelateAveragesBlocks() throws {
        let image = Image(width: 4, height: 2, pixelFormat: .gray8, pixels: [0, 10, 20, 30, 40, 50, 60, 70])
        let result = try parse("pix:2").apply(to: image)
        #expect(result.pixels == [25, 25, 45, 45, 25, 25, 45, 45])
    }

    @Test func sharpenRaisesContrastAtEdges() throws {
        let image = Image(width: 20, height: 1, pixelFormat: .gray8, pixels: (0..<20).map { $0 < 10 ? 100 : 150 })
        let result = try parse("sh:2").apply(to: image)
        #expect(result.pixels[9] < 100, "the dark side of the edge gets darker")
        #expect(result.pixels[10] > 150, "the light side gets lighter")
        #expect(result.pixels[0] == 100, "flat areas stay")
    }

    // MARK: Over HTTP

    @Test func expiredURLsAre404AndOthersServe() async throws {
        let origin = try await Fixture.origin()
        try await Fixture.withServer(Fixture.configuration()) { client, _ in
            // 0 and negative times are times too, long past: not "never".
            for time in ["1000", "0", "-1", "-9223372036854775808"] {
                let expired = try await client.execute(uri: Fixture.path("exp:\(time)/w:20", origin.url("/a.png")), method: .get)
                #expect(expired.status == .notFound, "exp:\(time)")
                #expect(expired.errorCode == "expired", "exp:\(time)")
            }
            let fresh = try await client.execute(uri: Fixture.path("exp:4102444800/w:20", origin.url("/a.png")), method: .get)
            #expect(fresh.status == .ok)
        }
    }

    @Test func contentDispositionNamesTheFileSafely() async throws {
        let origin = try await Fixture.origin()
        try await Fixture.withServer(Fixture.configuration()) { client, _ in
            let plain = try await client.execute(uri: Fixture.path("w:20", origin.url("/a.png"), extension: "webp"), method: .get)
            #expect(plain.header("Content-Disposition") == "inline; filename=\"a.webp\"")
            let named = try await client.execute(uri: Fixture.path("fn:holiday/att:1", origin.url("/a.png"), extension: "jpg"), method: .get)
            #expect(named.header("Content-Disposition") == "attachment; filename=\"holiday.jpg\"")
            // A name that would break the header, given in base64.
            let hostile = Data("x\"\r\nSet-Cookie: a=b é".utf8).base64EncodedString()
                .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
            let response = try await client.execute(uri: Fixture.path("fn:\(hostile):1", origin.url("/a.png"), extension: "png"), method: .get)
            #expect(response.status == .ok)
            let value = try #require(response.header("Content-Disposition"))
            #expect(!value.contains("\r") && !value.contains("\n"))
            #expect(value.hasPrefix("inline; filename=\"x%22%0D%0ASet-Cookie: a=b _.png\""))
            #expect(value.hasSuffix("filename*=UTF-8''x%22%0D%0ASet-Cookie%3A%20a%3Db%20%C3%A9.png"))
            #expect(response.header("Set-Cookie") == nil)
        }
    }

    @Test func aPresetOverHTTP() async throws {
        let origin = try await Fixture.origin()
        let presets = try ImageServerPresets(["tiny": "rs:fill:16:16"])
        let image = try await Fixture.withServer(Fixture.configuration { $0.presets = presets }) { client, _ in
            try await client.execute(uri: Fixture.path("pr:tiny", origin.url("/a.png"), extension: "png"), method: .get).image()
        }
        #expect((image.width, image.height) == (16, 16))
    }
}

/// imgproxy's format detection over HTTP: automatic and enforced AVIF,
/// WebP and JPEG XL (the decision itself: `OutputPolicyTests`, in the library).
@Suite struct FormatNegotiationTests {
    static let both = "image/avif,image/webp,*/*;q=0.8"

    @Test func enforcedAVIFOverHTTPVariesAndKeepsFormatsApart() async throws {
        let origin = try await Fixture.origin()
        let configuration = Fixture.configuration { $0.outputPolicy = OutputPolicy(enforced: [.avif]) }
        try await Fixture.withServer(configuration) { client, _ in
            let path = Fixture.path("w:40", origin.url("/a.png"), extension: "png")
            let avif = try await client.execute(uri: path, method: .get, headers: [.accept: Self.both])
            #expect(avif.header("Content-Type") == "image/avif")
            #expect(avif.header("Vary") == "Accept")
            let png = try await client.execute(uri: path, method: .get, headers: [.accept: "image/png"])
            #expect(png.header("Content-Type") == "image/png")
            #expect(png.header("Vary") == "Accept")
            #expect(avif.header("ETag") != png.header("ETag"))
            // The output cache keeps the two apart.
            let again = try await client.execute(uri: path, method: .get, headers: [.accept: "image/png"])
            #expect(ImageFormat(sniffing: again.data) == .png)
        }
    }

    @Test func jpegXLOverHTTP() async throws {
        let origin = try await Fixture.origin()
        let configuration = Fixture.configuration { $0.outputPolicy = OutputPolicy(automatic: [.jxl, .webp]) }
        try await Fixture.withServer(configuration) { client, _ in
            let negotiated = try await client.execute(uri: Fixture.path("w:40", origin.url("/a.jpg")), method: .get,
                                                      headers: [.accept: "image/jxl,image/webp"])
            #expect(negotiated.header("Content-Type") == "image/jxl")
            #expect(negotiated.header("Vary") == "Accept")
            #expect(negotiated.header("Content-Disposition") == "inline; filename=\"a.jxl\"")
            let image = try negotiated.image()
            #expect((image.width, image.height) == (40, 30))
            // Asked for by extension, at a quality: smaller at a lower one.
            let high = try await client.execute(uri: Fixture.path("w:100/q:95", origin.url("/a.png"), extension: "jxl"), method: .get)
            let low = try await client.execute(uri: Fixture.path("w:100/q:20", origin.url("/a.png"), extension: "jxl"), method: .get)
            #expect(ImageFormat(sniffing: high.data) == .jxl)
            #expect(low.data.count < high.data.count)
        }
    }
}

/// `max_bytes`: lower quality until the result fits, as imgproxy does.
@Suite struct MaxBytesTests {
    /// A photo-like gradient with noise: quality changes its size a lot.
    static let noisy: Image = {
        var state: UInt32 = 1
        let pixels = (0..<128 * 128 * 3).map { index -> UInt8 in
            state = state &* 1_664_525 &+ 1_013_904_223
            return UInt8(truncatingIfNeeded: (index / 3 % 128) + Int(state >> 27))
        }
        return Image(width: 128, height: 128, pixelFormat: .rgb8, pixels: pixels)
    }()

    func options(_ text: String) throws -> ProcessingOptions {
        try ImageServerPath(parsing: "/insecure/\(text)/plain/http%3A%2F%2Fx%2Fa.png").options
    }

    @Test(arguments: [ProcessingOptions.OutputFormat.jpeg, .webp])
    func theResultFitsWhenAQualityCanMakeIt(_ format: ProcessingOptions.OutputFormat) throws {
        let full = try options("q:90").encoded(Self.noisy, as: format)
        let limit = full.count / 2
        let fitted = try options("q:90/mb:\(limit)").encoded(Self.noisy, as: format)
        #expect(fitted.count <= limit)
        #expect(fitted.count < full.count)
        #expect(try ImageDecoders.all.decode(fitted).width == 128)
    }

    @Test func anImpossibleLimitGivesTheLowestQualityTried() throws {
        let fitted = try options("mb:10").encoded(Self.noisy, as: .jpeg)
        #expect(fitted.count > 10)
        #expect(fitted.count < (try options("").encoded(Self.noisy, as: .jpeg)).count)
    }

    @Test func pngAndSmallResultsAreEncodedOnce() throws {
        let png = try options("mb:10").encoded(Self.noisy, as: .png)
        #expect(png == (try ImageEncoders.png().encode(Self.noisy)))
        let small = try options("mb:100000000/q:70").encoded(Self.noisy, as: .jpeg)
        #expect(small == (try ImageEncoders.jpeg(quality: 70).encode(Self.noisy)))
        #expect(try options("mb:0").maximumBytes == nil)
        #expect(throws: ImageServerError.self) { try options("mb:-1") }
    }
}

/// `GET /SIGNATURE/info/plain/SOURCE`: the source described as JSON.
@Suite struct InfoEndpointTests {
    static let resources = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../ImagoCodecsTests/Resources")

    struct Report: Decodable {
        let format: String
        let width: Int
        let height: Int
        let orientation: Int
        let frames: Int
        let durations: [Double]
        let loop_count: Int
        let color_profile: String?
        let alpha: Bool
        let bytes: Int
        let average_color: String
        let dominant_color: String
        let blurhash: String
        let thumbhash: String
        /// The body as sent, filled in by the test.
        var raw = ""

        enum CodingKeys: String, CodingKey {
            case format, width, height, orientation, frames, durations, loop_count, color_profile, alpha, bytes
            case average_color, dominant_color, blurhash, thumbhash
        }
    }

    @Test func aJPEGWithAProfileAndAnOrientation() async throws {
        let p3 = try Data(contentsOf: Self.resources.appendingPathComponent("color/display-p3.jpg"))
        let turned = try Data(contentsOf: Self.resources.appendingPathComponent("jpeg/orientation6.jpg"))
        let origin = try await Fixture.origin([
            "/p3.jpg": .ok(p3, contentType: "image/jpeg"), "/turned.jpg": .ok(turned, contentType: "image/jpeg"),
        ])
        try await Fixture.withServer(Fixture.configuration()) { client, _ in
            let response = try await client.execute(uri: "/img/insecure/info/plain/" + Self.encoded(origin.url("/p3.jpg")), method: .get)
            #expect(response.status == .ok)
            #expect(response.header("Content-Type") == "application/json")
            let report = try JSONDecoder().decode(Report.self, from: response.data)
            #expect((report.format, report.width, report.height, report.orientation) == ("jpeg", 48, 32, 1))
            #expect(report.color_profile == "Display P3 (Imago test)")
            #expect((report.frames, report.durations, report.alpha, report.bytes) == (1, [], false, p3.count))
            // The hashes are the library's, on the same small decode.
            let small = try ImageDecoders.all.decode(p3, options: ImageDecodingOptions(thumbnail: Thumbnail(width: 100, height: 100)))
            #expect(report.blurhash == small.blurHash())
            #expect(report.thumbhash == small.thumbHash().base64EncodedString())
            #expect(report.average_color.count == 7 && report.dominant_color.hasPrefix("#"))

            let upright = try JSONDecoder().decode(Report.self, from: try await client.execute(
                uri: "/img/insecure/info/plain/" + Self.encoded(origin.url("/turned.jpg")), method: .get).data)
            // Stored 32x16; shown turned a quarter, 16x32.
            #expect((upright.width, upright.height, upright.orientation) == (16, 32, 6))
        }
    }

    @Test func coloursOfAKnownImage() async throws {
        // Three quarters red, one quarter blue, opaque.
        let pixels = (0..<40 * 40).flatMap { index -> [UInt8] in index % 40 < 30 ? [255, 0, 0] : [0, 0, 255] }
        let png = try ImageEncoders.png().encode(Image(width: 40, height: 40, pixelFormat: .rgb8, pixels: pixels))
        let origin = try await Fixture.origin(["/flag.png": .ok(png, contentType: "image/png")])
        let report = try await Fixture.withServer(Fixture.configuration()) { client, _ in
            let data = try await client.execute(uri: "/img/insecure/info/plain/" + Self.encoded(origin.url("/flag.png")), method: .get).data
            var report = try JSONDecoder().decode(Report.self, from: data)
            report.raw = String(decoding: data, as: UTF8.self)
            return report
        }
        #expect(report.dominant_color == "#ff0000")
        #expect(report.raw.contains("\"color_profile\":null"), "every key is written")
        #expect(report.average_color == "#bf0040")
        #expect(report.color_profile == nil)
    }

    @Test func anAnimationListsItsFrames() async throws {
        let origin = try await Fixture.origin()
        let report = try await Fixture.withServer(Fixture.configuration()) { client, _ in
            try JSONDecoder().decode(Report.self, from: try await client.execute(
                uri: "/img/insecure/info/plain/" + Self.encoded(origin.url("/a.gif")), method: .get).data)
        }
        let animation = try ImageDecoders.all.decode(Fixture.gif)
        #expect(report.format == "gif")
        #expect(report.frames == animation.frames.count)
        #expect(report.durations == animation.frames.map { $0.duration ?? 0 })
        #expect(report.loop_count == animation.loopCount)
    }

    @Test func infoIsSignedAndFailsAsImagesFail() async throws {
        let origin = try await Fixture.origin(["/text": .ok(Data("hello".utf8), contentType: "text/plain")])
        let key = try SigningKey(hexKey: "736563726574", hexSalt: "68656c6c6f")
        var path = ImageServerPath(source: origin.url("/a.png"))
        path.isInfo = true
        let signed = path.path(signedWith: key)
        #expect(signed.contains("/info/plain/"))
        let configuration = Fixture.configuration {
            $0.acceptsUnsignedPaths = false
            $0.signingKeys = [key]
        }
        try await Fixture.withServer(configuration) { client, _ in
            let good = try await client.execute(uri: "/img" + signed, method: .get)
            #expect(good.status == .ok)
            let forged = "/img/insecure" + signed.dropFirst().drop { $0 != "/" }
            let bad = try await client.execute(uri: String(forged), method: .get)
            #expect(bad.status == .forbidden)
        }
        try await Fixture.withServer(Fixture.configuration()) { client, _ in
            let missing = try await client.execute(uri: "/img/insecure/info/plain/" + Self.encoded(origin.url("/nothing.png")), method: .get)
            #expect(missing.status == .notFound)
            let text = try await client.execute(uri: "/img/insecure/info/plain/" + Self.encoded(origin.url("/text")), method: .get)
            #expect(text.status == .unprocessableContent)
        }
    }

    static func encoded(_ url: URL) -> String {
        url.absoluteString.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
    }
}

/// What the second review found, each pinned down.
@Suite struct DeliveryReviewTests {
    @Test func anExpiringURLIsNotCachedPastItsTime() async throws {
        let origin = try await Fixture.origin()
        let soon = Int(Date().timeIntervalSince1970) + 600
        /// The max-age must be the time left when the answer was made: between
        /// what was left after the answer arrived and what was left before it was asked.
        @Sendable func expectTimeLeft(_ response: TestResponse, asked: Date, sourceLocation: SourceLocation = #_sourceLocation) throws {
            let answered = Date()
            // imgproxy's form: `max-age=N, public`.
            let age = try #require(response.header("Cache-Control").flatMap { Int($0.split(separator: ",").first?.split(separator: "=").last ?? "") },
                                   sourceLocation: sourceLocation)
            let most = soon - Int(asked.timeIntervalSince1970.rounded(.down))
            let least = soon - Int(answered.timeIntervalSince1970.rounded(.up)) - 1
            #expect((least...most).contains(age), "max-age \(age) outside \(least)...\(most)", sourceLocation: sourceLocation)
        }
        try await Fixture.withServer(Fixture.configuration()) { client, _ in
            var asked = Date()
            let image = try await client.execute(uri: Fixture.path("exp:\(soon)/w:20", origin.url("/a.png")), method: .get)
            try expectTimeLeft(image, asked: asked)
            asked = Date()
            let info = try await client.execute(uri: "/img/insecure/info/exp:\(soon)/plain/" + InfoEndpointTests.encoded(origin.url("/a.png")), method: .get)
            #expect(info.status == .ok)
            try expectTimeLeft(info, asked: asked)
            let lasting = try await client.execute(uri: Fixture.path("w:20", origin.url("/a.png")), method: .get)
            #expect(lasting.header("Cache-Control") == "max-age=31536000, public")
        }
    }

    @Test func imgproxysInfoLayoutIsAcceptedAndSignedWithoutInfo() throws {
        let key = try SigningKey(hexKey: "736563726574", hexSalt: "68656c6c6f")
        let unsigned = "/plain/http%3A%2F%2Fx%2Fa.png"
        let path = try ImageServerPath(parsing: "/info/" + key.signature(forPath: unsigned) + unsigned)
        #expect(path.isInfo)
        #expect(path.signedPart == unsigned)
        #expect(key.isValid(signature: path.signature, forPath: path.signedPart))
    }

    @Test func maxBytesNeverLoopsOnPNG() throws {
        let options = try ImageServerPath(parsing: "/insecure/q:80/mb:10/plain/http%3A%2F%2Fx%2Fa.png").options
        let image = MaxBytesTests.noisy
        #expect(try options.encoded(image, as: .png) == ImageEncoders.png().encode(image))
    }

    @Test func hugeNumbersAreWrittenBackWithoutTrapping() throws {
        var options = ProcessingOptions()
        options.zoomX = 1e300
        options.blur = 1e20
        let written = ImageServerPath(source: URL(string: "https://x.example/a.png")!, options: options).path(signedWith: nil)
        #expect(written.contains("z:1e+300"))
        #expect(throws: ImageServerError.self) { try ImageServerPath(parsing: "/insecure/t:1e300/plain/http%3A%2F%2Fx%2Fa.png") }
    }

    @Test func aPlainFilenameIsPercentDecoded() throws {
        let options = try ImageServerPath(parsing: "/insecure/fn:my%20photo/plain/http%3A%2F%2Fx%2Fa.png").options
        #expect(options.filename == "my photo")
    }

    @Test func presetsThatSetSecurityOptionsAreNamed() throws {
        let presets = try ImageServerPresets(["small": "mrd:100", "thumb": "rs:fit:50:50", "nested": "pr:small"])
        #expect(presets.namesSettingSecurityOptions == ["nested", "small"])
    }
}
#endif
