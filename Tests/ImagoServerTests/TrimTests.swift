#if Server && os(Linux)
import Foundation
import ImageFixtures
import Imago
import ImagoServer
import Testing

/// `trim`, on images shaped like imgproxy's own trim fixtures, with the
/// sizes its tests expect.
@Suite struct TrimTests {
    func trimmed(_ options: String, _ image: Image = ProcessingFixtures.rings) throws -> Image {
        try ImageServerPath(parsing: "/insecure/\(options)/plain/http%3A%2F%2Fx%2Fa.png").options.apply(to: image)
    }

    @Test(arguments: [
        ("t:5", 320, 220), ("t:100", 290, 190), ("t:150", 260, 160), ("t:200", 230, 130), ("t:220", 200, 100),
        ("t:0:ff0000", 350, 250), ("t:5::1", 330, 220), ("t:5:::1", 320, 230), ("t:5::1:1", 330, 230),
        ("trim:5:fff", 320, 220), ("t:250", 350, 250),
    ])
    func theThresholdFindsEachBorder(_ options: String, _ width: Int, _ height: Int) throws {
        let image = try trimmed(options)
        #expect("\(image.width)x\(image.height)" == "\(width)x\(height)", "\(options)")
    }

    @Test func trimmingComesBeforeResizing() throws {
        let image = try trimmed("t:220/rs:fit:100:100")
        #expect((image.width, image.height) == (100, 50))
    }

    @Test func transparencyTrimsAsMagenta() throws {
        // 20x10, transparent except an 8x6 opaque blue block at (6, 2)
        // (big enough that the median filter keeps its corners).
        var pixels = [UInt8](repeating: 0, count: 20 * 10 * 4)
        for y in 2..<8 { for x in 6..<14 { pixels.replaceSubrange((y * 20 + x) * 4..<(y * 20 + x) * 4 + 4, with: [0, 0, 255, 255]) } }
        let image = Image(width: 20, height: 10, pixelFormat: .rgba8, pixels: pixels)
        let trimmed = try trimmed("t:10:ff00ff", image)
        #expect((trimmed.width, trimmed.height) == (8, 6))
        #expect(trimmed.pixelFormat == .rgba8)
        #expect(trimmed.pixel(x: 0, y: 0) == [0, 0, 255, 255])
    }

    @Test func parsing() throws {
        let options = try ImageServerPath(parsing: "/insecure/t:10:abc:1:0/plain/http%3A%2F%2Fx%2Fa.png").options
        #expect(options.trim == ProcessingOptions.Trim(threshold: 10, color: .init(red: 0xAA, green: 0xBB, blue: 0xCC), equalHorizontal: true))
        #expect(try ImageServerPath(parsing: "/insecure/t:10/t:/plain/http%3A%2F%2Fx%2Fa.png").options.trim == nil)
        #expect(throws: ImageServerError.self) { try ImageServerPath(parsing: "/insecure/t:-1/plain/http%3A%2F%2Fx%2Fa.png") }
        #expect(throws: ImageServerError.self) { try ImageServerPath(parsing: "/insecure/t:1:zzz/plain/http%3A%2F%2Fx%2Fa.png") }
        var written = ProcessingOptions()
        written.trim = ProcessingOptions.Trim(threshold: 7.5, color: .init(red: 1, green: 2, blue: 3), equalVertical: true)
        let path = ImageServerPath(source: URL(string: "https://x.example/a.png")!, options: written).path(signedWith: nil)
        #expect(try ImageServerPath(parsing: path).options == written)
    }
}
#endif
