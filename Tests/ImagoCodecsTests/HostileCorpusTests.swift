import Foundation
import Imago
import ImagoCodecs
import ImagoTesting
import Testing

/// Hostile corpora: valid seed files of every format, made by the
/// encoders, the GIF builder or committed fixtures (stills and animations),
/// then truncated, bit-flipped, header-mutated and spliced with a seeded
/// generator, so every run feeds the decoders the same few thousand inputs.
/// Each must come back as a well-formed `Image` or an `ImageDecodingError`
/// (whose underlying error, if any, is a `CodecError`): never a crash, a
/// hang or another error. `.ci/run` runs this suite under the address sanitizer.
@Suite struct HostileCorpusTests {
    @Test(.timeLimit(.minutes(5)), arguments: ImageFormat.allCases)
    func everyMutantDecodesOrThrowsATypedError(format: ImageFormat) throws {
        let seeds = try Self.seeds(format)
        #expect(seeds.count >= 3)
        var mutants: [Mutant] = []
        for (index, seed) in seeds.enumerated() {
            // The seed itself must decode, or its mutants prove little.
            #expect(Self.outcome(of: seed.data, format: format, options: ImageDecodingOptions()) == "image", "\(seed.name)")
            var generator = SeededGenerator(seed: 0x1_0000 * UInt64(index + 1) + UInt64(format.rawValue.utf8.reduce(0) { $0 &* 31 &+ UInt64($1) }))
            let others = seeds.filter { $0.name != seed.name }.map(\.data)
            mutants += Mutator(name: seed.name, bytes: [UInt8](seed.data), others: others).all(format: format, using: &generator)
        }
        #expect(mutants.count >= 1_000)

        let decoder = ImageDecoders.decoder(for: format)
        let optionSets = [
            ImageDecodingOptions(),
            ImageDecodingOptions(frameIndex: 0),
            ImageDecodingOptions(maximumPixelSize: 16),
            ImageDecodingOptions(thumbnail: Thumbnail(width: 10, height: 20, mode: .crop)),
        ]
        var failures: [String] = []
        var tally: [String: Int] = [:]
        var slowest: (seconds: TimeInterval, name: String) = (0, "")
        for (index, mutant) in mutants.enumerated() {
            let started = Date()
            let options = optionSets[index % optionSets.count]
            let outcome = Self.outcome(of: mutant.data, format: format, options: options, decoder: decoder)
            tally[outcome, default: 0] += 1
            if outcome.hasPrefix("FAIL") { failures.append("\(mutant.name): \(outcome)") }
            // The header reader and the sniffing registry face the same bytes.
            do {
                let info = try decoder.info(for: mutant.data)
                if info.width <= 0 || info.height <= 0 || info.frameCount <= 0 { failures.append("\(mutant.name): info \(info)") }
            } catch let error as ImageDecodingError {
                if let failure = Self.untyped(error, format: format) { failures.append("\(mutant.name): info: \(failure)") }
            } catch {
                failures.append("\(mutant.name): info threw \(type(of: error)): \(error)")
            }
            if index % 8 == 0 {
                let registry = Self.outcome(of: mutant.data, format: nil, options: options, decoder: ImageDecoders.all)
                if registry.hasPrefix("FAIL") { failures.append("\(mutant.name): registry: \(registry)") }
            }
            let elapsed = Date().timeIntervalSince(started)
            if elapsed > slowest.seconds { slowest = (elapsed, mutant.name) }
        }
        print("HostileCorpus \(format): \(mutants.count) inputs from \(seeds.count) seeds; outcomes \(tally.sorted { $0.key < $1.key }); slowest \(slowest.name) \(slowest.seconds) s")
        #expect(failures.isEmpty, "\(failures.count) failures, first: \(failures.prefix(10))")
        // No input may stall a decoder: a few tiny files take milliseconds even under a sanitizer.
        #expect(slowest.seconds < 10, "\(slowest.name) took \(slowest.seconds) s")
        // Most mutants must fail, and some survive: the mutations reach past the first check.
        #expect(tally["image", default: 0] > 0)
        #expect(tally.keys.filter { $0.hasPrefix("error") }.count >= 2)
    }

    /// Writes the BMP, ICO and TIFF seeds into `IMAGO_FUZZ_SEEDS/<format>/`
    /// (`Fuzz/seeds/`, which `scripts/fuzz` starts those decoders' corpora from).
    @Test(.enabled(if: ProcessInfo.processInfo.environment["IMAGO_FUZZ_SEEDS"] != nil, "set IMAGO_FUZZ_SEEDS to write the fuzz seeds"))
    func writesTheFuzzSeeds() throws {
        let root = URL(fileURLWithPath: ProcessInfo.processInfo.environment["IMAGO_FUZZ_SEEDS"]!)
        for format in [ImageFormat.bmp, .ico, .tiff] {
            let folder = root.appendingPathComponent(format.rawValue)
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            for seed in try Self.seeds(format) {
                try seed.data.write(to: folder.appendingPathComponent("\(seed.name).\(format.fileExtension)"))
            }
        }
    }

    // MARK: Outcomes

    /// `"image"`, `"error <code>"`, or `"FAIL …"` when the contract is broken.
    static func outcome(of data: Data, format: ImageFormat?, options: ImageDecodingOptions, decoder: (any ImageDecoding)? = nil) -> String {
        let decoder = decoder ?? ImageDecoders.decoder(for: format!)
        do {
            let image = try decoder.decode(data, options: options)
            if let problem = malformed(image) { return "FAIL malformed image: \(problem)" }
            if let thumbnail = options.thumbnail, image.width > thumbnail.width || image.height > thumbnail.height {
                // A fit box bounds the longer side; crop and fill are at most the box.
                if thumbnail.mode != .fill { return "FAIL \(image.width)x\(image.height) exceeds the thumbnail \(thumbnail.width)x\(thumbnail.height)" }
            }
            if options.frameIndex != nil && image.frames.count != 1 { return "FAIL frame 0 came back with \(image.frames.count) frames" }
            return "image"
        } catch let error as ImageDecodingError {
            if let failure = untyped(error, format: format) { return "FAIL \(failure)" }
            return "error \(error.code)"
        } catch {
            return "FAIL untyped \(type(of: error)): \(error)"
        }
    }

    /// Why `error` breaks the contract, or `nil`.
    static func untyped(_ error: ImageDecodingError, format: ImageFormat?) -> String? {
        if let underlying = error.underlying, !(underlying is CodecError) {
            return "\(error.code) wraps \(type(of: underlying)): \(underlying)"
        }
        if let format, error.format != format { return "\(error.code) names format \(String(describing: error.format))" }
        return nil
    }

    /// What is wrong with a decoded image, or `nil`.
    static func malformed(_ image: Image) -> String? {
        guard image.width > 0, image.height > 0, !image.frames.isEmpty else { return "empty \(image)" }
        guard image.bytesPerRow >= image.width * image.pixelFormat.bytesPerPixel else { return "short rows in \(image)" }
        if let frame = image.frames.first(where: { $0.pixels.count < image.bytesPerRow * image.height }) {
            return "a frame of \(frame.pixels.count) bytes in \(image)"
        }
        return nil
    }

