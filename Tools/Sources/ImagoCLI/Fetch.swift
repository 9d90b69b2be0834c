import ArgumentParser
import CommandLineSupport
import Foundation
import Imago
import ImagoCodecs

/// `imago fetch`: load, decode, optionally resize and write images.
struct Fetch: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Load images, decode them, and optionally resize and write them to a folder.",
        discussion: """
        Each SOURCE is an http(s) URL, a file URL or a path. With --output, each image is \
        written to DIR, named after its source, in --format. Without it: the source's format \
        for JPEG, PNG, WebP and AVIF; PNG for GIF; JPEG for HEIC, JPEG XL and unknown \
        sources; PNG instead of JPEG for an image with alpha. An animation stays animated \
        in GIF and WebP (an animated GIF stays a GIF; APNG, AVIF and JPEG XL animations \
        become WebP); PNG, JPEG and AVIF get its first frame, as in imgproxy (the image \
        server decides the same way: OutputPolicy). Quality without --quality: jpeg 85, webp 80, avif 60. Files are written \
        whole or not at all.

        --max-size and --resize never enlarge. --resize fits the image inside WxH; with \
        --crop it covers WxH and the overflow is cut evenly from both sides. The result is \
        the pixels Image.resized(toFit:height:mode:) and the image server (rs:fit, rs:fill) \
        give for the same source and box.
        """
    )

    /// Formats `fetch` can write.
    enum OutputFormat: String, ExpressibleByArgument, CaseIterable {
        case png, jpeg, webp, avif
        var format: ImageFormat { ImageFormat(rawValue: rawValue)! }
    }

    @Argument(help: "http(s) URLs, file URLs or paths.")
    var sources: [String] = []

    @Option(name: .long, help: ArgumentHelp("Read more sources from FILE, one per line.", valueName: "FILE"))
    var input: String?

    @Option(name: .long, help: ArgumentHelp("Write the images to DIR (created if missing).", valueName: "DIR"))
    var output: String?

    @Option(name: .long, help: "The format to write: png, jpeg, webp or avif.")
    var format: OutputFormat?

    @Option(name: .long, help: "Quality for jpeg, webp and avif, 1-100 (default: 85, 80 and 60).")
    var quality: Int?

    @Option(name: .long, help: "How hard PNG output is compressed: fast, default or best.")
    var pngCompression: PNGEncoder.Compression = .default

    @Option(name: .long, help: ArgumentHelp("Scale down so the longer side is at most N pixels.", valueName: "N"))
    var maxSize: Int?

    @Option(name: .long, help: ArgumentHelp("Scale to fit in WxH (aspect kept); with --crop, exactly WxH.", valueName: "WxH"))
    var resize: String?

    @Flag(name: .long, help: "With --resize: fill WxH and cut the overflow from the centre.")
    var crop = false

    @Option(name: .long, help: "The filter for --max-size and --resize: area (the default), lanczos3 or mitchell.")
    var filter: ResamplingFilter = .area

    @Flag(name: .long, help: "With --max-size or --resize: average light intensities, not stored sRGB values.")
    var linearLight = false

    @Option(name: .long, help: "How many sources to load at once.")
    var concurrency: Int = 8

    @Option(name: .long, help: ArgumentHelp("The disk cache directory (default: $XDG_CACHE_HOME/imago or ~/.cache/imago).", valueName: "DIR"))
    var cacheDir: String?

    @Flag(name: .long, help: "Use no disk cache.")
    var noCache = false

    @Flag(help: "One JSON object per source, one per line.")
    var json = false

    /// The parsed `--resize` box.
    var box: (width: Int, height: Int)? {
        guard let resize else { return nil }
        let parts = resize.lowercased().split(separator: "x")
        guard parts.count == 2, let width = Int(parts[0]), let height = Int(parts[1]), width > 0, height > 0 else { return nil }
        return (width, height)
    }

    func validate() throws {
        if sources.isEmpty && input == nil { throw ValidationError("Give at least one SOURCE or --input FILE.") }
        if let quality, !(1...100).contains(quality) { throw ValidationError("--quality must be between 1 and 100.") }
        if let maxSize, maxSize < 1 { throw ValidationError("--max-size must be at least 1.") }
        if resize != nil && box == nil { throw ValidationError("--resize takes WIDTHxHEIGHT, such as 256x256.") }
        if maxSize != nil && resize != nil { throw ValidationError("Use either --max-size or --resize, not both.") }
        if crop && resize == nil { throw ValidationError("--crop needs --resize.") }
        if concurrency < 1 { throw ValidationError("--concurrency must be at least 1.") }
        if quality != nil && format == .png { throw ValidationError("--quality applies to jpeg, webp and avif only.") }
        if pngCompression != .default, let format, format != .png { throw ValidationError("--png-compression applies to png only.") }
        if cacheDir != nil && noCache { throw ValidationError("Use either --cache-dir or --no-cache, not both.") }
    }

    /// The encoder for `format`: PNG with `pngCompression`, the others at `quality`.
    static func encoder(for format: ImageFormat, quality: Int?, pngCompression: PNGEncoder.Compression) -> any ImageEncoding {
        // Every format fetch and bench write is one Imago writes.
        format == .png ? ImageEncoders.png(compression: pngCompression) : ImageEncoders.encoder(for: format, quality: quality)!
    }


    func run() async throws {
        var all = sources
        if let input {
            do { all += try SourceLoader.sources(inFile: input) } catch {
                throw ValidationError("Cannot read --input \(input): \(error.localizedDescription)")
            }
        }
        let directory = try output.map(makeDirectory)
        let names = OutputNames()
        let pipeline = ImagePipeline(configuration: .init(
            dataLoader: SourceLoader.dataLoader(concurrency: concurrency),
            dataCache: noCache ? nil : DataCache(configuration: .init(directory: cacheDir.map(SourceLoader.url(for:)) ?? DataCache.defaultDirectory)),
            imageCache: ImageCache(),
            decoder: ImageDecoders.all,
            maximumConcurrentDownloads: concurrency
        ))
        let progress = ProgressBar(total: all.count)
        let settings = self
        var failures = 0

        await withTaskGroup(of: Bool.self) { group in
            var next = 0
            func startNext() {
                guard next < all.count else { return }
                let source = all[next]
                next += 1
                group.addTask {
                    let ok = await settings.process(source, pipeline: pipeline, directory: directory, names: names)
                    progress.advance(succeeded: ok)
                    return ok
                }
            }
            for _ in 0..<min(concurrency, all.count) { startNext() }
            while let ok = await group.next() {
                if !ok { failures += 1 }
                startNext()
            }
        }
        progress.finish()
        if !json && Output.stderrIsTerminal && Output.stdoutIsTerminal {
            Output.line("\(all.count - failures) of \(all.count) images loaded" + (directory.map { " into \($0.path)" } ?? ""))
        }
        if failures > 0 { throw ExitCode(1) }
    }

    private func makeDirectory(_ path: String) throws -> URL {
        let url = SourceLoader.url(for: path)
        do {
            try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        } catch {
            throw ValidationError("Cannot create --output \(path): \(error.localizedDescription)")
        }
        return url
    }

    /// Loads, decodes, resizes and writes one source; reports it; returns whether it succeeded.
    private func process(_ source: String, pipeline: ImagePipeline, directory: URL?, names: OutputNames) async -> Bool {
        let started = ContinuousClock.now
        let url = SourceLoader.url(for: source)
        do {
            let response = try await pipeline.image(for: ImageRequest(url: url, thumbnail: thumbnail))
            let image = response.image
            let sourceFormat = names.format(of: url, from: response)
            var written: String?
            if let directory {
                // The library's one decision, the image server's too: an
                // animation keeps every frame in GIF and WebP, and gives its
                // first frame in the other formats.
                let decision = OutputPolicy().decision(forSource: sourceFormat, hasAlpha: image.pixelFormat.hasAlpha,
                                                       isAnimated: image.isAnimated, requested: format?.format, quality: quality)
                let target = decision.format
                let encoded = decision.isAnimated || target != .png
                    ? try ImageEncoders.encode(image, as: decision)
                    : try Self.encoder(for: target, quality: decision.quality, pngCompression: pngCompression).encode(image)
                let file = names.claim(directory.appendingPathComponent(Self.baseName(of: url)).appendingPathExtension(target.fileExtension))
                try OutputFile.save(encoded, to: file)
                written = file.path
            }
            let ms = (ContinuousClock.now - started).milliseconds
            let cache = switch response.source {
            case .memory: "memory"
            case .disk: "disk"
            case .network: "network"
            case .file: "none"
            }
            if json {
                Output.line(JSONValue.object([
                    ("source", .string(source)), ("ok", .bool(true)), ("format", sourceFormat.map { .string($0.rawValue) } ?? .null),
                    ("width", .int(image.width)), ("height", .int(image.height)), ("frames", .int(image.frames.count)),
                    ("bytes", names.byteCount(of: url, from: response).map(JSONValue.int) ?? .null), ("output", written.map(JSONValue.string) ?? .null),
                    ("cache", .string(cache)), ("ms", .double(ms)),
                ]).text)
            } else if !(Output.stderrIsTerminal && Output.stdoutIsTerminal) {
                // On a terminal the progress bar and the summary say it; elsewhere, a line per source.
                Output.line("\(source): \(sourceFormat?.rawValue ?? "image") \(image.width)x\(image.height)" + (written.map { " -> \($0)" } ?? ""))
            }
            return true
        } catch {
            let failure = Failure(error)
            if json { Output.line(failure.json(source: source).text) }
            Output.error("imago: \(source): \(failure.message)")
            return false
        }
    }

    /// The decoding-time size `--max-size` or `--resize` asks for.
    private var thumbnail: Thumbnail? {
        if let maxSize { return Thumbnail(maximumPixelSize: maxSize, filter: filter, linearLight: linearLight) }
        if let box { return Thumbnail(width: box.width, height: box.height, mode: crop ? .crop : .fit, filter: filter, linearLight: linearLight) }
        return nil
    }

    /// The file name stem for a source: its last path component without
    /// extension, or the host, made safe for any file system.
    static func baseName(of url: URL) -> String {
        var stem = url.deletingPathExtension().lastPathComponent
        if stem.isEmpty || stem == "/" { stem = url.host ?? "image" }
        let safe = stem.unicodeScalars.map { CharacterSet.alphanumerics.contains($0) || "-_.".unicodeScalars.contains($0) ? Character($0) : "_" }
        let name = String(safe).trimmingCharacters(in: CharacterSet(charactersIn: "."))
        return name.isEmpty ? "image" : String(name.prefix(120))
    }
}

