import Foundation
import Imago
import ImagoCodecs
import LoopbackServer

/// The demo's server: a sample album feed in the iTunes top-albums JSON shape
/// and its artwork, generated in code, on a free loopback port.
///
/// Every album has artwork at 55, 100 and 170 pixels, distinct in colour and
/// pattern, as JPEG (even albums) or PNG (odd ones), served with
/// `Content-Type`, `Content-Length`, `ETag` and `Cache-Control`.
public struct SampleAlbumServer: Sendable {
    /// The running server.
    public let server: LoopbackServer
    /// The feed's URL.
    public var feedURL: URL { server.url("/feed/topalbums.json") }

    /// The albums served, as (artist, name).
    public static let albums: [(artist: String, name: String)] = [
        ("The Paper Kites", "Lantern Hours"), ("Mara Quell", "Salt and Cinder"), ("Northbound Static", "Low Sun Radio"),
        ("Ines Aldana", "Glass Orchard"), ("Velvet Harbour", "Night Ferries"), ("Juniper Vale", "Foxglove"),
        ("Otto Brandt Trio", "Blue Hours"), ("Solenne", "Tidal Letters"), ("Copperline", "Dust Road Hymns"),
        ("Kiri Anand", "Monsoon Maps"), ("The Quiet Engines", "Paper Planets"), ("Lumen & Ash", "Afterglow Suite"),
    ]

    /// Starts the server on a free loopback port.
    public static func start() async throws -> SampleAlbumServer {
        var routes: [String: ServedResponse] = [:]
        var entries: [String] = []
        let server = try await LoopbackServer.start()
        for (index, album) in albums.enumerated() {
            var images: [String] = []
            for size in [55, 100, 170] {
                let isJPEG = index % 2 == 0
                let image = artwork(index: index, size: size)
                let data = isJPEG ? try ImageEncoders.jpeg(quality: 88).encode(image) : try ImageEncoders.png().encode(image)
                let path = "/art/\(index)/\(size)x\(size)." + (isJPEG ? "jpg" : "png")
                routes[path] = ServedResponse(headers: [
                    ("Content-Type", isJPEG ? "image/jpeg" : "image/png"),
                    ("ETag", "\"\(String(fnv1a(data), radix: 16))\""),
                    ("Cache-Control", "public, max-age=3600"),
                ], body: data)
                images.append(#"{"label":"\#(server.url(path).absoluteString)","attributes":{"height":"\#(size)"}}"#)
            }
            entries.append(#"{"im:name":{"label":"\#(album.name)"},"im:artist":{"label":"\#(album.artist)"},"im:image":[\#(images.joined(separator: ","))]}"#)
        }
        let feed = Data(#"{"feed":{"title":{"label":"Imago sample albums"},"entry":[\#(entries.joined(separator: ","))]}}"#.utf8)
        routes["/feed/topalbums.json"] = ServedResponse(headers: [
            ("Content-Type", "application/json; charset=utf-8"), ("Cache-Control", "max-age=300"),
        ], body: feed)
        for (path, response) in routes { server.route(path, response) }
        return SampleAlbumServer(server: server)
    }

    /// Stops the server.
    public func stop() async throws {
        try await server.stop()
    }

    /// Cover art for album `index`: concentric rings or stripes in the album's own hues.
    static func artwork(index: Int, size: Int) -> Image {
        let hue = Double(index) / Double(albums.count)
        var pixels = [UInt8]()
        pixels.reserveCapacity(size * size * 3)
        for y in 0..<size {
            for x in 0..<size {
                let u = Double(x) / Double(size) - 0.5, v = Double(y) / Double(size) - 0.5
                let pattern: Double = switch index % 3 {
                case 0: 0.5 + 0.5 * sin((u * u + v * v).squareRoot() * 40)
                case 1: 0.5 + 0.5 * sin((u + v) * 25)
                default: (u * u + v * v).squareRoot() < 0.3 ? 1 : 0.25
                }
                let angle = (hue + pattern * 0.2) * 2 * Double.pi
                let light = 0.35 + 0.6 * pattern
                pixels += [
                    UInt8(max(0, min(255, 255 * light * (0.5 + 0.5 * cos(angle))))),
                    UInt8(max(0, min(255, 255 * light * (0.5 + 0.5 * cos(angle - 2.094))))),
                    UInt8(max(0, min(255, 255 * light * (0.5 + 0.5 * cos(angle + 2.094))))),
                ]
            }
        }
        return Image(width: size, height: size, pixelFormat: .rgb8, pixels: pixels)
    }
}

/// FNV-1a of the bytes, for ETags.
private func fnv1a(_ data: Data) -> UInt64 {
    data.reduce(0xCBF2_9CE4_8422_2325 as UInt64) { ($0 ^ UInt64($1)) &* 0x100_0000_01B3 }
}