    // MARK: Seeds

    struct Seed {
        let name: String
        let data: Data
    }

    /// Valid files of `format`: made in code where an encoder exists, plus committed fixtures
    /// (stills and animations from other encoders).
    static func seeds(_ format: ImageFormat) throws -> [Seed] {
        let gradient = TestImages.gradient(width: 24, height: 17)
        var translucent = TestImages.gradient(width: 20, height: 12)
        translucent = Image(width: 20, height: 12, pixelFormat: .rgba8,
                            pixels: translucent.pixels.enumerated().map { $0.offset % 4 == 3 ? UInt8($0.offset / 4 % 256) : $0.element })
        switch format {
        case .png:
            return [
                Seed(name: "png-gradient", data: try ImageEncoders.png().encode(gradient)),
                Seed(name: "png-alpha", data: try ImageEncoders.png(compression: .best).encode(translucent)),
                Seed(name: "png-basn3p04", data: try Fixtures.data("pngsuite/basn3p04.png")),   // palette
                Seed(name: "png-basi6a16", data: try Fixtures.data("pngsuite/basi6a16.png")),   // interlaced, 16-bit
                Seed(name: "png-tbrn2c08", data: try Fixtures.data("pngsuite/tbrn2c08.png")),   // tRNS
                Seed(name: "png-iccp", data: try Fixtures.data("color/adobe-rgb.png")),          // colour profile
                Seed(name: "png-chrm", data: try Fixtures.data("color/chrm-adobe.png")),         // gAMA and cHRM
                Seed(name: "png-exif", data: try Fixtures.data("color/orientation6.png")),       // eXIf
                Seed(name: "apng-offsets", data: try Fixtures.data("apng/offsets.png")),          // APNG: sub-frames at offsets
                Seed(name: "apng-dispose", data: try Fixtures.data("apng/dispose.png")),          // APNG: dispose ops
                Seed(name: "apng-default", data: try Fixtures.data("apng/default-image.png")),    // APNG: separate default image
            ]
        case .jpeg:
            return [
                Seed(name: "jpeg-baseline", data: try ImageEncoders.jpeg(quality: 80).encode(gradient)),
                Seed(name: "jpeg-progressive", data: try ImageEncoders.jpeg(quality: 60, progressive: true).encode(gradient)),
                Seed(name: "jpeg-cmyk", data: try Fixtures.data("jpeg/cmyk.jpg")),
                Seed(name: "jpeg-gray", data: try Fixtures.data("jpeg/gray.jpg")),
                Seed(name: "jpeg-exif6", data: try Fixtures.data("jpeg/orientation6.jpg")),
                Seed(name: "jpeg-icc", data: try Fixtures.data("color/display-p3.jpg")),         // colour profile
                Seed(name: "jpeg-junk-in-header", data: try Fixtures.data("tolerance/damaged-jpeg-ff00.jpg")),   // extraneous bytes
            ]
        case .gif:
            let palette: [RGB] = [.red, .green, .blue, .yellow, .white, .black]
            var first = GIFBuilder.Frame.solid(2, width: 6, height: 5)
            first.control?.disposal = 2
            var second = GIFBuilder.Frame(left: 2, top: 1, width: 5, height: 6, indices: (0..<30).map { UInt8($0 % 3) }, interlaced: true)
            second.localColors = [.white, .black, .blue]
            second.control?.transparentIndex = 1
            var third = GIFBuilder.Frame.solid(3, width: 3, height: 3, left: 4, top: 4)
            third.control?.disposal = 3
            var animation = GIFBuilder(width: 9, height: 8, globalColors: palette, frames: [first, second, third])
            animation.loopCount = 0
            let still = GIFBuilder(width: 23, height: 11, globalColors: palette,
                                   frames: [GIFBuilder.Frame(width: 23, height: 11, indices: (0..<253).map { UInt8($0 * 7 % 6) })])
            return [
                Seed(name: "gif-built-animation", data: animation.data),
                Seed(name: "gif-built-still", data: still.data),
                Seed(name: "gif-pillow-animation", data: try Fixtures.data("gif/pillow-animation.gif")),
                Seed(name: "gif-pillow-quadrants", data: try Fixtures.data("gif/pillow-quadrants.gif")),
                Seed(name: "gif-wide-lzw", data: try Fixtures.data("tolerance/damaged-gif-wide-lzw.gif")),    // LZW code sizes 11 and 9
            ]
        case .webp:
            return [
                Seed(name: "webp-lossy", data: try ImageEncoders.webp(quality: 70).encode(gradient)),
                Seed(name: "webp-lossy-alpha", data: try ImageEncoders.webp(quality: 70).encode(translucent)),
                Seed(name: "webp-lossless-alpha", data: try ImageEncoders.webp(lossless: true).encode(translucent)),
                Seed(name: "webp-animated", data: try Fixtures.data("webp/animated.webp")),
                Seed(name: "webp-fixture-lossless", data: try Fixtures.data("webp/lossless-alpha.webp")),
                Seed(name: "webp-iccp", data: try Fixtures.data("color/adobe-rgb-alpha.webp")),  // colour profile
                Seed(name: "webp-exif", data: try Fixtures.data("color/orientation6.webp")),     // EXIF
            ]
        case .avif:
            var tagged = gradient
            tagged.colorProfile = ColorProfile(data: try Fixtures.data("color/adobe-rgb.icc"))
            return [
                Seed(name: "avif-lossy", data: try ImageEncoders.avif(quality: 50, speed: 9).encode(gradient)),
                Seed(name: "avif-lossless-alpha", data: try ImageEncoders.avif(lossless: true, speed: 9).encode(translucent)),
                Seed(name: "avif-icc", data: try ImageEncoders.avif(quality: 40, speed: 9).encode(tagged)),   // colour profile
            ] + (try fixtures(in: "avif"))
        case .heic, .jxl:
            return try fixtures(in: format.rawValue)
        case .bmp:
            return try bitmapSeeds(gradient: gradient, translucent: translucent)
        case .ico:
            return try iconSeeds(translucent: translucent)
        case .tiff:
            return try tiffSeeds(gradient: gradient, translucent: translucent)
        }
    }

    static let colours: [[UInt8]] = [[255, 0, 0], [0, 255, 0], [0, 0, 255], [255, 255, 255], [10, 20, 30]]

