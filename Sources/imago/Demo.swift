import ArgumentParser
import Foundation
import Imago
import ImagoCodecs
import LoopbackServer
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `imago demo`: loading, validation and decoding end to end against a built-in loopback server.
struct Demo: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Start a sample server on loopback and load a feed and its images through Imago."
    )

    struct Feed: Decodable {
        struct Entry: Decodable {
            let artist: String
            let name: String
            let image: String
        }
        let entries: [Entry]
    }

    func run() async throws {
        let server = try await LoopbackServer.start(routes: try Self.sampleRoutes())
        defer { Task { try? await server.stop() } }
        print("Sample server on \(server.baseURL.absoluteString)")

        let client = NetworkClient(imageDecoder: ImageDecoders.all)
        let feed = try await client.json(Feed.self, for: URLRequest(url: server.url("/feed.json")))
        print("Feed: \(feed.entries.count) entries (JSON, content type and status checked)\n")

        // Each image is validated (content type, then status), then decoded
        // by the codec its bytes call for.
        for entry in feed.entries {
            let url = server.url(entry.image)
            let label = "\(entry.artist) – \(entry.name)".padding(toLength: 34, withPad: " ", startingAt: 0)
            let started = ContinuousClock.now
            do {
                let image = try await client.image(for: URLRequest(url: url))
                let ms = (ContinuousClock.now - started).milliseconds
                print("  ok    \(label) \(url.pathExtension) \(image.width)x\(image.height) \(image.pixelFormat), \(String(format: "%.1f", ms)) ms")
            } catch let error as NetworkClientError {
                print("  fail  \(label) \(error.code): \(error.underlying)")
            }
        }
    }

    static func sampleRoutes() throws -> [String: ServedResponse] {
        let entries: [(String, String, String)] = [
            ("Joni Mitchell", "Blue", "/art/blue.png"),
            ("Nina Simone", "Pastel Blues", "/art/pastel.jpg"),
            ("Kate Bush", "Hounds of Love", "/art/hounds.webp"),
            ("Miles Davis", "Kind of Blue", "/art/missing.png"),
            ("Talk Talk", "Spirit of Eden", "/art/page.html"),
        ]
        let json = entries.map { #"{"artist":"\#($0.0)","name":"\#($0.1)","image":"\#($0.2)"}"# }.joined(separator: ",")
        return [
            "/feed.json": .ok(Data(#"{"entries":[\#(json)]}"#.utf8), contentType: "application/json"),
            "/art/blue.png": .ok(try ImageEncoders.png().encode(artwork(hue: 0.6)), contentType: "image/png"),
            "/art/pastel.jpg": .ok(try ImageEncoders.jpeg().encode(artwork(hue: 0.9)), contentType: "IMAGE/JPEG"),
            "/art/hounds.webp": .ok(try ImageEncoders.webp().encode(artwork(hue: 0.1)), contentType: "image/webp"),
            "/art/page.html": .text("<html>sign in</html>", status: 200, contentType: "text/html"),
        ]
    }

    /// A 300x300 sample cover: concentric rings around one hue.
    static func artwork(hue: Double) -> Image {
        let size = 300
        var pixels = [UInt8]()
        pixels.reserveCapacity(size * size * 3)
        for y in 0..<size {
            for x in 0..<size {
                let dx = Double(x - size / 2), dy = Double(y - size / 2)
                let ring = 0.5 + 0.5 * sin((dx * dx + dy * dy).squareRoot() / 9)
                let angle = (hue + ring * 0.15) * 2 * Double.pi
                pixels += [
                    UInt8(127 + 120 * ring * cos(angle)),
                    UInt8(127 + 120 * ring * cos(angle - 2.094)),
                    UInt8(127 + 120 * ring * cos(angle + 2.094)),
                ]
            }
        }
        return Image(width: size, height: size, pixelFormat: .rgb8, pixels: pixels)
    }
}
