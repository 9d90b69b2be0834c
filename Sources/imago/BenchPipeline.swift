import ArgumentParser
import Foundation
import Imago
import ImagoAsyncHTTPClient
import ImagoCodecs
import LoopbackServer
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension Bench {
    /// `imago bench pipeline`: fetch, decode and thumbnail many images over HTTP.
    struct Pipeline: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Load many images over HTTP through the pipeline (fetch, decode, thumbnail) and report the throughput.",
            discussion: "Without --input, a built-in server on loopback serves --images generated images (JPEG, PNG and WebP of several sizes)."
        )

        @Option(help: ArgumentHelp("Read image URLs from FILE, one per line.", valueName: "FILE"))
        var input: String?

        @Option(help: "How many images the built-in server serves.")
        var images: Int = 2_000

        @Option(help: "Downloads in flight at once.")
        var concurrency: Int = 8

        @Option(help: ArgumentHelp("The thumbnail's longer side in pixels; 0 decodes at full size.", valueName: "N"))
        var maxSize: Int = 256

        @Option(help: ArgumentHelp("A memory cache of this many megabytes (default: none).", valueName: "MB"))
        var memoryCache: Int = 0

        @Option(help: ArgumentHelp("Serve only JPEGs of this size, such as 4000x3000 (built-in server only).", valueName: "WxH"))
        var photoSize: String?

        @Option(help: "The network loader: asynchttpclient or urlsession.")
        var loader: NetworkLoaderKind = .asynchttpclient

        @Flag(help: "Request the first image --images times at once, to check that they share one download and one decode.")
        var sameURL = false

        @Flag(help: "One JSON object, on one line.")
        var json = false

        func validate() throws {
            if images < 1 || concurrency < 1 || maxSize < 0 || memoryCache < 0 {
                throw ValidationError("--images and --concurrency must be at least 1, --max-size and --memory-cache at least 0.")
            }
            if photoSize != nil && SampleImages.size(photoSize) == nil { throw ValidationError("--photo-size takes WIDTHxHEIGHT.") }
        }

        func run() async throws {
            var server: LoopbackServer?
            let urls: [URL]
            if let input {
                urls = try SourceLoader.sources(inFile: input).map(SourceLoader.url(for:))
            } else {
                let samples = try SampleImages.make(photoSize: SampleImages.size(photoSize))
                server = try await LoopbackServer.start(handler: samples.handler)
                urls = samples.paths(count: images).map { server!.url($0) }
            }
            let requested = sameURL ? Array(repeating: urls[0], count: images) : urls
            let pipeline = ImagePipeline(configuration: .init(
                dataLoader: DataLoader(network: loader.make(connectionsPerHost: concurrency)),
                dataCache: nil,
                imageCache: memoryCache > 0 ? ImageCache(configuration: .init(costLimit: memoryCache << 20)) : nil,
                decoder: ImageDecoders.all,
                maximumConcurrentDownloads: concurrency
            ))
            let started = ContinuousClock.now
            let failures = await withTaskGroup(of: Bool.self) { group in
                for url in requested {
                    group.addTask { (try? await pipeline.image(for: ImageRequest(url: url, maximumPixelSize: maxSize > 0 ? maxSize : nil))) != nil }
                }
                var failures = 0
                for await ok in group where !ok { failures += 1 }
                return failures
            }
            let seconds = (ContinuousClock.now - started).milliseconds / 1_000
            try await server?.stop()
            let statistics = pipeline.statistics
            if json {
                Output.line(JSONValue.object([
                    ("benchmark", .string("pipeline")), ("loader", .string(loader.rawValue)),
                    ("images", .int(requested.count)), ("concurrency", .int(concurrency)),
                    ("seconds", .double(seconds)), ("images_per_s", .double(Double(requested.count) / seconds)),
                    ("downloads", .int(statistics.downloads)), ("decodes", .int(statistics.decodes)), ("failures", .int(failures)),
                ]).text)
            } else {
                Output.line(String(format: "%d images in %.3f s: %.1f images/s (%@, concurrency %d, %d downloads, %d decodes, %d failures)",
                                   requested.count, seconds, Double(requested.count) / seconds, loader.rawValue, concurrency,
                                   statistics.downloads, statistics.decodes, failures))
            }
            if failures > 0 { throw ExitCode(1) }
        }
    }

    /// `imago bench serve`: the benchmark's image server, for comparisons with other clients.
    struct Serve: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Serve generated images on loopback and write their URLs to a file, until interrupted."
        )

        @Option(help: "How many image URLs to list.")
        var images: Int = 2_000

        @Option(help: ArgumentHelp("Write the URLs to FILE, one per line.", valueName: "FILE"))
        var list: String

        @Option(help: ArgumentHelp("Serve only JPEGs of this size, such as 4000x3000.", valueName: "WxH"))
        var photoSize: String?

        func run() async throws {
            let samples = try SampleImages.make(photoSize: SampleImages.size(photoSize))
            let server = try await LoopbackServer.start(handler: samples.handler)
            let text = samples.paths(count: images).map { server.url($0).absoluteString }.joined(separator: "\n") + "\n"
            try OutputFile.save(Data(text.utf8), to: SourceLoader.url(for: list))
            Output.error("serving \(images) images on \(server.baseURL.absoluteString); URLs in \(list)")
            while true { try await Task.sleep(for: .seconds(3_600)) }
        }
    }
}