    /// BMPs from the encoder (24-bit, 32-bit with alpha, a V5 header with a profile) and built byte by byte.
    static func bitmapSeeds(gradient: Image, translucent: Image) throws -> [Seed] {
        var tagged = gradient
        tagged.colorProfile = ColorProfile(data: try Fixtures.data("color/display-p3.icc"))
        let indices = (0..<6).map { row in (0..<9).map { UInt8(($0 + row) % 5) } }
        let nibbles = indices.map { row in stride(from: 0, to: row.count, by: 2).map { row[$0] << 4 | (($0 + 1 < row.count) ? row[$0 + 1] : 0) } }
        let bits = indices.map { row in [row.prefix(8).enumerated().reduce(UInt8(0)) { $0 | ($1.element & 1) << (7 - $1.offset) }, (row[8] & 1) << 7] }
        let rle8: [UInt8] = [9, 1, 0, 0, 0, 5, 1, 2, 3, 4, 0, 0, 4, 2, 0, 2, 3, 1, 2, 4, 0, 0, 0, 1]
        let rle4: [UInt8] = [9, 0x12, 0, 0, 0, 5, 0x34, 0x01, 0x20, 0, 0, 2, 2, 1, 4, 0x33, 0, 0, 0, 1]
        let bgra: [UInt8] = (0..<24).flatMap { (index: Int) -> [UInt8] in
            [UInt8(index * 10), UInt8(255 - index * 10), UInt8(index * 3), UInt8(index * 11)]
        }
        return [
            Seed(name: "bmp-24", data: try ImageEncoders.bmp().encode(gradient)),
            Seed(name: "bmp-32-alpha", data: try ImageEncoders.bmp().encode(translucent)),
            Seed(name: "bmp-v5-profile", data: try ImageEncoders.bmp().encode(tagged)),
            Seed(name: "bmp-1", data: BMPBuilder(width: 9, height: 6, bitCount: 1, palette: [colours[0], colours[3]], pixels: BMPBuilder.rows(bits)).data),
            Seed(name: "bmp-4", data: BMPBuilder(width: 9, height: 6, bitCount: 4, palette: colours, pixels: BMPBuilder.rows(nibbles)).data),
            Seed(name: "bmp-8-core", data: BMPBuilder(width: 9, height: 6, bitCount: 8, headerSize: 12, palette: colours, pixels: BMPBuilder.rows(indices)).data),
            Seed(name: "bmp-rle8", data: BMPBuilder(width: 9, height: 4, bitCount: 8, compression: 1, palette: colours, pixels: rle8).data),
            Seed(name: "bmp-rle4", data: BMPBuilder(width: 9, height: 4, bitCount: 4, compression: 2, palette: colours, pixels: rle4).data),
            Seed(name: "bmp-565", data: BMPBuilder(width: 6, height: 4, bitCount: 16, compression: 3, masks: [0xF800, 0x07E0, 0x001F],
                                                   pixels: BMPBuilder.rows((0..<4).map { row in (0..<12).map { UInt8($0 * 21 + row * 7) } })).data),
            Seed(name: "bmp-v4-masks-top-down", data: BMPBuilder(width: 6, height: -4, bitCount: 32, compression: 3, headerSize: 108,
                                                                 masks: [0xFF00_0000, 0xFF_0000, 0xFF00, 0xFF], pixels: bgra).data),
        ]
    }

    /// Icons: the encoder's (one PNG), and built ones holding BMP images (24-bit with an AND mask, 32-bit, 8-bit), several sizes.
    static func iconSeeds(translucent: Image) throws -> [Seed] {
        func dib(_ width: Int, _ height: Int, bitCount: Int, palette: [[UInt8]] = []) -> [UInt8] {
            let rowBytes = (width * bitCount + 7) / 8
            let modulus = palette.isEmpty ? 256 : palette.count
            let rows: [[UInt8]] = (0..<height).map { (row: Int) -> [UInt8] in
                (0..<rowBytes).map { (column: Int) -> UInt8 in UInt8((column * 37 + row * 11) % modulus) }
            }
            let mask = ICOBuilder.andMask(width: width, transparent: (0..<height).map { row in (0..<width).map { ($0 + row) % 3 == 0 } })
            return BMPBuilder(width: width, height: 2 * height, bitCount: bitCount, palette: palette, pixels: BMPBuilder.rows(rows)).dib + mask
        }
        let png = [UInt8](try ImageEncoders.png().encode(translucent))
        return [
            Seed(name: "ico-png", data: try ImageEncoders.ico().encode(translucent)),
            Seed(name: "ico-24", data: ICOBuilder(entries: [.init(width: 7, height: 5, bitCount: 24, bytes: dib(7, 5, bitCount: 24))]).data),
            Seed(name: "ico-32", data: ICOBuilder(entries: [.init(width: 6, height: 6, bitCount: 32, bytes: dib(6, 6, bitCount: 32))]).data),
            Seed(name: "ico-8", data: ICOBuilder(entries: [.init(width: 9, height: 4, bitCount: 8, bytes: dib(9, 4, bitCount: 8, palette: colours))]).data),
            Seed(name: "ico-three", data: ICOBuilder(entries: [
                .init(width: 4, height: 4, bitCount: 4, bytes: dib(4, 4, bitCount: 4, palette: colours)),
                .init(width: 20, height: 12, bitCount: 32, bytes: png),
                .init(width: 8, height: 8, bitCount: 24, bytes: dib(8, 8, bitCount: 24)),
            ]).data),
        ]
    }

    /// TIFFs: the encoder's (deflate, LZW, gray) and built ones for libtiff's RGBA path.
    static func tiffSeeds(gradient: Image, translucent: Image) throws -> [Seed] {
        var twoPages = TIFFBuilder(width: 3, height: 3, samples: 1, photometric: 1, pixels: (0..<9).map { UInt8($0 * 28) })
        twoPages.nextPages = [TIFFBuilder(width: 2, height: 2, samples: 3, photometric: 2, pixels: [UInt8](repeating: 90, count: 12))]
        return [
            Seed(name: "tiff-deflate", data: try ImageEncoders.tiff().encode(gradient.converted(to: .rgb8))),
            Seed(name: "tiff-lzw-alpha", data: try ImageEncoders.tiff(compression: .lzw).encode(translucent)),
            Seed(name: "tiff-gray", data: try ImageEncoders.tiff().encode(gradient.converted(to: .gray8))),
            Seed(name: "tiff-16-oriented", data: TIFFBuilder(width: 4, height: 3, samples: 3, bitsPerSample: 16, photometric: 2, orientation: 6,
                                                             pixels: (0..<72).map { UInt8($0 * 3 % 256) }).data),
            Seed(name: "tiff-palette", data: TIFFBuilder(width: 4, height: 2, samples: 1, bitsPerSample: 4, photometric: 3,
                                                         colorMap: (0..<48).map { $0 * 4_000 }, pixels: [0x01, 0x23, 0x45, 0x67]).data),
            Seed(name: "tiff-associated-alpha", data: TIFFBuilder(width: 2, height: 2, samples: 4, photometric: 2, extraSamples: [1],
                                                                  pixels: [128, 64, 0, 128, 0, 0, 0, 0, 255, 255, 255, 255, 10, 20, 30, 40]).data),
            Seed(name: "tiff-two-pages", data: twoPages.data),
        ]
    }

    /// The committed fixtures of one format's folder (made by other tools), up to 50 KB each;
    /// the reference images beside them are left out.
    static func fixtures(in folder: String) throws -> [Seed] {
        let names = try FileManager.default.contentsOfDirectory(atPath: Fixtures.url(folder).path).sorted()
        return try names.compactMap { name in
            let data = try Fixtures.data("\(folder)/\(name)")
            guard ImageFormat(sniffing: data) == ImageFormat(rawValue: folder), data.count <= 50_000 else { return nil }
            return Seed(name: "\(folder)-\(name)", data: data)
        }
    }
}

