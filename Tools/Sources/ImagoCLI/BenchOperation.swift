import ArgumentParser
import CommandLineSupport
import Foundation
import Imago
import ImagoCodecs

extension Bench {
    /// `imago bench operation`: one processing operation on decoded images,
    /// the decode left out of the timing.
    struct OperationBenchmark: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "operation",
            abstract: "Time one processing operation on each source's decoded image (the decode is not timed).",
            discussion: """
            Each source is decoded once (its first frame), then the operation runs once to warm up and \
            --iterations times timed, on this thread. Benchmarks/compare-operations runs it against pyvips and Pillow.
            """
        )

        /// The operations, by the name pyvips-minded people would look for.
        enum Kind: String, ExpressibleByArgument, CaseIterable {
            case extend, composite, sharpen, trim, flatten
            case smartcropAttention = "smartcrop-attention"
            case smartcropEntropy = "smartcrop-entropy"
        }

        @OptionGroup var common: Common

        @Option(help: "The operation: \(Kind.allCases.map(\.rawValue).joined(separator: ", ")).")
        var operation: Kind

        @Option(help: ArgumentHelp("""
            The canvas width (extend; default: the longer side, a square) or the crop width \
            (smartcrop; default: the shorter side, a square).
            """, valueName: "N"))
        var width: Int?

        @Option(help: ArgumentHelp("The canvas or crop height (defaults as for --width).", valueName: "N"))
        var height: Int?

        @Option(help: "Where the image sits on the canvas (extend; default: center) or the overlay (composite; default: southEast).")
        var gravity: Gravity?

        @Option(help: ArgumentHelp("The canvas (extend) or the colour under the image (flatten), hex RRGGBB or RRGGBBAA.",
                                   valueName: "HEX"))
        var background = "ffffff"

        @Option(help: ArgumentHelp("The image drawn over each source (composite; required).", valueName: "FILE"))
        var overlay: String?

        @Option(help: "The overlay's distance in pixels from the edges at its gravity (composite).")
        var offsetX = 0

        @Option(help: "The overlay's distance in pixels from the edges at its gravity, vertically (composite).")
        var offsetY = 0

        @Option(help: "The overlay's opacity, 0 to 1 (composite).")
        var opacity = 1.0

        @Flag(help: "Blend light intensities, not stored values (composite).")
        var linearLight = false

        @Option(help: "The blur's sigma in pixels (sharpen).")
        var sigma = 1.0

        @Option(help: "How far values move from the blur (sharpen).")
        var amount = 1.0

        @Option(help: "Levels: the smallest difference sharpened (sharpen; default 0), or how far border pixels may stray (trim; default 10).")
        var threshold: Double?

        @Option(help: ArgumentHelp("Write the last result as PNG to FILE (one source only).", valueName: "FILE"))
        var output: String?

        func validate() throws {
            if (width.map { $0 < 1 } ?? false) || (height.map { $0 < 1 } ?? false) {
                throw ValidationError("--width and --height must be at least 1.")
            }
            if max(width ?? 0, height ?? 0) > Self.largestCanvas {
                throw ValidationError("--width and --height must be at most \(Self.largestCanvas).")
            }
            if operation == .composite && overlay == nil { throw ValidationError("composite needs --overlay FILE.") }
            if Self.color(hex: background) == nil { throw ValidationError("--background takes hex RRGGBB or RRGGBBAA.") }
            if !(0...1).contains(opacity) { throw ValidationError("--opacity is from 0 to 1.") }
            if sigma < 0 || !sigma.isFinite { throw ValidationError("--sigma must be 0 or more.") }
            if let threshold, threshold < 0 || (operation == .sharpen && threshold > 255) {
                throw ValidationError("--threshold must be 0 or more (at most 255 for sharpen).")
            }
            if output != nil && common.sources.count != 1 { throw ValidationError("--output takes one source.") }
        }

        func run() async throws {
            let loader = SourceLoader()
            var mark: Image?
            if let overlay { mark = try await Self.decoded(loader.bytes(of: SourceLoader.url(for: overlay))) }
            let background = Self.color(hex: background)!
            let name = "operation-\(operation.rawValue)"
            if !common.json {
                Output.line("benchmark                      iterations  median_ms    min_ms  megapixels/s  output     source")
            }
            try await Bench.eachSource(of: common) { source, data in
                let image = try Self.decoded(data)
                let work = try self.work(on: image, overlay: mark, background: background)
                var result = image
                let timing = Bench.Timing(iterations: common.iterations) { result = work() }
                if let output {
                    let png = try ImageEncoders.png(compression: .fast).encode(result)
                    try OutputFile.save(png, to: SourceLoader.url(for: output))
                }
                let median = timing.median
                let rate = Double(image.width * image.height) / 1e6 / (median / 1000)
                let size = "\(result.width)x\(result.height)"
                if common.json {
                    Output.line(JSONValue.object([
                        ("benchmark", .string(name)), ("source", .string(source)), ("iterations", .int(common.iterations)),
                        ("median_ms", .double(median)), ("min_ms", .double(timing.minimum)), ("megapixels_per_s", .double(rate)),
                        ("cpu_median_ms", .double(timing.cpuMedian)),
                        ("input_width", .int(image.width)), ("input_height", .int(image.height)),
                        ("output_width", .int(result.width)), ("output_height", .int(result.height)),
                        ("output_format", .string("\(result.pixelFormat)")), ("output", output.map(JSONValue.string) ?? .null),
                    ]).text)
                } else {
                    Output.line(name.padding(toLength: 29, withPad: " ", startingAt: 0)
                        + String(format: "  %10d  %9.3f  %8.3f  %12.1f  ", common.iterations, median, timing.minimum, rate)
                        + size.padding(toLength: max(9, size.count), withPad: " ", startingAt: 0) + "  " + source)
                }
            }
        }

        /// The timed work on `image`, with every parameter resolved before timing.
        private func work(on image: Image, overlay: Image?, background: ImageColor) throws -> () -> Image {
            switch operation {
            case .extend:
                let side = max(image.width, image.height)
                let (w, h, at) = (width ?? side, height ?? side, gravity ?? .center)
                // A canvas is allocated whole: past this it would not fit in memory, and the tool would be killed.
                guard w * h <= Self.largestCanvas else {
                    throw ValidationError("a \(w)x\(h) canvas is over \(Self.largestCanvas / 1_000_000) megapixels")
                }
                return { image.extended(toWidth: w, height: h, gravity: at, background: background) }
            case .composite:
                let (mark, at, opacity, linear) = (overlay!, gravity ?? .southEast, opacity, linearLight)
                let position = OverlayPosition.gravity(at, offsetX: offsetX, offsetY: offsetY)
                return { image.composited(with: mark, at: position, opacity: opacity, linearLight: linear) }
            case .sharpen:
                let (sigma, amount, threshold) = (sigma, amount, Int((threshold ?? 0).rounded()))
                return { image.sharpened(sigma: sigma, amount: amount, threshold: threshold) }
            case .trim:
                let threshold = threshold ?? 10
                return { image.trimmed(.topLeftPixel, threshold: threshold) }
            case .flatten:
                return { image.flattened(onto: background) }
            case .smartcropAttention, .smartcropEntropy:
                let side = min(image.width, image.height)
                let size = CropSize.pixels(width: min(width ?? side, image.width), height: min(height ?? side, image.height))
                let anchor = CropAnchor.smart(operation == .smartcropAttention ? .attention : .entropy)
                return { image.cropped(to: size, anchor: anchor) }
            }
        }

        /// The most pixels a canvas may have: 256 megapixels (1 GB as RGBA).
        static let largestCanvas = 1 << 28

        /// The first frame of an encoded image, decoded.
        private static func decoded(_ data: Data) throws -> Image {
            let info = try ImageDecoders.info(for: data)
            return try ImageDecoders.decoder(for: info.format).decode(data, options: ImageDecodingOptions(frameIndex: 0))
        }

        /// `RRGGBB` or `RRGGBBAA` (a leading `#` allowed) as a colour.
        static func color(hex text: String) -> ImageColor? {
            let digits = text.hasPrefix("#") ? String(text.dropFirst()) : text
            guard digits.count == 6 || digits.count == 8, let value = UInt32(digits, radix: 16) else { return nil }
            let bytes = digits.count == 8 ? value : value << 8 | 0xff
            return ImageColor(red: UInt8(bytes >> 24), green: UInt8(bytes >> 16 & 0xff),
                              blue: UInt8(bytes >> 8 & 0xff), alpha: UInt8(bytes & 0xff))
        }
    }
}

extension Gravity: @retroactive ExpressibleByArgument {}
