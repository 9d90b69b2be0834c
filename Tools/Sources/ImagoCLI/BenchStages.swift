import ArgumentParser
import CommandLineSupport
import Foundation
import Imago
import ImagoCodecs

extension Bench {
    /// `imago bench stages`: the image server's thumbnail render taken
    /// apart, stage by stage, on each source, so each stage can be set
    /// beside the same stage of another library (Benchmarks/compare-stages
    /// does, with pyvips).
    struct Stages: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Time each stage of a thumbnail render (header, scaled decode, resize, encode) on each source.",
            discussion: """
            For each source, on this thread, one warm-up then --iterations timed runs of each stage:
              header   reading the size and format (ImageDecoders.info);
              decode   the codec's own decode for the thumbnail: JPEG's DCT scaling, PNG's rows \
            downscaled as they arrive, the whole image for other formats;
              resize   the rest of the way to the thumbnail, as the decoder does it (area filter);
              encode   the thumbnail as a JPEG (or --format) at --quality;
              render   decode + resize + encode through the library's calls (ImageDecoders, \
            ImageEncoders), what a server's render of the request costs without HTTP.
            JSON: one object per source with each stage's median in milliseconds.
            """
        )

        @OptionGroup var common: Common

        @Option(help: ArgumentHelp("The thumbnail's longer side in pixels (a fit box).", valueName: "N"))
        var maxSize: Int = 256

        @Option(help: "The output format: jpeg, webp, avif or png.")
        var format: Fetch.OutputFormat = .jpeg

        @Option(help: "The output quality, 1-100.")
        var quality: Int = 80

        func validate() throws {
            if maxSize < 1 { throw ValidationError("--max-size must be at least 1.") }
            if !(1...100).contains(quality) { throw ValidationError("--quality must be between 1 and 100.") }
        }

        func run() async throws {
            let thumbnail = Imago.Thumbnail(maximumPixelSize: maxSize)
            let options = ImageDecodingOptions(thumbnail: thumbnail)
            let encoder = Fetch.encoder(for: format.format, quality: quality, pngCompression: .default)
            if !common.json {
                Output.line("header_ms  decode_ms  resize_ms  encode_ms  render_ms  source")
            }
            try await Bench.eachSource(of: common) { source, data in
                let info = try ImageDecoders.info(for: data)
                let decoder = ImageDecoders.decoder(for: info.format)
                let scaled = try Self.scaledDecode(data, format: info.format, options: options)
                let geometry = thumbnail.geometry(width: scaled.width, height: scaled.height)
                let resized = scaled.resized(to: geometry, filter: thumbnail.filter)
                let stages: [(String, Timing)] = [
                    ("header", try Timing(iterations: common.iterations) { _ = try ImageDecoders.info(for: data) }),
                    ("decode", try Timing(iterations: common.iterations) {
                        _ = try Self.scaledDecode(data, format: info.format, options: options)
                    }),
                    ("resize", Timing(iterations: common.iterations) { _ = scaled.resized(to: geometry, filter: thumbnail.filter) }),
                    ("encode", try Timing(iterations: common.iterations) { _ = try encoder.encode(resized) }),
                    ("render", try Timing(iterations: common.iterations) {
                        _ = try encoder.encode(try decoder.decode(data, options: options))
                    }),
                ]
                if common.json {
                    var fields: [(String, JSONValue)] = [
                        ("benchmark", .string("stages")), ("source", .string(source)), ("format", .string(info.format.rawValue)),
                        ("width", .int(info.width)), ("height", .int(info.height)),
                        ("decoded_width", .int(scaled.width)), ("decoded_height", .int(scaled.height)),
                        ("iterations", .int(common.iterations)),
                    ]
                    fields += stages.map { ("\($0.0)_ms", JSONValue.double($0.1.median)) }
                    Output.line(JSONValue.object(fields).text)
                } else {
                    Output.line(stages.map { String(format: "%9.3f", $0.1.median) }.joined(separator: "  ") + "  " + source)
                }
            }
        }

        /// The codec's own decode for `options`' thumbnail, before the
        /// resize that fits it: the production table's two steps for JPEG
        /// and PNG (which scale while decoding), the whole image otherwise.
        static func scaledDecode(_ data: Data, format: ImageFormat, options: ImageDecodingOptions) throws -> Image {
            switch format {
            case .jpeg: try decode(data, with: .jpeg, options: options)
            case .png: try decode(data, with: .png, options: options)
            default: try ImageDecoders.decoder(for: format).decode(data, options: ImageDecodingOptions(frameIndex: 0))
            }
        }

        private static func decode<State>(_ data: Data, with functions: CodecFunctions<State>, options: ImageDecodingOptions) throws -> Image {
            try functions.makeImage(try functions.open(data, options), 0, options)
        }
    }
}
