#if Server && os(Linux)
import Foundation
import HummingbirdTesting
import Imago
import ImagoAsyncHTTPClient
import ImagoCodecs
import ImagoServer
import LoopbackServer
import Testing
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// URLs made and signed by an existing imgproxy URL builder (PyPI `imgproxy`,
/// written to Fixtures/ by scripts/fixtures/imgproxy-builder-urls.py), one
/// or more for every option the server reads, are served as imgproxy's
/// documentation says: size, type, and pixels where the option changes them.
@Suite struct ImgproxyBuilderTests {
    struct Fixtures: Decodable {
        struct Pixel: Decodable { let x: Int; let y: Int; let rgb: [Int]; let tolerance: Int }
        struct Case: Decodable {
            let path: String
            let option: String
            let width: Int
            let height: Int
            let contentType: String
            var status: Int?
            var pixels: [Pixel]?
            var same: [[Int]]?
            var header: [String]?
            var sameAsSource: Bool?
            var maximumBytes: Int?
            var frames: Int?
        }
        let key: String
        let salt: String
        let cases: [Case]
    }

    /// Sends every request to the loopback origin, whatever host it names.
    struct ToOrigin: DataLoading {
        let origin: URL
        let inner: AsyncHTTPClientDataLoader
        func load(_ request: URLRequest) async throws -> DataLoadingResponse {
            var rewritten = request
            rewritten.url = origin.appendingPathComponent(request.url?.path ?? "/")
            return try await inner.load(rewritten)
        }
    }

    /// 100x80 white with a red 80x60 block at 10,10.
    static let bordered: Data = {
        var pixels = [UInt8]()
        for y in 0..<80 { for x in 0..<100 { pixels += (10..<90).contains(x) && (10..<70).contains(y) ? [255, 0, 0] : [255, 255, 255] } }
        return try! ImageEncoders.png().encode(Image(width: 100, height: 80, pixelFormat: .rgb8, pixels: pixels))
    }()

    static let transparent = try! ImageEncoders.png().encode(Image(width: 50, height: 50, pixelFormat: .rgba8, pixels: [UInt8](repeating: 0, count: 50 * 50 * 4)))

    @Test func everyBuilderURLIsServedAsImgproxyDocumentsIt() async throws {
        let file = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures/imgproxy-builder-urls.json")
        let fixtures = try JSONDecoder().decode(Fixtures.self, from: Data(contentsOf: file))
        // Every option the server reads has a URL.
        let options = Set(fixtures.cases.map(\.option))
        // (The builder writes its own `rs` last, so `w`, `h` and the like are
        // only seen overridden here; PathParsingTests has them on their own.)
        for option in ["rs", "s", "rt", "el", "g", "mw", "mh", "z", "dpr", "ex", "exar", "c", "t", "pd", "ar", "rot", "fl", "bg",
                       "mrd", "bl", "sh", "pix", "wm", "sm", "kcr", "scp", "q", "fq", "mb", "f", "ext", "cb", "exp", "fn", "skp", "raw",
                       "pr", "animation"] {
            #expect(options.contains(option) || fixtures.cases.contains { $0.path.contains("/\(option):") }, "no URL for \(option)")
        }
        let origin = try await Fixture.origin([
            "/photo.jpg": .ok(Fixture.jpeg, contentType: "image/jpeg"),
            "/alpha.png": .ok(Self.transparent, contentType: "image/png"),
            "/bordered.png": .ok(Self.bordered, contentType: "image/png"),
            "/anim.gif": .ok(Fixture.gif, contentType: "image/gif"),
        ])
        var loader = AsyncHTTPClientDataLoader.Configuration()
        loader.followsRedirects = false
        let configuration = Fixture.configuration {
            $0.acceptsUnsignedPaths = false
            $0.signingKeys = [try! SigningKey(hexKey: fixtures.key, hexSalt: fixtures.salt)]
            $0.transport = ToOrigin(origin: origin.baseURL, inner: AsyncHTTPClientDataLoader(configuration: loader))
            $0.watermark = Image(width: 10, height: 10, pixelFormat: .rgb8, pixels: Array(repeatElement([UInt8(255), 0, 0], count: 100).joined()))
            $0.presets = try! ImageServerPresets(["thumb": "c:100:100"])
            $0.allowsSecurityOptions = true
            $0.maximumAnimationFrames = 10
        }
        try await Fixture.withServer(configuration) { client, _ in
            for item in fixtures.cases {
                let response = try await client.execute(uri: "/img" + item.path, method: .get)
                let label = "\(item.option): \(item.path)"
                #expect(Int(response.status.code) == item.status ?? 200, "\(label): \(String(decoding: response.data.prefix(200), as: UTF8.self))")
                #expect(response.header("Content-Type") == item.contentType, "\(label)")
                guard item.status == nil else { continue }
                if item.sameAsSource == true { #expect(response.data == Fixture.jpeg, "\(label)") }
                if let limit = item.maximumBytes { #expect(response.data.count <= limit, "\(label): \(response.data.count) bytes") }
                if let header = item.header { #expect(response.header(header[0]) == header[1], "\(label)") }
                let image = try response.image()
                #expect((image.width, image.height) == (item.width, item.height), "\(label)")
                if let frames = item.frames { #expect(image.frames.count == frames, "\(label)") }
                for check in item.pixels ?? [] {
                    let got = image.pixel(x: check.x, y: check.y)
                    let close = zip(got.prefix(3), check.rgb).allSatisfy { abs(Int($0) - $1) <= check.tolerance }
                    #expect(close, "\(label) at \(check.x),\(check.y): \(got) vs \(check.rgb)")
                }
                for pair in item.same ?? [] {
                    #expect(image.pixel(x: pair[0], y: pair[1]) == image.pixel(x: pair[2], y: pair[3]), "\(label): \(pair)")
                }
            }
        }
    }
}
#endif
