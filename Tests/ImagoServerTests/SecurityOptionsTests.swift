#if Server && os(Linux)
import Foundation
import HTTPTypes
import HummingbirdTesting
import Imago
import ImagoCodecs
import ImagoServer
import ImagoTesting
import LoopbackServer
import Testing

/// imgproxy's security options in paths (`max_src_resolution`,
/// `max_src_file_size`, `max_animation_frames`,
/// `max_animation_frame_resolution`): refused unless the server allows
/// them, then the path's limits replace the server's; and the server's own
/// defaults (``ImageServerConfiguration/defaultOptions``), which are never
/// refused.
@Suite struct SecurityOptionsTests {
    static let heicWithItem = try! Data(contentsOf: URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().appendingPathComponent("../ImagoCodecsTests/Resources/heic/thumbnail-item.heic"))

    static func origin() async throws -> LoopbackServer {
        try await Fixture.origin(["/item.heic": .ok(heicWithItem, contentType: "image/heic")])
    }

    @Test func pathsMaySetThemOnlyWhereAllowed() async throws {
        let origin = try await Self.origin()
        try await Fixture.withServer(Fixture.configuration()) { client, _ in
            for option in ["msr:1", "msfs:1000", "maf:5", "mafr:1", "max_src_resolution:2.5"] {
                let response = try await client.execute(uri: Fixture.path(option, origin.url("/a.jpg")), method: .get)
                #expect(response.status == .forbidden, "\(option)")
                #expect(response.errorCode == "forbidden_option")
            }
        }
        #expect(origin.requests.isEmpty)
    }

    @Test func aPathsPixelAndByteLimitsReplaceTheServers() async throws {
        let origin = try await Self.origin()
        let configuration = Fixture.configuration {
            $0.allowsSecurityOptions = true
            $0.maximumSourcePixels = 100
        }
        try await Fixture.withServer(configuration) { client, _ in
            // The 200x150 photo: above the server's 100 pixels, within the path's 0.03 MP.
            let refused = try await client.execute(uri: Fixture.path("w:10", origin.url("/a.jpg")), method: .get)
            #expect(refused.errorCode == "source_too_large")
            let raised = try await client.execute(uri: Fixture.path("w:10/msr:0.03", origin.url("/a.jpg")), method: .get)
            #expect(raised.status == .ok)
            let lowered = try await client.execute(uri: Fixture.path("w:10/msr:0.029", origin.url("/a.png")), method: .get)
            #expect(lowered.errorCode == "source_too_large")
            let small = try await client.execute(uri: Fixture.path("w:10/msr:1/msfs:100", origin.url("/a.jpg")), method: .get)
            #expect(small.status == .unprocessableContent)
            #expect(small.errorCode == "source_too_large")
            let enough = try await client.execute(uri: Fixture.path("w:10/msr:1/msfs:\(Fixture.jpeg.count)", origin.url("/a.jpg")), method: .get)
            #expect(enough.status == .ok)
        }
    }

    /// A source over the path's byte limit failed to load: a fallback answers it.
    @Test func aSourceOverThePathsByteLimitGetsTheFallback() async throws {
        let origin = try await Self.origin()
        let configuration = Fixture.configuration {
            $0.allowsSecurityOptions = true
            $0.fallbackImage = FallbackImage(data: try! ImageEncoders.png().encode(TestImages.solid(width: 4, height: 4)))
        }
        try await Fixture.withServer(configuration) { client, _ in
            let response = try await client.execute(uri: Fixture.path("msfs:100", origin.url("/a.jpg")), method: .get)
            #expect(response.status == .ok)
            #expect(try response.image().width == 4)
        }
    }

    @Test func aPathsFrameLimitsReplaceTheServers() async throws {
        let info = try ImageDecoders.info(for: Fixture.gif)
        try #require(info.frameCount >= 3)
        let origin = try await Self.origin()
        let configuration = Fixture.configuration {
            $0.allowsSecurityOptions = true
            $0.maximumSourcePixels = info.width * info.height * 2
        }
        try await Fixture.withServer(configuration) { client, _ in
            // The server renders animations as stills (its first frame is within the limit).
            let still = try await client.execute(uri: Fixture.path("w:20", origin.url("/a.gif")), method: .get)
            #expect(try ImageDecoders.info(for: still.data).frameCount == 1)
            // The path keeps the animation; all its frames then count, above the limit.
            let total = try await client.execute(uri: Fixture.path("w:20/maf:100", origin.url("/a.gif")), method: .get)
            #expect(total.errorCode == "source_too_large")
            // Checked frame by frame instead, each within a frame's limit.
            let framePixels = Double(info.width * info.height) / 1_000_000
            let perFrame = try await client.execute(uri: Fixture.path("w:20/maf:100/mafr:\(framePixels)", origin.url("/a.gif")), method: .get)
            #expect(perFrame.status == .ok)
            #expect(try ImageDecoders.info(for: perFrame.data).frameCount == info.frameCount)
            let tooSmall = try await client.execute(uri: Fixture.path("w:20/maf:100/mafr:\(framePixels / 2)", origin.url("/a.gif")), method: .get)
            #expect(tooSmall.errorCode == "source_too_large")
        }
    }

    /// The server's defaults are its own: a security limit there is not
    /// refused, and options there apply unless the path says otherwise.
    @Test func theServersDefaultsApplyToEveryPath() async throws {
        let origin = try await Self.origin()
        var defaults = ProcessingOptions()
        defaults.maximumSourcePixels = 100
        defaults.enforcesThumbnail = true
        try await Fixture.withServer(Fixture.configuration { $0.defaultOptions = defaults }) { client, _ in
            let limited = try await client.execute(uri: Fixture.path("w:10", origin.url("/a.jpg")), method: .get)
            #expect(limited.errorCode == "source_too_large")
        }
        defaults.maximumSourcePixels = nil
        try await Fixture.withServer(Fixture.configuration { $0.defaultOptions = defaults }) { client, _ in
            let item = try await client.execute(uri: Fixture.path("f:png", origin.url("/item.heic")), method: .get)
            #expect(try (item.image().width, item.image().height) == (320, 240))
            let primary = try await client.execute(uri: Fixture.path("f:png/eth:0", origin.url("/item.heic")), method: .get)
            #expect(try primary.image().width == 640)
            // The item is the source: a larger box does not reach past it (no enlarging).
            let boxed = try await client.execute(uri: Fixture.path("rs:fit:600:600/f:png", origin.url("/item.heic")), method: .get)
            #expect(try boxed.image().width == 320)
        }
    }
}
#endif
