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

/// Animated sources over HTTP: kept animated (frame by frame) when
/// `maximumAnimationFrames` allows, in WebP, GIF or APNG, with their
/// durations and loop count; the first frame otherwise.
@Suite struct AnimationServerTests {
    static let resources = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../ImagoCodecsTests/Resources")
    static let apng = try! Data(contentsOf: resources.appendingPathComponent("apng/dispose.png"))
    static let animatedWebP = try! Data(contentsOf: resources.appendingPathComponent("webp/animated.webp"))
    static let animatedAVIF = try! Data(contentsOf: resources.appendingPathComponent("avif/animated.avif"))

    /// The origin with the animations at `/a.gif` (16x16, 3 frames of 0.1, 0.2, 0.3 s, looping), `/a.apng`, `/anim.webp`, `/anim.avif`.
    static func origin(_ routes: [String: ServedResponse] = [:]) async throws -> LoopbackServer {
        try await Fixture.origin([
            "/a.apng": .ok(apng, contentType: "image/png"),
            "/anim.webp": .ok(animatedWebP, contentType: "image/webp"),
            "/anim.avif": .ok(animatedAVIF, contentType: "image/avif"),
        ].merging(routes) { $1 })
    }

    func get(_ client: any TestClientProtocol, _ options: String, _ source: URL, extension ext: String? = nil,
             accept: String? = nil) async throws -> TestResponse {
        var headers = HTTPFields()
        if let accept { headers[.accept] = accept }
        return try await client.execute(uri: Fixture.path(options, source, extension: ext), method: .get, headers: headers)
    }

    @Test func byDefaultAnAnimationGivesItsFirstFrame() async throws {
        let origin = try await Self.origin()
        try await Fixture.withServer(Fixture.configuration()) { client, _ in
            let response = try await get(client, "rs:fit:8:8", origin.url("/a.gif"), extension: "webp")
            #expect(response.status == .ok)
            let image = try response.image()
            #expect(image.frames.count == 1)
            #expect((image.width, image.height) == (8, 8))
        }
    }

    @Test func aGIFStaysAnAnimatedGIFWithItsTiming() async throws {
        let origin = try await Self.origin()
        try await Fixture.withServer(Fixture.configuration { $0.maximumAnimationFrames = 10 }) { client, _ in
            let response = try await get(client, "rs:fit:8:8", origin.url("/a.gif"))
            #expect(response.header("Content-Type") == "image/gif")
            let image = try response.image()
            let source = try ImageDecoders.all.decode(Fixture.gif)
            #expect(image.frames.count == 3)
            #expect((image.width, image.height) == (8, 8))
            #expect(image.frames.map(\.duration) == source.frames.map(\.duration))
            #expect(image.loopCount == source.loopCount)
            // Each frame is the source's frame, resized.
            for index in 0..<3 {
                let comparison = ImageComparison(image.derived(frame: index), source.derived(frame: index).resized(width: 8, height: 8))
                #expect(comparison.matches(.within(levels: 16)), "frame \(index): \(comparison)")
            }
        }
    }

