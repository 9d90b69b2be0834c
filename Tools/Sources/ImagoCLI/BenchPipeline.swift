import ArgumentParser
import CommandLineSupport
import Foundation
@_spi(Testing) import Imago
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
            abstract: "Load many images over HTTP through the pipeline (fetch, decode, thumbnail; with --encode, an encode too) and report the throughput.",
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

        @Option(help: ArgumentHelp("Also encode each thumbnail to FORMAT (jpeg, webp, avif or png), as an image server answers.",
                                   valueName: "FORMAT"))
        var encode: Fetch.OutputFormat?

        @Option(help: "The quality of --encode for jpeg, webp and avif, 1-100 (default: 85, 80 and 60, as fetch writes).")
        var quality: Int?

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
            if let quality, !(1...100).contains(quality) { throw ValidationError("--quality must be between 1 and 100.") }
            if quality != nil && encode == nil { throw ValidationError("--quality applies to --encode; name a format.") }
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
            let encoder = encode.map { Fetch.encoder(for: $0.format, quality: quality, pngCompression: .default) }
            let started = ContinuousClock.now
            let failures = await withTaskGroup(of: Bool.self) { group in
                for url in requested {
                    group.addTask {
                        do {
                            let response = try await pipeline.image(for: ImageRequest(url: url, maximumPixelSize: maxSize > 0 ? maxSize : nil))
                            _ = try encoder?.encode(response.image)
                            return true
                        } catch {
                            return false
                        }
                    }
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
                    ("encode", encode.map { .string($0.rawValue) } ?? .null),
                    ("seconds", .double(seconds)), ("images_per_s", .double(Double(requested.count) / seconds)),
                    ("downloads", .int(statistics.downloads)), ("decodes", .int(statistics.decodes)), ("failures", .int(failures)),
                ]).text)
            } else {
                Output.line(String(format: "%d images in %.3f s: %.1f images/s (%@, concurrency %d, %d downloads, %d decodes, %d failures)",
                                   requested.count, seconds, Double(requested.count) / seconds, loader.rawValue, concurrency,
                                   statistics.downloads, statistics.decodes, failures)
                            + (encode.map { ", each encoded to \($0.rawValue)" } ?? ""))
            }
            if failures > 0 { throw ExitCode(1) }
        }
    }
}
