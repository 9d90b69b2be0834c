import ArgumentParser
import CommandLineSupport
import Foundation
import Imago
import ImagoCodecs

extension Harness {
    /// `imago-harness client`: the cost of a memory-cache hit through ``ImageClient``.
    struct Client: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Time memory-cache hits through ImageClient: downloadImage and setImage."
        )

        @Option(help: "Calls per measurement.")
        var iterations: Int = 1_000_000

        @Flag(help: "One JSON object per benchmark, one per line.")
        var json = false

        func validate() throws {
            if iterations < 1 { throw ValidationError("--iterations must be at least 1.") }
        }

        func run() async throws {
            let pipeline = ImagePipeline(configuration: .init(imageCache: ImageCache(), decoder: ImageDecoders.all))
            let client = ImageClient(pipeline: pipeline, responseQueue: nil)
            let url = URL(string: "https://bench.example/cover.jpg")!
            let image = Image(width: 64, height: 64, pixelFormat: .rgb8, pixels: [UInt8](repeating: 90, count: 64 * 64 * 3))
            guard let key = pipeline.cacheKey(for: ImageRequest(url: url)) else { throw ValidationError("no cache key for \(url)") }
            pipeline.configuration.imageCache?.store(image, for: key)
            let target = BenchTarget()
            let iterations = self.iterations
            let results: [(String, Double)] = [
                ("client-downloadImage-hit", Self.nanoseconds(iterations) {
                    _ = client.downloadImage(from: url) { _ in }
                }),
                ("client-setImage-hit", Self.nanoseconds(iterations) {
                    client.setImage(on: target, from: url, placeholder: nil)
                }),
                ("memory-cache-hit", Self.nanoseconds(iterations) {
                    _ = pipeline.configuration.imageCache?.image(for: key)
                }),
            ]
            guard target.count == min(iterations, 10_000) + 5 * iterations else { throw ValidationError("setImage did not display on every hit") }
            if !json { Output.line("benchmark                    iterations  ns_per_call") }
            for (name, ns) in results {
                if json {
                    Output.line(JSONValue.object([("benchmark", .string(name)), ("iterations", .int(iterations)), ("ns_per_call", .double(ns))]).text)
                } else {
                    Output.line(name.padding(toLength: 27, withPad: " ", startingAt: 0) + String(format: "  %10d  %11.1f", iterations, ns))
                }
            }
        }

        /// The median of five runs of `iterations` calls, in nanoseconds per call, after a warm-up.
        static func nanoseconds(_ iterations: Int, _ body: () -> Void) -> Double {
            for _ in 0..<min(iterations, 10_000) { body() }
            var runs: [Double] = []
            for _ in 0..<5 {
                let started = ContinuousClock.now
                for _ in 0..<iterations { body() }
                runs.append((ContinuousClock.now - started).milliseconds * 1e6 / Double(iterations))
            }
            return runs.sorted()[2]
        }
    }
}

/// A target that only counts what it is shown.
final class BenchTarget: ImageTarget, @unchecked Sendable {
    // @unchecked Sendable: used from the benchmark's one thread only.
    var count = 0
    func display(_ image: Image?) { count += 1 }
}