/// One damaged input.
struct Mutant {
    let name: String
    let data: Data
}

/// Makes the damaged inputs from one seed file.
struct Mutator {
    let name: String
    let bytes: [UInt8]
    /// Other seeds of the same format, for splices.
    let others: [Data]

    private var count: Int { bytes.count }

    func all(format: ImageFormat, using generator: inout SeededGenerator) -> [Mutant] {
        var out = truncations()
        out += bitFlips(using: &generator)
        out += byteSets(using: &generator)
        out += splices(using: &generator)
        switch format {
        case .png: out += pngFields(using: &generator)
        case .jpeg: out += jpegFields()
        case .gif: out += gifFields()
        case .webp: out += webpFields()
        case .avif, .heic: out += heifFields()
        case .jxl: break   // the generic mutations only: the codestream is a bit stream, not fields
        case .bmp: out += bitmapFields()
        case .ico: out += iconFields()
        case .tiff: out += tiffFields()
        }
        return out
    }

    private func mutant(_ label: String, _ bytes: [UInt8]) -> Mutant {
        Mutant(name: "\(name) \(label)", data: Data(bytes))
    }

    /// `bytes` with `value` written over `width` bytes at `offset` (big- or little-endian),
    /// or `nil` when the field does not fit.
    private func setting(_ value: UInt64, at offset: Int, width: Int, bigEndian: Bool, in source: [UInt8]? = nil) -> [UInt8]? {
        var copy = source ?? bytes
        guard offset >= 0, offset + width <= copy.count else { return nil }
        for index in 0..<width {
            let shift = bigEndian ? (width - 1 - index) * 8 : index * 8
            copy[offset + index] = UInt8(truncatingIfNeeded: value >> UInt64(shift))
        }
        return copy
    }

    /// Every length in the first 48 bytes, 40 spread over the file, and the last 8.
    func truncations() -> [Mutant] {
        var lengths = Set(0..<min(count, 48))
        for step in 0..<40 { lengths.insert(count * step / 40) }
        for back in 1...8 where count - back >= 0 { lengths.insert(count - back) }
        return lengths.sorted().map { mutant("truncated to \($0)", Array(bytes.prefix($0))) }
    }

    /// 70 single bit flips (half in the first 200 bytes, where the headers are) and 40 inputs with 2 to 16.
    func bitFlips(using generator: inout SeededGenerator) -> [Mutant] {
        var out: [Mutant] = []
        for round in 0..<70 {
            let limit = round % 2 == 0 ? min(count, 200) : count
            let offset = Int.random(in: 0..<limit, using: &generator)
            let bit = Int.random(in: 0..<8, using: &generator)
            var copy = bytes
            copy[offset] ^= 1 << bit
            out.append(mutant("bit \(bit) of byte \(offset) flipped", copy))
        }
        for _ in 0..<40 {
            var copy = bytes
            let flips = Int.random(in: 2...16, using: &generator)
            for _ in 0..<flips { copy[Int.random(in: 0..<count, using: &generator)] ^= 1 << UInt8.random(in: 0..<8, using: &generator) }
            out.append(mutant("\(flips) bits flipped", copy))
        }
        return out
    }

    /// 40 bytes set to values that often mean "none", "all" or a sign change.
    func byteSets(using generator: inout SeededGenerator) -> [Mutant] {
        let values: [UInt8] = [0x00, 0xFF, 0x7F, 0x80, 0x01, 0xFE]
        return (0..<40).map { round in
            let offset = Int.random(in: 0..<(round % 2 == 0 ? min(count, 100) : count), using: &generator)
            let value = values.randomElement(using: &generator)!
            var copy = bytes
            copy[offset] = value
            return mutant("byte \(offset) set to \(value)", copy)
        }
    }

    /// 24 splices: ranges deleted, duplicated or filled with noise, and joins with other seeds.
    func splices(using generator: inout SeededGenerator) -> [Mutant] {
        var out: [Mutant] = []
        for round in 0..<24 {
            let start = Int.random(in: 0..<count, using: &generator)
            let end = Int.random(in: start...min(count, start + 64), using: &generator)
            switch round % 4 {
            case 0:
                out.append(mutant("bytes \(start)..<\(end) deleted", Array(bytes[..<start] + bytes[end...])))
            case 1:
                out.append(mutant("bytes \(start)..<\(end) repeated", Array(bytes[..<end] + bytes[start...])))
            case 2:
                let noise = (0..<Int.random(in: 1...32, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) }
                out.append(mutant("\(noise.count) noise bytes at \(start)", Array(bytes[..<start]) + noise + Array(bytes[start...])))
            default:
                guard let other = others.randomElement(using: &generator).map(Array.init) else { continue }
                let cut = Int.random(in: 0..<other.count, using: &generator)
                out.append(mutant("first \(start) bytes + another seed from \(cut)", Array(bytes[..<start]) + Array(other[cut...])))
            }
        }
        return out
    }

    // MARK: Format-specific fields

