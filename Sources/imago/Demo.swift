import ArgumentParser
import Foundation
import Imago
import LoopbackServer
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `imago demo`: the networking layer end to end against a built-in loopback server.
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
        let server = try await LoopbackServer.start(routes: Self.sampleRoutes())
        defer { Task { try? await server.stop() } }
        print("Sample server on \(server.baseURL.absoluteString)")

        let client = NetworkClient()
        let feed = try await client.json(Feed.self, for: URLRequest(url: server.url("/feed.json")))
        print("Feed: \(feed.entries.count) entries (JSON, content type and status checked)\n")

        // Images are validated (content type, then status) and sniffed; the
        // codecs that turn them into bitmaps live in ImagoCodecs.
        let sniffer = ResponseHandler<(ImageFormat?, Int)>(accepting: .images) { data in (ImageFormat(sniffing: data), data.count) }
        for entry in feed.entries {
            let url = server.url(entry.image)
            let label = "\(entry.artist) – \(entry.name)".padding(toLength: 34, withPad: " ", startingAt: 0)
            do {
                let (format, bytes) = try await client.fetch(URLRequest(url: url), handler: sniffer)
                print("  ok    \(label) \(format?.description ?? "unknown") image, \(bytes) bytes")
            } catch let error as NetworkClientError {
                print("  fail  \(label) \(error.code): \(error.underlying)")
            }
        }
    }

    static func sampleRoutes() -> [String: ServedResponse] {
        let entries: [(String, String, String)] = [
            ("Joni Mitchell", "Blue", "/art/blue.png"),
            ("Nina Simone", "Pastel Blues", "/art/pastel.jpg"),
            ("Miles Davis", "Kind of Blue", "/art/missing.png"),
            ("Kate Bush", "Hounds of Love", "/art/page.html"),
        ]
        let json = entries.map { #"{"artist":"\#($0.0)","name":"\#($0.1)","image":"\#($0.2)"}"# }.joined(separator: ",")
        var png = Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])
        png.append(Data(count: 2_040))
        var jpeg = Data([0xFF, 0xD8, 0xFF, 0xE0])
        jpeg.append(Data(count: 4_092))
        return [
            "/feed.json": .ok(Data(#"{"entries":[\#(json)]}"#.utf8), contentType: "application/json"),
            "/art/blue.png": .ok(png, contentType: "image/png"),
            "/art/pastel.jpg": .ok(jpeg, contentType: "IMAGE/JPEG"),
            "/art/page.html": .text("<html>sign in</html>", status: 200, contentType: "text/html"),
        ]
    }
}
