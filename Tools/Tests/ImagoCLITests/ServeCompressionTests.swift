import ChildProcesses
import Foundation
import ImagoCodecs
import ImagoTesting
import Testing

/// imgproxy's compression variables, read by `imago serve` and checked at
/// start: the answers are written as they say.
@Suite struct ServeCompressionTests {
    /// The bytes of `data` after the first occurrence of `marker`, or nil.
    static func byte(after marker: [UInt8], offset: Int, in data: Data) -> UInt8? {
        let bytes = [UInt8](data)
        guard bytes.count > marker.count else { return nil }
        for start in 0...(bytes.count - marker.count) where Array(bytes[start..<start + marker.count]) == marker {
            return start + marker.count + offset < bytes.count ? bytes[start + marker.count + offset] : nil
        }
        return nil
    }

    @Test func imgproxysCompressionVariablesShapeTheAnswers() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("imago-compression-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        try ImageEncoders.png().encode(TestImages.gradient(width: 64, height: 48)).write(to: folder.appendingPathComponent("g.png"))
        let server = try await ServeTests.Running(["--unsigned", "--local-root", folder.path], environment: [
            "IMGPROXY_JPEG_PROGRESSIVE": "true", "IMGPROXY_PNG_INTERLACED": "1", "IMGPROXY_PNG_QUANTIZE": "true",
            "IMGPROXY_PNG_QUANTIZATION_COLORS": "16", "IMGPROXY_WEBP_PRESET": "photo", "IMGPROXY_WEBP_EFFORT": "6",
        ])
        let jpeg = try await server.get("/insecure/w:32/plain/local:%2F%2F%2Fg.png@jpg")
        #expect(jpeg.status == 200)
        #expect(Self.byte(after: [0xFF, 0xC2], offset: 0, in: jpeg.body) != nil, "a progressive frame (SOF2)")
        #expect(Self.byte(after: [0xFF, 0xC0], offset: 0, in: jpeg.body) == nil, "no baseline frame (SOF0)")
        let png = try await server.get("/insecure/w:32/plain/local:%2F%2F%2Fg.png@png")
        #expect(png.status == 200)
        let ihdr = Array("IHDR".utf8)
        #expect(Self.byte(after: ihdr, offset: 8, in: png.body) == 4, "a bit depth of 4 for 16 colours")
        #expect(Self.byte(after: ihdr, offset: 9, in: png.body) == 3, "an indexed PNG")
        #expect(Self.byte(after: ihdr, offset: 12, in: png.body) == 1, "Adam7 interlacing")
        let webp = try await server.get("/insecure/w:32/plain/local:%2F%2F%2Fg.png@webp")
        #expect(webp.status == 200)
        #expect(try ImageDecoders.info(for: webp.body).width == 32)
        #expect(await server.stop() == 0)
    }

    @Test func valuesImgproxyRefusesStopTheStart() async throws {
        for (variable, value) in [("IMGPROXY_PNG_QUANTIZATION_COLORS", "1"), ("IMGPROXY_PNG_QUANTIZATION_COLORS", "257"),
                                  ("IMGPROXY_WEBP_PRESET", "poster"), ("IMGPROXY_WEBP_EFFORT", "0"), ("IMGPROXY_WEBP_EFFORT", "7"),
                                  ("IMGPROXY_AVIF_SPEED", "10"), ("IMGPROXY_JXL_EFFORT", "0"), ("IMGPROXY_JXL_EFFORT", "10")] {
            let result = try await HostileClientTests.run(["serve", "--unsigned", "--print-config"], environment: [variable: value])
            #expect(result.status == 2, "\(variable)=\(value): \(result.stderr)")
        }
        let printed = try await HostileClientTests.run(["serve", "--unsigned", "--print-config"],
                                                       environment: ["IMGPROXY_AVIF_SPEED": "5", "IMGPROXY_WEBP_PRESET": "TEXT"])
        for line in ["avif-speed = 5", "webp-preset = text", "jxl-effort = 4", "jpeg-progressive = false"] {
            #expect(printed.stdout.contains(line), "\(line) in \(printed.stdout)")
        }
    }
}