    /// PNG: IHDR fields (with the CRC fixed, so the decoder reads them), every chunk's length
    /// and type, chunks removed, repeated and reordered, and IDAT bytes changed under a good CRC.
    func pngFields(using generator: inout SeededGenerator) -> [Mutant] {
        var chunks: [(offset: Int, length: Int, type: String)] = []
        var offset = 8
        while offset + 12 <= count {
            let length = Int(bytes[offset]) << 24 | Int(bytes[offset + 1]) << 16 | Int(bytes[offset + 2]) << 8 | Int(bytes[offset + 3])
            chunks.append((offset, length, String(decoding: bytes[offset + 4..<offset + 8], as: UTF8.self)))
            offset += 12 + length
        }
        /// `source` with the CRC of the chunk at `chunk` recomputed.
        func fixingCRC(_ source: [UInt8], chunk: Int) -> [UInt8] {
            let length = Int(source[chunk]) << 24 | Int(source[chunk + 1]) << 16 | Int(source[chunk + 2]) << 8 | Int(source[chunk + 3])
            guard chunk + 12 + length <= source.count else { return source }
            let crc = crc32(Data(source[chunk + 4..<chunk + 8 + length]))
            return setting(UInt64(crc), at: chunk + 8 + length, width: 4, bigEndian: true, in: source) ?? source
        }
        var out: [Mutant] = []
        let ihdr = 8
        for (label, field, width, values) in [
            ("width", 8, 4, [0, 1, 0x7FFF_FFFF, 0xFFFF_FFFF, 65_535, 1 << 20] as [UInt64]),
            ("height", 12, 4, [0, 1, 0x7FFF_FFFF, 0xFFFF_FFFF, 65_535, 1 << 20]),
            ("bit depth", 16, 1, [0, 1, 3, 16, 255]),
            ("colour type", 17, 1, [1, 2, 3, 4, 5, 6, 7, 255]),
            ("compression", 18, 1, [1, 255]),
            ("filter", 19, 1, [1, 255]),
            ("interlace", 20, 1, [1, 2, 255]),
        ] {
            for value in values {
                guard let changed = setting(value, at: ihdr + field, width: width, bigEndian: true) else { continue }
                out.append(mutant("IHDR \(label) \(value)", fixingCRC(changed, chunk: ihdr)))
            }
        }
        for (index, chunk) in chunks.enumerated() {
            for value in [0, 1, UInt64(chunk.length) + 1, UInt64(max(chunk.length - 1, 0)), 0x7FFF_FFFF, 0xFFFF_FFFF] {
                if let changed = setting(value, at: chunk.offset, width: 4, bigEndian: true) {
                    out.append(mutant("\(chunk.type) #\(index) length \(value)", changed))
                }
            }
            for type in ["IHDR", "IDAT", "IEND", "PLTE", "tRNS", "acTL", "fdAT", "iCCP", "zzzz", "ZZZZ"] where type != chunk.type {
                var changed = bytes
                changed.replaceSubrange(chunk.offset + 4..<chunk.offset + 8, with: Array(type.utf8))
                out.append(mutant("\(chunk.type) #\(index) renamed \(type)", fixingCRC(changed, chunk: chunk.offset)))
            }
            let whole = chunk.offset..<min(count, chunk.offset + 12 + chunk.length)
            out.append(mutant("\(chunk.type) #\(index) removed", Array(bytes[..<whole.lowerBound] + bytes[whole.upperBound...])))
            out.append(mutant("\(chunk.type) #\(index) twice", Array(bytes[..<whole.upperBound] + bytes[whole])
                                + Array(bytes[whole.upperBound...])))
            if index + 1 < chunks.count {
                let next = chunks[index + 1]
                let nextWhole = next.offset..<min(count, next.offset + 12 + next.length)
                out.append(mutant("\(chunk.type) #\(index) after \(next.type)", Array(bytes[..<whole.lowerBound] + bytes[nextWhole] + bytes[whole]
                                    + bytes[nextWhole.upperBound...])))
            }
            // APNG fields, under a CRC that vouches for them.
            let body = chunk.offset + 8
            let apngFields: [(String, Int, Int, [UInt64])] = switch chunk.type {
            case "acTL": [("frames", 0, 4, [0, 1, 2, 1_000, 0xFFFF_FFFF]), ("plays", 4, 4, [1, 0xFFFF_FFFF])]
            case "fcTL": [("sequence", 0, 4, [0, 1, 99, 0xFFFF_FFFF]), ("width", 4, 4, [0, 1, 65_535, 0x7FFF_FFFF, 0xFFFF_FFFF]),
                          ("height", 8, 4, [0, 1, 65_535, 0xFFFF_FFFF]), ("x", 12, 4, [1, 63, 0x7FFF_FFFF, 0xFFFF_FFFF]),
                          ("y", 16, 4, [1, 47, 0xFFFF_FFFF]), ("delay denominator", 22, 2, [0, 0xFFFF]),
                          ("dispose", 24, 1, [0, 1, 2, 3, 255]), ("blend", 25, 1, [0, 1, 2, 255])]
            case "fdAT": [("sequence", 0, 4, [0, 1, 99, 0xFFFF_FFFF])]
            default: []
            }
            for (label, field, width, values) in apngFields {
                for value in values {
                    guard field + width <= chunk.length, let changed = setting(value, at: body + field, width: width, bigEndian: true) else { continue }
                    out.append(mutant("\(chunk.type) #\(index) \(label) \(value)", fixingCRC(changed, chunk: chunk.offset)))
                }
            }
            // Damage inside the compressed data, under a CRC that vouches for it.
            if chunk.type == "fdAT" && chunk.length > 4 {
                for _ in 0..<6 {
                    var changed = bytes
                    let at = body + 4 + Int.random(in: 0..<(chunk.length - 4), using: &generator)
                    changed[at] = UInt8.random(in: 0...255, using: &generator)
                    out.append(mutant("fdAT #\(index) byte \(at) changed, CRC fixed", fixingCRC(changed, chunk: chunk.offset)))
                }
            }
            if chunk.type == "IDAT" && chunk.length > 0 {
                for _ in 0..<12 {
                    var changed = bytes
                    let at = chunk.offset + 8 + Int.random(in: 0..<chunk.length, using: &generator)
                    changed[at] = UInt8.random(in: 0...255, using: &generator)
                    out.append(mutant("IDAT #\(index) byte \(at) changed, CRC fixed", fixingCRC(changed, chunk: chunk.offset)))
                }
            }
        }
        return out
    }

    /// JPEG: each segment's length and marker, SOF dimensions, precision, components and
    /// sampling, DQT and DHT table ids, SOS fields, and markers inserted into the scan.
    func jpegFields() -> [Mutant] {
        var segments: [(offset: Int, marker: UInt8, length: Int)] = []
        var offset = 2
        var scan = count
        while offset + 4 <= count, bytes[offset] == 0xFF {
            let marker = bytes[offset + 1]
            if (0xD0...0xD8).contains(marker) || marker == 0x01 { offset += 2; continue }
            let length = Int(bytes[offset + 2]) << 8 | Int(bytes[offset + 3])
            segments.append((offset, marker, length))
            offset += 2 + length
            if marker == 0xDA { scan = offset; break }
        }
        var out: [Mutant] = []
        func set(_ label: String, _ value: UInt64, at field: Int, width: Int = 1) {
            if let changed = setting(value, at: field, width: width, bigEndian: true) { out.append(mutant(label, changed)) }
        }
        for (index, segment) in segments.enumerated() {
            let name = String(format: "segment #%d (FF%02X)", index, Int(segment.marker))
            for value in [0, 1, 2, 3, 0xFFFF, UInt64(segment.length) + 1, UInt64(max(segment.length - 1, 0))] {
                set("\(name) length \(value)", value, at: segment.offset + 2, width: 2)
            }
            for marker in [0xC0, 0xC1, 0xC2, 0xC3, 0xC4, 0xC9, 0xCC, 0xDA, 0xDB, 0xDD, 0xD9, 0xD8, 0xE1, 0xFE, 0x01, 0xFF] as [UInt64]
            where marker != UInt64(segment.marker) {
                set("\(name) marker FF\(String(marker, radix: 16))", marker, at: segment.offset + 1)
            }
            let body = segment.offset + 4
            switch segment.marker {
            case 0xC0...0xC3:
                for value in [0, 1, 12, 16, 255] as [UInt64] { set("\(name) precision \(value)", value, at: body) }
                for value in [0, 1, 0x8000, 0xFFFF] as [UInt64] {
                    set("\(name) height \(value)", value, at: body + 1, width: 2)
                    set("\(name) width \(value)", value, at: body + 3, width: 2)
                }
                for value in [0, 2, 4, 5, 255] as [UInt64] { set("\(name) \(value) components", value, at: body + 5) }
                let components = Int(bytes[min(body + 5, count - 1)])
                for component in 0..<min(components, 4) {
                    let at = body + 6 + component * 3
                    set("\(name) component \(component) id 0", 0, at: at)
                    for sampling in [0x00, 0x44, 0x11, 0xFF, 0x13, 0x31, 0x41] as [UInt64] {
                        set("\(name) component \(component) sampling \(String(sampling, radix: 16))", sampling, at: at + 1)
                    }
                    for table in [3, 4, 255] as [UInt64] { set("\(name) component \(component) table \(table)", table, at: at + 2) }
                }
            case 0xDB:
                for value in [0x04, 0x10, 0x13, 0xFF] as [UInt64] { set("\(name) table \(value)", value, at: body) }
            case 0xC4:
                for value in [0x02, 0x04, 0x14, 0x20, 0xFF] as [UInt64] { set("\(name) table \(value)", value, at: body) }
                for slot in [1, 8, 15] { set("\(name) count \(slot) 255", 255, at: body + slot) }
            case 0xDA:
                for value in [0, 2, 4, 255] as [UInt64] { set("\(name) \(value) components", value, at: body) }
                set("\(name) first selector 9", 9, at: body + 1)
                set("\(name) first tables 0x44", 0x44, at: body + 2)
                let end = segment.offset + 2 + segment.length
                for (field, values) in [(end - 3, [0, 63, 64, 255]), (end - 2, [0, 63, 64, 255]), (end - 1, [0x00, 0x11, 0xF0, 0xFF])] as [(Int, [UInt64])] {
                    for value in values { set("\(name) byte \(field - segment.offset) = \(value)", value, at: field) }
                }
            default:
                break
            }
            let whole = segment.offset..<min(count, segment.offset + 2 + segment.length)
            out.append(mutant("\(name) removed", Array(bytes[..<whole.lowerBound] + bytes[whole.upperBound...])))
            out.append(mutant("\(name) twice", Array(bytes[..<whole.upperBound] + bytes[whole] + bytes[whole.upperBound...])))
        }
        // Inside the entropy-coded data: stray markers, and a cut before the end marker.
        if scan < count - 2 {
            let middle = (scan + count) / 2
            for marker: UInt8 in [0xD0, 0xD7, 0xD9, 0xDA, 0xC4, 0x00, 0xFF] {
                out.append(mutant("FF\(String(marker, radix: 16)) in the scan", Array(bytes[..<middle]) + [0xFF, marker] + Array(bytes[middle...])))
            }
            out.append(mutant("restart interval 1", Array(bytes[..<segments.last!.offset]) + [0xFF, 0xDD, 0, 4, 0, 1]
                                + Array(bytes[segments.last!.offset...])))
            out.append(mutant("no end marker", Array(bytes.dropLast(2))))
            out.append(mutant("two images", bytes + bytes))
        }
        return out
    }

