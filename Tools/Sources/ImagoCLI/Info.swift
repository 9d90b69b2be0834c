import ArgumentParser
import CommandLineSupport
import Foundation
import Imago
import ImagoCodecs

/// `imago info SOURCE... [--json]`: format, size, frames and bytes, from the header.
struct Info: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show the format, size, frame count and byte count of images (headers only, no decoding)."
    )

    @Argument(help: "http(s) URLs, file URLs or paths.")
    var sources: [String]

    @Flag(help: "One JSON object per source, one per line.")
    var json = false

    func validate() throws {
        if sources.isEmpty { throw ValidationError("Give at least one SOURCE.") }
    }

    func run() async throws {
        let loader = SourceLoader()
        var failures = 0
        for source in sources {
            let started = ContinuousClock.now
            let url = SourceLoader.url(for: source)
            do {
                let data = try await loader.bytes(of: url)
                let info = try ImageDecoders.info(for: data)
                let ms = (ContinuousClock.now - started).milliseconds
                if json {
                    Output.line(JSONValue.object([
                        ("source", .string(source)), ("ok", .bool(true)), ("format", .string(info.format.rawValue)),
                        ("width", .int(info.width)), ("height", .int(info.height)), ("frames", .int(info.frameCount)),
                        ("bytes", .int(data.count)), ("output", .null), ("cache", .string(SourceLoader.cacheKind(for: url))),
                        ("ms", .double(ms)),
                    ]).text)
                } else {
                    let frames = info.frameCount == 1 ? "1 frame" : "\(info.frameCount) frames"
                    Output.line("\(source): \(info.format) \(info.width)x\(info.height), \(frames), \(data.count) bytes")
                }
            } catch {
                failures += 1
                let failure = Failure(error)
                if json { Output.line(failure.json(source: source).text) }
                Output.error("imago: \(source): \(failure.message)")
            }
        }
        if failures > 0 { throw ExitCode(1) }
    }
}