    /// GIF and WebP stay animated; PNG (as in imgproxy), JPEG and AVIF give the first frame.
    @Test(arguments: [("webp", "image/webp", 3), ("png", "image/png", 1), ("gif", "image/gif", 3), ("jpg", "image/jpeg", 1), ("avif", "image/avif", 1)])
    func theFormatDecidesWhetherItStaysAnimated(_ ext: String, _ type: String, _ frames: Int) async throws {
        let origin = try await Self.origin()
        try await Fixture.withServer(Fixture.configuration { $0.maximumAnimationFrames = 10 }) { client, _ in
            let response = try await get(client, "rs:fill:12:12", origin.url("/a.gif"), extension: ext)
            #expect(response.status == .ok)
            #expect(response.header("Content-Type") == type)
            let image = try response.image()
            #expect(image.frames.count == frames)
            #expect((image.width, image.height) == (12, 12))
            if frames > 1 { #expect(image.frames.map(\.duration) == [0.1, 0.2, 0.3]) }
        }
    }

    @Test func otherAnimatedSourcesStayAnimated() async throws {
        let origin = try await Self.origin()
        try await Fixture.withServer(Fixture.configuration { $0.maximumAnimationFrames = 10 }) { client, _ in
            let apng = try await get(client, "w:32", origin.url("/a.apng"))
            #expect(apng.header("Content-Type") == "image/webp", "APNG animations become WebP")
            let apngImage = try apng.image()
            #expect(apngImage.frames.count == 4)
            #expect(apngImage.width == 32)
            let webp = try await get(client, "w:4", origin.url("/anim.webp"))
            #expect(webp.header("Content-Type") == "image/webp")
            let webpImage = try webp.image()
            #expect(webpImage.frames.count == 3)
            #expect(webpImage.loopCount == 3)
            let avif = try await get(client, "w:32", origin.url("/anim.avif"))
            #expect(avif.header("Content-Type") == "image/webp", "AVIF animations become WebP")
            #expect(try avif.image().frames.count == 3)
        }
    }

    @Test func theFrameLimitKeepsTheFirstFrames() async throws {
        let origin = try await Self.origin()
        try await Fixture.withServer(Fixture.configuration { $0.maximumAnimationFrames = 2 }) { client, _ in
            let image = try await get(client, "", origin.url("/a.gif")).image()
            #expect(image.frames.count == 2)
            #expect(image.frames.map(\.duration) == [0.1, 0.2])
        }
    }

    @Test func negotiationSkipsAVIFForAnimations() async throws {
        let origin = try await Self.origin()
        let configuration = Fixture.configuration {
            $0.maximumAnimationFrames = 10
            $0.outputPolicy = OutputPolicy(automatic: [.avif, .webp])
        }
        try await Fixture.withServer(configuration) { client, _ in
            let animated = try await get(client, "w:8", origin.url("/a.gif"), accept: "image/avif,image/webp,*/*")
            #expect(animated.header("Content-Type") == "image/webp")
            #expect(animated.header("Vary") == "Accept")
            #expect(try animated.image().frames.count == 3)
            let still = try await get(client, "w:8", origin.url("/a.png"), accept: "image/avif,image/webp,*/*")
            #expect(still.header("Content-Type") == "image/avif")
            // Only AVIF accepted: the animation follows its source.
            let gifOnly = try await get(client, "w:8", origin.url("/a.gif"), accept: "image/avif")
            #expect(gifOnly.header("Content-Type") == "image/gif")
        }
    }

    @Test func thePixelLimitCountsTheFramesKept() async throws {
        // 25 frames on a 1500x1500 canvas: 56 megapixels in all, over the
        // 50 MP limit; 20 of them are 45. Each frame draws one pixel, so the
        // file is tiny and the canvas is what counts.
        var long = Data("GIF89a".utf8) + [0xDC, 0x05, 0xDC, 0x05, 0x80, 0x00, 0x00, 0, 0, 0, 255, 255, 255]
        for _ in 0..<25 {
            long += [0x21, 0xF9, 0x04, 0x00, 0x05, 0x00, 0x00, 0x00]                // 50 ms
            long += [0x2C, 0, 0, 0, 0, 0x01, 0x00, 0x01, 0x00, 0x00]                // 1x1 at 0,0
            long += [0x02, 0x02, 0x44, 0x01, 0x00]                                  // clear, 0, end
        }
        long += [0x3B]
        let origin = try await Self.origin(["/long.gif": .ok(long, contentType: "image/gif")])
        for (limit, status, frames) in [(25, 422, 0), (20, 200, 20), (1, 200, 1)] {
            try await Fixture.withServer(Fixture.configuration { $0.maximumAnimationFrames = limit }) { client, _ in
                let response = try await get(client, "w:10", origin.url("/long.gif"), extension: "gif")
                #expect(Int(response.status.code) == status, "limit \(limit)")
                if status == 200 {
                    let image = try response.image()
                    #expect(image.frames.count == frames)
                    #expect(image.width == 10)
                } else {
                    #expect(response.errorCode == "source_too_large")
                }
            }
        }
    }

    @Test func everyFrameIsWatermarked() async throws {
        let origin = try await Self.origin()
        let mark = Image(width: 4, height: 4, pixelFormat: .rgb8, pixels: Array(repeatElement([UInt8(255), 0, 255], count: 16).joined()))
        try await Fixture.withServer(Fixture.configuration {
            $0.maximumAnimationFrames = 10
            $0.watermark = mark
        }) { client, _ in
            // GIF: the animation stays one; its palette keeps the mark's magenta within a few levels.
            let image = try await get(client, "rs:fit:12:12/wm:1:nowe", origin.url("/a.gif"), extension: "gif").image()
            #expect(image.frames.count == 3)
            for index in 0..<3 {
                let pixel = image.derived(frame: index).converted(to: .rgba8).pixel(x: 1, y: 1)
                #expect(zip(pixel, [255, 0, 255, 255] as [UInt8]).allSatisfy { abs(Int($0) - Int($1)) <= 8 }, "frame \(index): \(pixel)")
            }
        }
    }
}

extension Image {
    /// Frame `index` alone.
    func derived(frame index: Int) -> Image {
        Image(width: width, height: height, pixelFormat: pixelFormat, bytesPerRow: bytesPerRow, pixels: frames[index].pixels)
    }
}
#endif