    /// GIF: the logical screen, its flags, every block's introducer, each image descriptor's
    /// rectangle and flags, LZW code sizes, sub-block lengths and extension labels.
    /// The HEIF container's fields: every box size of the top-level boxes
    /// and of the boxes a `meta` box holds, and the sizes an `ispe` box declares.
    func heifFields() -> [Mutant] {
        var out: [Mutant] = []
        func set(_ label: String, _ value: UInt64, at field: Int, width: Int = 4) {
            if let changed = setting(value, at: field, width: width, bigEndian: true) { out.append(mutant(label, changed)) }
        }
        func boxes(from start: Int, to end: Int) -> [(offset: Int, type: String, size: Int)] {
            var found: [(Int, String, Int)] = []
            var offset = start
            while offset + 8 <= end {
                let size = Int(bytes[offset]) << 24 | Int(bytes[offset + 1]) << 16 | Int(bytes[offset + 2]) << 8 | Int(bytes[offset + 3])
                let type = String(decoding: bytes[offset + 4..<offset + 8], as: UTF8.self)
                found.append((offset, type, size))
                guard size >= 8 else { break }
                offset += size
            }
            return found
        }
        var all = boxes(from: 0, to: count)
        if let meta = all.first(where: { $0.type == "meta" }) {
            all += boxes(from: meta.offset + 12, to: min(count, meta.offset + meta.size))   // a full box: 4 bytes of version and flags
        }
        for box in all {
            for value in [0, 1, 7, 8, UInt64(box.size) + 1, UInt64(max(box.size - 1, 0)), 0xFFFF_FFFF] as [UInt64] {
                set("\(box.type) size \(value)", value, at: box.offset)
            }
        }
        var search = 0
        while let found = bytes[search...].firstIndex(of: UInt8(ascii: "i")), found + 16 <= count {
            if Array(bytes[found..<found + 4]) == Array("ispe".utf8) {
                for value in [0, 1, 0xFFFF, 0x7FFF_FFFF, 0xFFFF_FFFF] as [UInt64] {
                    set("ispe width \(value)", value, at: found + 8)
                    set("ispe height \(value)", value, at: found + 12)
                }
            }
            search = found + 1
        }
        return out
    }

    func gifFields() -> [Mutant] {
        var out: [Mutant] = []
        func set(_ label: String, _ value: UInt64, at field: Int, width: Int = 1) {
            if let changed = setting(value, at: field, width: width, bigEndian: false) { out.append(mutant(label, changed)) }
        }
        for value in [0, 1, 0x8000, 0xFFFF] as [UInt64] {
            set("screen width \(value)", value, at: 6, width: 2)
            set("screen height \(value)", value, at: 8, width: 2)
            set("screen \(value) square", value << 16 | value, at: 6, width: 4)
        }
        for value in [0x00, 0x07, 0x80, 0x87, 0xF7, 0x7F, 0xFF] as [UInt64] { set("screen flags \(value)", value, at: 10) }
        set("background 255", 255, at: 11)
        set("version 87a", 0x37, at: 4)
        // Walk the blocks.
        var offset = 13
        if bytes.count > 10, bytes[10] & 0x80 != 0 { offset += 3 << (Int(bytes[10] & 7) + 1) }
        /// The offset after the sub-blocks that start at `start`, and the offset of the first length byte.
        func skipSubBlocks(_ start: Int) -> Int {
            var at = start
            while at < count, bytes[at] != 0 { at += 1 + Int(bytes[at]) }
            return at + 1
        }
        var block = 0
        while offset < count, block < 12 {
            let introducer = bytes[offset]
            let name = "block #\(block) (\(String(introducer, radix: 16)))"
            for value in [0x00, 0x21, 0x2C, 0x3B, 0x99] as [UInt64] where value != UInt64(introducer) {
                set("\(name) introducer \(String(value, radix: 16))", value, at: offset)
            }
            let end: Int
            if introducer == 0x21 {
                guard offset + 2 < count else { break }
                for label in [0xF9, 0xFF, 0xFE, 0x01, 0x00] as [UInt64] where label != UInt64(bytes[offset + 1]) {
                    set("\(name) label \(String(label, radix: 16))", label, at: offset + 1)
                }
                for size in [0, 1, 3, 255] as [UInt64] { set("\(name) size \(size)", size, at: offset + 2) }
                if bytes[offset + 1] == 0xF9 { set("\(name) every control flag", 0xFF, at: offset + 3) }
                if bytes[offset + 1] == 0xFF { set("\(name) loop count 65535", 0xFFFF, at: offset + 16, width: 2) }
                end = skipSubBlocks(offset + 2)
            } else if introducer == 0x2C {
                guard offset + 10 < count else { break }
                for (field, label) in [(1, "left"), (3, "top"), (5, "width"), (7, "height")] {
                    for value in [0, 1, 0x8000, 0xFFFF] as [UInt64] { set("\(name) \(label) \(value)", value, at: offset + field, width: 2) }
                }
                for flags in [0x00, 0x40, 0x80, 0x87, 0xC7, 0xFF] as [UInt64] where flags != UInt64(bytes[offset + 9]) {
                    set("\(name) flags \(String(flags, radix: 16))", flags, at: offset + 9)
                }
                var lzw = offset + 10
                if bytes[offset + 9] & 0x80 != 0 { lzw += 3 << (Int(bytes[offset + 9] & 7) + 1) }
                guard lzw + 1 < count else { break }
                for size in [0, 1, 2, 8, 11, 12, 13, 255] as [UInt64] where size != UInt64(bytes[lzw]) {
                    set("\(name) LZW code size \(size)", size, at: lzw)
                }
                for length in [0, 1, 254, 255] as [UInt64] where length != UInt64(bytes[lzw + 1]) {
                    set("\(name) sub-block length \(length)", length, at: lzw + 1)
                }
                end = skipSubBlocks(lzw + 1)
            } else {
                break
            }
            guard end <= count else { break }
            out.append(mutant("\(name) removed", Array(bytes[..<offset] + bytes[end...])))
            out.append(mutant("\(name) twice", Array(bytes[..<end] + bytes[offset..<end] + bytes[end...])))
            out.append(mutant("ends after \(name)", Array(bytes[..<end]) + [0x3B]))
            offset = end
            block += 1
        }
        out.append(mutant("no trailer", Array(bytes.dropLast())))
        return out
    }

