import ArgumentParser
import CommandLineSupport
import Foundation
import Imago
import ImagoCodecs

/// `imago bench`: codec benchmarks in one process, after a warm-up.
struct Bench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Benchmark decoding and thumbnailing.",
        subcommands: [Decode.self, Thumbnail.self, Encode.self, Pipeline.self, OperationBenchmark.self, Stages.self]
    )

    /// Options shared by the benchmarks.
    struct Common: ParsableArguments {
        @Argument(help: "Image files, file URLs or http(s) URLs (loaded once, before timing).")
        var sources: [String] = []

        @Option(help: "Timed iterations per source, after one warm-up run.")
        var iterations: Int = 10

        @Flag(help: "One JSON object per source, one per line.")
        var json = false

        func validate() throws {
            if sources.isEmpty { throw ValidationError("Give at least one SOURCE.") }
            if iterations < 1 { throw ValidationError("--iterations must be at least 1.") }
        }
    }

    struct Decode: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Time full decoding of each source.")
        @OptionGroup var common: Common

        func run() async throws {
            try await Bench.run(name: "decode", common: common, options: ImageDecodingOptions())
        }
    }

    struct Thumbnail: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Time decoding straight to a thumbnail.")
        @OptionGroup var common: Common

        @Option(help: ArgumentHelp("The thumbnail's longer side in pixels.", valueName: "N"))
        var maxSize: Int = 256

        @Option(help: "The resampling filter: area (the default), lanczos3 or mitchell.")
        var filter: ResamplingFilter = .area

        @Flag(help: "Average light intensities, not stored sRGB values.")
        var linearLight = false

        func validate() throws {
            if maxSize < 1 { throw ValidationError("--max-size must be at least 1.") }
        }

        func run() async throws {
            let thumbnail = Imago.Thumbnail(maximumPixelSize: maxSize, filter: filter, linearLight: linearLight)
            try await Bench.run(name: "thumbnail", common: common, options: ImageDecodingOptions(thumbnail: thumbnail))
        }
    }

    struct Encode: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Time encoding each source's decoded image.")
        @OptionGroup var common: Common

        @Option(help: "The format to encode: png, jpeg, webp or avif.")
        var format: Fetch.OutputFormat = .jpeg

        @Option(help: "Quality for jpeg, webp and avif, 1-100 (default: 85, 80 and 60, as fetch writes).")
        var quality: Int?

        @Option(help: "How hard PNG is compressed: fast, default or best.")
        var pngCompression: PNGEncoder.Compression = .default

        func validate() throws {
            if let quality, !(1...100).contains(quality) { throw ValidationError("--quality must be between 1 and 100.") }
        }

        func run() async throws {
            let encoder = Fetch.encoder(for: format.format, quality: quality, pngCompression: pngCompression)
            try await Bench.measure(name: "encode-\(format.rawValue)", common: common) { data, info in
                let image = try ImageDecoders.decoder(for: info.format).decode(data, options: ImageDecodingOptions(frameIndex: 0))
                return { _ = try encoder.encode(image) }
            }
        }
    }

    static func run(name: String, common: Common, options: ImageDecodingOptions) async throws {
        try await measure(name: name, common: common) { data, info in
            let decoder = ImageDecoders.decoder(for: info.format)
            return { _ = try decoder.decode(data, options: options) }
        }
    }

    /// The CPU time the calling thread has used, in milliseconds: what a
    /// busy machine disturbs less than the wall clock (the work runs on
    /// this thread, with no suspension between the two readings).
    static func threadCPUMilliseconds() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
        return Double(time.tv_sec) * 1e3 + Double(time.tv_nsec) / 1e6
    }

    /// The wall-clock and thread-CPU times of `iterations` runs of `work`
    /// after one warm-up run, each sorted.
    struct Timing {
        var wall: [Double] = []
        var cpu: [Double] = []

        init(iterations: Int, _ work: () throws -> Void) rethrows {
            try work()   // warm-up
            for _ in 0..<iterations {
                let started = ContinuousClock.now, cpuStarted = Bench.threadCPUMilliseconds()
                try work()
                wall.append((ContinuousClock.now - started).milliseconds)
                cpu.append(Bench.threadCPUMilliseconds() - cpuStarted)
            }
            wall.sort()
            cpu.sort()
        }

        /// The median wall-clock time (the mean of the middle two for an even count).
        var median: Double { Self.median(wall) }
        /// The fastest run.
        var minimum: Double { wall.first ?? 0 }
        /// The median thread-CPU time.
        var cpuMedian: Double { Self.median(cpu) }

        private static func median(_ sorted: [Double]) -> Double {
            guard !sorted.isEmpty else { return 0 }
            let middle = sorted.count / 2
            return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
        }
    }

    /// Times the work `prepare` returns for each source: one warm-up run,
    /// then `iterations` timed runs; reports median and minimum (and, in
    /// JSON, the median CPU time of the thread).
    static func measure(
        name: String,
        common: Common,
        prepare: (Data, ImageInfo) throws -> () throws -> Void
    ) async throws {
        if !common.json {
            Output.line("benchmark    iterations  median_ms    min_ms  megapixels/s  source")
        }
        try await eachSource(of: common) { source, data in
            let info = try ImageDecoders.info(for: data)
            let work = try prepare(data, info)
            let timing = try Timing(iterations: common.iterations, work)
            let median = timing.median
            let megapixels = Double(info.width * info.height * (name == "decode" ? info.frameCount : 1)) / 1e6
            let rate = megapixels / (median / 1000)
            if common.json {
                Output.line(JSONValue.object([
                    ("benchmark", .string(name)), ("source", .string(source)), ("iterations", .int(common.iterations)),
                    ("median_ms", .double(median)), ("min_ms", .double(timing.minimum)), ("megapixels_per_s", .double(rate)),
                    ("cpu_median_ms", .double(timing.cpuMedian)),
                ]).text)
            } else {
                // Wide enough for the longest name, "encode-avif" (padding(toLength:) also cuts).
                Output.line(name.padding(toLength: max(11, name.count), withPad: " ", startingAt: 0)
                    + String(format: "  %10d  %9.3f  %8.3f  %12.1f  ", common.iterations, median, timing.minimum, rate) + source)
            }
        }
    }

    /// Runs `body` on each source's bytes, loaded before it runs (so before
    /// any timing); a source that fails is reported (as a JSON line too with
    /// `--json`) and the others go on. Exits 1 when any failed.
    static func eachSource(of common: Common, _ body: (String, Data) throws -> Void) async throws {
        let loader = SourceLoader()
        var failures = 0
        for source in common.sources {
            do {
                try body(source, try await loader.bytes(of: SourceLoader.url(for: source)))
            } catch {
                failures += 1
                let failure = Failure(error)
                if common.json { Output.line(failure.json(source: source).text) }
                Output.error("imago: \(source): \(failure.message)")
            }
        }
        if failures > 0 { throw ExitCode(1) }
    }
}

extension ResamplingFilter: @retroactive ExpressibleByArgument {}
extension PNGEncoder.Compression: @retroactive ExpressibleByArgument {}