/// Hands out distinct output file names within one run (`a.png`, `a-2.png`, ...),
/// and remembers each source's format and size for repeats served from memory.
final class OutputNames: @unchecked Sendable {
    // @unchecked Sendable: `claimed` and `facts` are only touched under `lock`.
    private let lock = NSLock()
    private var claimed: Set<String> = []
    private var facts: [URL: (format: ImageFormat?, bytes: Int?)] = [:]

    /// The source's format: from this response, or from an earlier one for the same URL.
    func format(of url: URL, from response: ImageResponse) -> ImageFormat? {
        remember(url, response).format
    }

    /// The source's byte count: from this response, or from an earlier one for the same URL.
    func byteCount(of url: URL, from response: ImageResponse) -> Int? {
        remember(url, response).bytes
    }

    private func remember(_ url: URL, _ response: ImageResponse) -> (format: ImageFormat?, bytes: Int?) {
        lock.withLock {
            if response.format != nil { facts[url] = (response.format, response.byteCount) }
            return facts[url] ?? (nil, nil)
        }
    }

    func claim(_ url: URL) -> URL {
        lock.withLock {
            var candidate = url
            var counter = 2
            while claimed.contains(candidate.path) {
                let stem = url.deletingPathExtension().lastPathComponent
                candidate = url.deletingLastPathComponent().appendingPathComponent("\(stem)-\(counter)").appendingPathExtension(url.pathExtension)
                counter += 1
            }
            claimed.insert(candidate.path)
            return candidate
        }
    }
}