    /// WebP: the RIFF size, every chunk's size and FourCC, VP8X flags and canvas, the VP8
    /// and VP8L frame headers, ANIM and ANMF fields.
    func webpFields() -> [Mutant] {
        var out: [Mutant] = []
        func set(_ label: String, _ value: UInt64, at field: Int, width: Int = 1) {
            if let changed = setting(value, at: field, width: width, bigEndian: false) { out.append(mutant(label, changed)) }
        }
        for value in [0, 4, 8, UInt64(count - 9), UInt64(count - 7), UInt64(count), 0x7FFF_FFFF, 0xFFFF_FFFF] {
            set("RIFF size \(value)", value, at: 4, width: 4)
        }
        for (index, value) in ["WEBQ", "AVI ", "    "].enumerated() {
            var changed = bytes
            changed.replaceSubrange(8..<12, with: Array(value.utf8))
            out.append(mutant("form type #\(index)", changed))
        }
        /// The chunks from `start` to `end`: offset of the FourCC, FourCC, size.
        func chunks(from start: Int, to end: Int) -> [(offset: Int, fourCC: String, size: Int)] {
            var found: [(Int, String, Int)] = []
            var at = start
            while at + 8 <= end {
                let size = Int(bytes[at + 4]) | Int(bytes[at + 5]) << 8 | Int(bytes[at + 6]) << 16 | Int(bytes[at + 7]) << 24
                found.append((at, String(decoding: bytes[at..<at + 4], as: UTF8.self), size))
                at += 8 + size + (size & 1)
            }
            return found
        }
        var all = chunks(from: 12, to: count)
        // An animation's frames hold their own chunks, after 16 bytes of frame header.
        for frame in all where frame.fourCC == "ANMF" {
            all += chunks(from: frame.offset + 8 + 16, to: min(count, frame.offset + 8 + frame.size))
        }
        for (index, chunk) in all.enumerated() {
            let name = "chunk #\(index) (\(chunk.fourCC))"
            let payload = chunk.offset + 8
            for value in [0, 1, UInt64(chunk.size + 1), UInt64(max(chunk.size - 1, 0)), UInt64(chunk.size + 2), 0x7FFF_FFF0, 0xFFFF_FFFF] {
                set("\(name) size \(value)", value, at: chunk.offset + 4, width: 4)
            }
            for fourCC in ["VP8 ", "VP8L", "VP8X", "ANIM", "ANMF", "ALPH", "ICCP", "XXXX"] where fourCC != chunk.fourCC {
                var changed = bytes
                changed.replaceSubrange(chunk.offset..<chunk.offset + 4, with: Array(fourCC.utf8))
                out.append(mutant("\(name) renamed \(fourCC)", changed))
            }
            switch chunk.fourCC {
            case "VP8X":
                for flags in [0x00, 0x02, 0x10, 0x12, 0x20, 0x3E, 0xFF] as [UInt64] { set("\(name) flags \(flags)", flags, at: payload) }
                for value in [0, 0x3FFF, 0x7FFF, 0xFF_FFFF] as [UInt64] {
                    set("\(name) canvas width-1 \(value)", value, at: payload + 4, width: 3)
                    set("\(name) canvas height-1 \(value)", value, at: payload + 7, width: 3)
                }
            case "VP8 ":
                // Frame tag (3 bytes: key frame bit, version, partition size), start code, 14-bit sizes with scale bits.
                for value in [0x01, 0x0F, 0xFF] as [UInt64] { set("\(name) frame tag \(value)", value, at: payload) }
                set("\(name) first partition size huge", 0xFF_FFE0, at: payload, width: 3)
                set("\(name) start code", 0x9D012B, at: payload + 3, width: 3)
                for value in [0, 1, 0x3FFF, 0xC000 | 24, 0xFFFF] as [UInt64] {
                    set("\(name) width \(value)", value, at: payload + 6, width: 2)
                    set("\(name) height \(value)", value, at: payload + 8, width: 2)
                }
            case "VP8L":
                set("\(name) signature", 0x2E, at: payload)
                for value in [0x0000_0000, 0xFFFF_FFFF, 0x0FFF_FFFF, 0x2000_0000, 0xE000_0000] as [UInt64] {
                    set("\(name) header bits \(String(value, radix: 16))", value, at: payload + 1, width: 4)
                }
                for offset in [5, 6, 8] { set("\(name) byte \(offset) 0xFF", 0xFF, at: payload + offset) }
            case "ALPH":
                for value in [0x01, 0x03, 0x04, 0x3F, 0xFF] as [UInt64] { set("\(name) header \(value)", value, at: payload) }
            case "ANIM":
                set("\(name) loop count 65535", 0xFFFF, at: payload + 4, width: 2)
            case "ANMF":
                for value in [0x7F_FFFF, 0xFF_FFFF, 100] as [UInt64] {
                    set("\(name) x \(value)", value, at: payload, width: 3)
                    set("\(name) y \(value)", value, at: payload + 3, width: 3)
                    set("\(name) width-1 \(value)", value, at: payload + 6, width: 3)
                    set("\(name) height-1 \(value)", value, at: payload + 9, width: 3)
                }
                set("\(name) width-1 0", 0, at: payload + 6, width: 3)
                set("\(name) flags 0xFF", 0xFF, at: payload + 15)
            default:
                break
            }
            let whole = chunk.offset..<min(count, payload + chunk.size + (chunk.size & 1))
            out.append(mutant("\(name) removed", Array(bytes[..<whole.lowerBound] + bytes[whole.upperBound...])))
            out.append(mutant("\(name) twice", Array(bytes[..<whole.upperBound] + bytes[whole] + bytes[whole.upperBound...])))
        }
        return out
    }