/// Generated photo-like images in several formats and sizes, served under
/// many distinct paths (every path is its own download and decode).
struct SampleImages: Sendable {
    let variants: [(data: Data, contentType: String, fileExtension: String)]

    /// Parses `WxH`.
    static func size(_ text: String?) -> (width: Int, height: Int)? {
        guard let parts = text?.lowercased().split(separator: "x"), parts.count == 2,
              let width = Int(parts[0]), let height = Int(parts[1]), width > 0, height > 0 else { return nil }
        return (width, height)
    }

    static func make(photoSize: (width: Int, height: Int)? = nil) throws -> SampleImages {
        if let photoSize {
            let image = photo(width: photoSize.width, height: photoSize.height, seed: 7)
            return SampleImages(variants: [(try ImageEncoders.jpeg(quality: 85).encode(image), "image/jpeg", "jpg")])
        }
        var variants: [(Data, String, String)] = []
        for (index, (width, height)) in [(1200, 900), (1000, 750), (800, 600), (640, 480), (1600, 1200)].enumerated() {
            let image = photo(width: width, height: height, seed: index)
            variants.append((try ImageEncoders.jpeg(quality: 80).encode(image), "image/jpeg", "jpg"))
            if index < 2 { variants.append((try ImageEncoders.webp(quality: 75).encode(image), "image/webp", "webp")) }
            if index == 3 { variants.append((try ImageEncoders.png().encode(image.resized(width: 480, height: 360)), "image/png", "png")) }
        }
        return SampleImages(variants: variants)
    }

    /// `count` distinct paths, cycling through the variants.
    func paths(count: Int) -> [String] {
        (0..<count).map { "/img/\($0)-\($0 % variants.count).\(variants[$0 % variants.count].fileExtension)" }
    }

    /// Answers `/img/N-V.ext` with variant V.
    var handler: LoopbackServer.Handler {
        let variants = self.variants
        return { request in
            guard request.path.hasPrefix("/img/"),
                  let dash = request.path.lastIndex(of: "-"),
                  let dot = request.path.lastIndex(of: "."),
                  let variant = Int(request.path[request.path.index(after: dash)..<dot]),
                  variants.indices.contains(variant) else { return nil }
            let (data, contentType, _) = variants[variant]
            return ServedResponse(headers: [("Content-Type", contentType), ("Cache-Control", "max-age=3600")], body: data)
        }
    }

    /// A photo-like picture: smooth colour fields with fine detail.
    static func photo(width: Int, height: Int, seed: Int) -> Image {
        var pixels = [UInt8](repeating: 0, count: width * height * 3)
        var state = UInt64(seed) &* 0x9E37_79B9_7F4A_7C15 | 1
        for y in 0..<height {
            for x in 0..<width {
                state ^= state << 13; state ^= state >> 7; state ^= state << 17
                let noise = Int(state % 24) - 12
                let base = (y * width + x) * 3
                let fx = Double(x) / Double(width), fy = Double(y) / Double(height)
                pixels[base] = UInt8(clamping: Int(128 + 100 * sin(fx * 7 + Double(seed))) + noise)
                pixels[base + 1] = UInt8(clamping: Int(128 + 100 * cos(fy * 5 + fx * 3)) + noise)
                pixels[base + 2] = UInt8(clamping: Int(128 + 90 * sin((fx + fy) * 11)) + noise)
            }
        }
        return Image(width: width, height: height, pixelFormat: .rgb8, pixels: pixels)
    }
}
