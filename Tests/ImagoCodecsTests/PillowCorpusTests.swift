import Foundation
import Imago
import ImagoCodecs
import Testing

/// A public corpus nobody here wrote: the images of Pillow's test suite
/// (`Tests/images` of a Pillow checkout), each decoded by Imago and held
/// against Pillow's verdict on it. `scripts/compare-pillow-corpus` asks
/// Pillow, writes the manifest named by `IMAGO_PILLOW_CORPUS` and runs this
/// suite; without a manifest it is skipped.
///
/// Every file (in Imago's formats or not) must come back as an image or a
/// typed error, quickly; of the files in Imago's formats that Pillow decodes,
/// at least 99.5% must decode.
@Suite struct PillowCorpusTests {
    /// The manifest the script writes: where the files are, Pillow's verdicts, where the results go.
    struct Manifest: Decodable {
        let root: String
        let results: String
        let files: [Entry]

        /// Pillow's verdict on one file.
        struct Entry: Decodable {
            let name: String
            /// Pillow's format name, `nil` when Pillow does not recognise the file.
            let format: String?
            /// Whether Pillow opened and loaded the file (its first frame) with default settings.
            let decodes: Bool
        }
    }

    /// Imago's verdict on one file, as the script reads it back.
    struct Result: Encodable {
        let name: String
        let sniffed: String?
        /// `"image"`, `"error <code>"` or `"FAIL …"` (see ``HostileCorpusTests/outcome(of:format:options:decoder:)``).
        let outcome: String
        let message: String?
        let size: [Int]?
        let frames: Int?
        let partial: Bool?
        /// The outcome of a thumbnail decode (longer side 64).
        let thumbnail: String
        let seconds: Double
    }

    /// Pillow's formats that are Imago's (MPO is a JPEG with more JPEGs after it).
    static let ourFormats: Set<String> = ["JPEG", "MPO", "PNG", "GIF", "WEBP", "AVIF", "HEIF", "JXL", "BMP", "ICO", "TIFF"]

    static let manifestPath = ProcessInfo.processInfo.environment["IMAGO_PILLOW_CORPUS"]

    @Test(.enabled(if: manifestPath != nil, "scripts/compare-pillow-corpus sets IMAGO_PILLOW_CORPUS"), .timeLimit(.minutes(10)))
    func imagoDecodesWhatPillowDecodes() throws {
        let manifest = try JSONDecoder().decode(Manifest.self, from: Data(contentsOf: URL(fileURLWithPath: Self.manifestPath!)))
        let progress = URL(fileURLWithPath: manifest.results + ".progress")
        var results: [Result] = []
        var failures: [String] = []
        var refused: [String] = []
        var pillowDecodes = 0
        for entry in manifest.files {
            // A crash or hang leaves the file's name behind for the script to report.
            try Data(entry.name.utf8).write(to: progress)
            let data = try Data(contentsOf: URL(fileURLWithPath: manifest.root).appendingPathComponent(entry.name))
            let started = Date()
            let (outcome, image, message) = Self.decode(data)
            let thumbnail = HostileCorpusTests.outcome(of: data, format: nil, options: ImageDecodingOptions(maximumPixelSize: 64),
                                                       decoder: ImageDecoders.all)
            let seconds = Date().timeIntervalSince(started)
            let sniffed = ImageFormat(sniffing: data)
            results.append(Result(name: entry.name, sniffed: sniffed?.rawValue, outcome: outcome, message: message,
                                  size: image.map { [$0.width, $0.height] }, frames: image?.frames.count, partial: image?.isPartial,
                                  thumbnail: thumbnail, seconds: seconds))
            for (label, verdict) in [("decode", outcome), ("thumbnail", thumbnail)] where verdict.hasPrefix("FAIL") {
                failures.append("\(entry.name) \(label): \(verdict)")
            }
            // A 4160x870 PNG takes 11 s, decoded twice in a debug build; a hang takes for ever.
            if seconds > 60 { failures.append("\(entry.name) took \(seconds) s") }
            // A TIFF or BLP holding JPEG data is Pillow's TIFF or BLP, whatever Imago sniffs in it.
            let ours = entry.format.map(Self.ourFormats.contains) ?? (sniffed != nil)
            if ours && entry.decodes {
                pillowDecodes += 1
                if outcome != "image" { refused.append("\(entry.name): \(outcome) \(message ?? "")") }
            }
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        try encoder.encode(results).write(to: URL(fileURLWithPath: manifest.results))
        try? FileManager.default.removeItem(at: progress)

        #expect(failures.isEmpty, "\(failures)")
        #expect(pillowDecodes > 0)
        let share = Double(pillowDecodes - refused.count) / Double(max(pillowDecodes, 1))
        #expect(share >= 0.995, "Imago refuses \(refused.count) of the \(pillowDecodes) files Pillow decodes: \(refused)")
    }

    /// The outcome of a full decode through the sniffing registry, the image, and the error's message.
    static func decode(_ data: Data) -> (outcome: String, image: Image?, message: String?) {
        do {
            let image = try ImageDecoders.all.decode(data)
            if let problem = HostileCorpusTests.malformed(image) { return ("FAIL malformed image: \(problem)", nil, nil) }
            return ("image", image, nil)
        } catch let error as ImageDecodingError {
            if let failure = HostileCorpusTests.untyped(error, format: nil) { return ("FAIL \(failure)", nil, error.message) }
            return ("error \(error.code)", nil, error.message)
        } catch {
            return ("FAIL untyped \(type(of: error)): \(error)", nil, nil)
        }
    }
}