    /// BMP: the file header's size and pixel offset, then the DIB header's fields.
    func bitmapFields() -> [Mutant] {
        var out: [Mutant] = []
        for value in [0, 1, 14, 54, UInt64(count), UInt64(count + 1), 0xFFFF_FFFF] as [UInt64] {
            if let changed = setting(value, at: 10, width: 4, bigEndian: false) { out.append(mutant("pixel offset \(value)", changed)) }
            if let changed = setting(value, at: 2, width: 4, bigEndian: false) { out.append(mutant("file size \(value)", changed)) }
        }
        return out + dibFields(at: 14, name: "dib")
    }

    /// The fields of a DIB header at `start`: its size, sides, bit count, compression, palette size and masks.
    func dibFields(at start: Int, name: String) -> [Mutant] {
        var out: [Mutant] = []
        func set(_ label: String, _ value: UInt64, at field: Int, width: Int) {
            if let changed = setting(value, at: start + field, width: width, bigEndian: false) { out.append(mutant("\(name) \(label)", changed)) }
        }
        for value in [0, 11, 12, 16, 39, 40, 52, 56, 64, 108, 124, 125, 0xFFFF_FFFF] as [UInt64] { set("size \(value)", value, at: 0, width: 4) }
        guard start + 4 <= count else { return out }
        let isCore = bytes[start] == 12
        let sideWidth = isCore ? 2 : 4
        for value in [0, 1, 0x7FFF, 0xFFFF, 0x7FFF_FFFF, 0x8000_0000, 0xFFFF_FFFF, 0xFFFF_FFFE] as [UInt64] {
            set("width \(value)", value, at: 4, width: sideWidth)
            set("height \(value)", value, at: 4 + sideWidth, width: sideWidth)
        }
        let bitCount = isCore ? 10 : 14
        for value in [0, 1, 2, 3, 4, 8, 15, 16, 24, 32, 48, 64, 0xFFFF] as [UInt64] { set("bit count \(value)", value, at: bitCount, width: 2) }
        guard !isCore else { return out }
        for value in [0, 1, 2, 3, 4, 5, 6, 11, 0xFFFF_FFFF] as [UInt64] { set("compression \(value)", value, at: 16, width: 4) }
        for value in [0, 1, 2, 255, 256, 257, 0xFFFF_FFFF] as [UInt64] { set("colours used \(value)", value, at: 32, width: 4) }
        set("image size huge", 0xFFFF_FFFF, at: 20, width: 4)
        for mask in 0..<4 {
            for value in [0, 0xFFFF_FFFF, 0x8000_0001, 0xFF, 0xF0F0] as [UInt64] { set("mask \(mask) \(value)", value, at: 40 + 4 * mask, width: 4) }
        }
        for value in [0x4D42_4544, 0x7352_4742] as [UInt64] { set("colour space \(value)", value, at: 56, width: 4) }
        for value in [0, 1, 0x7FFF_FFFF, 0xFFFF_FFFF] as [UInt64] {
            set("profile offset \(value)", value, at: 112, width: 4)
            set("profile size \(value)", value, at: 116, width: 4)
        }
        return out
    }

    /// ICO: the count, every entry's fields, and the DIB header of each BMP image.
    func iconFields() -> [Mutant] {
        var out: [Mutant] = []
        func set(_ label: String, _ value: UInt64, at field: Int, width: Int) {
            if let changed = setting(value, at: field, width: width, bigEndian: false) { out.append(mutant(label, changed)) }
        }
        for value in [0, 1, 2, 3, 255, 0xFFFF] as [UInt64] { set("count \(value)", value, at: 4, width: 2) }
        set("type 2", 2, at: 2, width: 2)
        let entries = count >= 6 ? min(Int(bytes[4]) | Int(bytes[5]) << 8, 8) : 0
        for index in 0..<entries where 6 + 16 * index + 16 <= count {
            let at = 6 + 16 * index
            for value in [0, 1, 255] as [UInt64] {
                set("entry \(index) width \(value)", value, at: at, width: 1)
                set("entry \(index) height \(value)", value, at: at + 1, width: 1)
            }
            for value in [0, 1, 32, 0xFFFF] as [UInt64] { set("entry \(index) bit count \(value)", value, at: at + 6, width: 2) }
            let size = Int(bytes[at + 8]) | Int(bytes[at + 9]) << 8 | Int(bytes[at + 10]) << 16 | Int(bytes[at + 11]) << 24
            let offset = Int(bytes[at + 12]) | Int(bytes[at + 13]) << 8 | Int(bytes[at + 14]) << 16 | Int(bytes[at + 15]) << 24
            for value in [0, 1, UInt64(size + 1), UInt64(max(size - 1, 0)), 0xFFFF_FFFF] { set("entry \(index) size \(value)", value, at: at + 8, width: 4) }
            for value in [0, 6, UInt64(offset + 1), UInt64(count), 0xFFFF_FFFF] { set("entry \(index) offset \(value)", value, at: at + 12, width: 4) }
            if offset + 4 <= count, bytes[offset] != 0x89 { out += dibFields(at: offset, name: "entry \(index) dib") }
        }
        return out
    }

    /// TIFF (little-endian seeds): the first directory's offset, and each of its entries' type, count and value.
    func tiffFields() -> [Mutant] {
        var out: [Mutant] = []
        func set(_ label: String, _ value: UInt64, at field: Int, width: Int) {
            if let changed = setting(value, at: field, width: width, bigEndian: false) { out.append(mutant(label, changed)) }
        }
        guard count >= 8, bytes[0] == 0x49 else { return out }
        for value in [0, 1, 7, 9, UInt64(count), 0xFFFF_FFFF] as [UInt64] { set("directory offset \(value)", value, at: 4, width: 4) }
        let directory = Int(bytes[4]) | Int(bytes[5]) << 8 | Int(bytes[6]) << 16 | Int(bytes[7]) << 24
        guard directory + 2 <= count else { return out }
        let entries = Int(bytes[directory]) | Int(bytes[directory + 1]) << 8
        for value in [0, 1, 0xFFFF] as [UInt64] { set("entry count \(value)", value, at: directory, width: 2) }
        for index in 0..<min(entries, 24) where directory + 2 + 12 * index + 12 <= count {
            let at = directory + 2 + 12 * index
            let tag = Int(bytes[at]) | Int(bytes[at + 1]) << 8
            for type in [0, 1, 3, 4, 5, 12, 16, 99] as [UInt64] { set("tag \(tag) type \(type)", type, at: at + 2, width: 2) }
            for value in [0, 2, 0xFFFF, 0x7FFF_FFFF, 0xFFFF_FFFF] as [UInt64] { set("tag \(tag) count \(value)", value, at: at + 4, width: 4) }
            for value in [0, 1, 2, 5, 8, 0xFFFF, UInt64(count), 0xFFFF_FFFF] as [UInt64] { set("tag \(tag) value \(value)", value, at: at + 8, width: 4) }
        }
        return out
    }
}
