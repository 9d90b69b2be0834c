import CDeflate
import CSpng
import Foundation
import Imago
@testable import ImagoCodecs
import ImagoTesting
import Testing

/// The PNG fast path (ISA-L's inflate and Imago's own unfiltering) against
/// libspng alone: on every input, the two decoders must give the same image
/// or both fail. The fast path hands anything it cannot decode exactly to
/// libspng, so it must never change an outcome, only the speed.
@Suite struct PNGFastPathTests {
    let fast = CodecDecoder(format: .png, functions: .png(fastPath: true))
    let reference = CodecDecoder(format: .png, functions: .png(fastPath: false))
    static let optionSets = [
        ImageDecodingOptions(), ImageDecodingOptions(maximumPixelSize: 16),
        ImageDecodingOptions(thumbnail: Thumbnail(width: 10, height: 20, mode: .crop)),
    ]

    @Test(arguments: try! Fixtures.pngSuite())
    func suiteFilesDecodeAsLibspngDecodesThem(name: String) throws {
        let data = try Fixtures.data("pngsuite/\(name)")
        for options in Self.optionSets {
            #expect(outcome(fast, data, options) == outcome(reference, data, options), "\(name) \(options)")
        }
    }

    /// Handmade files: each row filtered with a chosen type, the data split
    /// into IDAT chunks of odd sizes (empty ones too), RGB and RGBA, and
    /// widths that end a row in the middle of a 16-byte block.
    @Test(arguments: [(PixelFormat.rgb8, 1, 1), (.rgb8, 37, 23), (.rgba8, 37, 23), (.rgb8, 300, 7), (.rgba8, 5, 64), (.rgb8, 2, 90)])
    func everyFilterTypeIsUndoneExactly(format: PixelFormat, width: Int, height: Int) throws {
        var generator = SeededGenerator(seed: UInt64(width * 1_000 + height * 10 + format.bytesPerPixel))
        let source = PNGThumbnailTests.noise(width: width, height: height, format: format)
        for pattern in 0..<7 {
            // Patterns 0-4: one filter type for every row; 5, 6: random per row.
            let filters = (0..<height).map { _ in pattern < 5 ? UInt8(pattern) : UInt8.random(in: 0...4, using: &generator) }
            let data = HandmadePNG(image: source, filters: filters, chunkSizes: pattern % 2 == 0 ? [] : [0, 7, 1, 100, 0]).data
            let decoded = try fast.decode(data)
            #expect(decoded == source, "\(format) \(width)x\(height) pattern \(pattern)")
            // The fast path itself decodes it (it did not hand it to libspng).
            #expect(PNGFastPath.decode(data, header: Self.header(source), format: format, plan: nil) == source)
            let plan = ResamplingPlan(sourceWidth: width, sourceHeight: height, format: format, width: max(1, width / 3), height: max(1, height / 3))
            let expected = source.resized(width: plan.width, height: plan.height)
            // Rows inflated one, three, or all at a time, batches ending anywhere in the image.
            let stride = width * format.bytesPerPixel + 1
            for batchBytes in [1, 3 * stride + 1, PNGFastPath.batchBytes] {
                #expect(PNGFastPath.decode(data, header: Self.header(source), format: format, plan: plan, batchBytes: batchBytes) == expected,
                        "\(format) \(width)x\(height) pattern \(pattern), batches of \(batchBytes) bytes")
            }
            for options in Self.optionSets {
                #expect(outcome(fast, data, options) == outcome(reference, data, options), "\(format) pattern \(pattern) \(options)")
            }
        }
    }

    /// A read bigger than igzip's 32-bit output count is handed over in
    /// pieces; a small piece limit exercises the same loop.
    @Test func aReadLargerThanOnePieceInflatesInPieces() {
        let raw = (0..<10_000).map { UInt8(truncatingIfNeeded: $0 &* 7 ^ $0 >> 3) }
        let compressed = HandmadePNG.zlib(raw)
        compressed.withUnsafeBytes { bytes in
            // Split into chunks too, so pieces and chunk ends fall in different places.
            let chunks = [UnsafeRawBufferPointer(rebasing: bytes[..<500]), UnsafeRawBufferPointer(rebasing: bytes[500...])]
            for pieceLimit in [1, 7, 4_096, raw.count] {
                var stream = InflateStream(chunks: chunks)
                var output = [UInt8](repeating: 0, count: raw.count)
                let read = output.withUnsafeMutableBufferPointer { stream.read(into: $0.baseAddress!, count: raw.count, pieceLimit: pieceLimit) }
                #expect(read && output == raw && stream.finish(), "piece limit \(pieceLimit)")
            }
            var short = InflateStream(chunks: chunks)
            var output = [UInt8](repeating: 0, count: raw.count + 1)
            #expect(!output.withUnsafeMutableBufferPointer { short.read(into: $0.baseAddress!, count: raw.count + 1, pieceLimit: 7) })
        }
    }

    @Test func damagedFilesFailOrDecodeExactlyAsLibspngDecidesThem() throws {
        let source = PNGThumbnailTests.noise(width: 40, height: 30, format: .rgba8)
        let good = HandmadePNG(image: source, filters: (0..<30).map { UInt8($0 % 5) }, chunkSizes: [500])
        var cases: [(String, Data)] = []
        cases.append(("unknown filter type", HandmadePNG(image: source, filters: [UInt8](repeating: 4, count: 29) + [5]).data))
        var crc = [UInt8](good.data)
        crc[good.firstImageDataOffset + 8] ^= 1                               // a payload byte: the IDAT CRC no longer matches
        cases.append(("IDAT checksum", Data(crc)))
        cases.append(("text after the image data", good.with(trailer: HandmadePNG.chunk("tEXt", Array("Comment\0after".utf8)))))
        cases.append(("bytes after IEND", good.data + Data([0, 1, 2])))
        cases.append(("short stream", HandmadePNG(image: source, filters: [UInt8](repeating: 1, count: 30), dropRows: 1).data))
        cases.append(("long stream", HandmadePNG(image: source, filters: [UInt8](repeating: 1, count: 30), extraRows: 1).data))
        cases.append(("truncated", good.data.prefix(good.data.count - 20)))
        // The zlib wrapper, with every chunk CRC correct: the fast path must refuse what zlib refuses.
        func stream(_ edit: @escaping (inout [UInt8]) -> Void) -> Data {
            HandmadePNG(image: source, filters: (0..<30).map { UInt8($0 % 5) }, chunkSizes: [500], editStream: edit).data
        }
        func header(_ cmf: UInt8, _ flags: UInt8) -> (inout [UInt8]) -> Void {   // FCHECK made right
            { $0[0] = cmf; $0[1] = flags & 0xE0; $0[1] |= UInt8(31 - (UInt16(cmf) << 8 | UInt16($0[1])) % 31) % 31 }
        }
        cases.append(("Adler-32", stream { $0[$0.count - 1] ^= 1 }))
        cases.append(("zlib header check", stream { $0[1] ^= 1 }))
        cases.append(("window over 32 KiB", stream(header(0x88, 0x9C))))
        cases.append(("preset dictionary", stream(header(0x78, 0xBC))))
        cases.append(("not deflate", stream(header(0x77, 0x9C))))
        for (label, data) in cases {
            for options in Self.optionSets {
                #expect(outcome(fast, data, options) == outcome(reference, data, options), "\(label) \(options)")
            }
        }
        #expect(outcome(fast, cases[0].1, ImageDecodingOptions()).hasPrefix("error"))
        // The fast path takes the good file and declines every damaged one.
        #expect(PNGFastPath.decode(good.data, header: Self.header(source), format: .rgba8, plan: nil) == source)
        let plan = ResamplingPlan(sourceWidth: 40, sourceHeight: 30, format: .rgba8, width: 8, height: 6)
        #expect(PNGFastPath.decode(good.data, header: Self.header(source), format: .rgba8, plan: plan) != nil)
        for (label, data) in cases {
            #expect(PNGFastPath.decode(data, header: Self.header(source), format: .rgba8, plan: nil) == nil, "\(label)")
            #expect(PNGFastPath.decode(data, header: Self.header(source), format: .rgba8, plan: plan) == nil, "thumbnail: \(label)")
            #expect(PNGFastPath.decode(data, header: Self.header(source), format: .rgba8, plan: plan, batchBytes: 7 * 161) == nil,
                    "thumbnail in batches of 7 rows: \(label)")
        }
        #expect(outcome(fast, cases[2].1, ImageDecodingOptions()) == outcome(fast, good.data, ImageDecodingOptions()))
    }

    @Test func hostileMutantsDecodeAsLibspngDecodesThem() throws {
        let seeds = try HostileCorpusTests.seeds(.png)
        var mismatches: [String] = []
        var count = 0
        for (index, seed) in seeds.enumerated() {
            var generator = SeededGenerator(seed: 0xFA57 + UInt64(index))
            let others = seeds.filter { $0.name != seed.name }.map(\.data)
            for (number, mutant) in Mutator(name: seed.name, bytes: [UInt8](seed.data), others: others).all(format: .png, using: &generator).enumerated() {
                let options = Self.optionSets[number % Self.optionSets.count]
                count += 1
                if outcome(fast, mutant.data, options) != outcome(reference, mutant.data, options) { mismatches.append(mutant.name) }
            }
        }
        #expect(count >= 500)
        #expect(mismatches.isEmpty, "\(mismatches.count) differ, first: \(mismatches.prefix(10))")
    }

    static func header(_ image: Image) -> spng_ihdr {
        spng_ihdr(width: UInt32(image.width), height: UInt32(image.height), bit_depth: 8,
                  color_type: image.pixelFormat == .rgba8 ? 6 : 2, compression_method: 0, filter_method: 0, interlace_method: 0)
    }

    /// The image's pixels (as a hash of the whole value) or the error.
    private func outcome(_ decoder: CodecDecoder, _ data: Data, _ options: ImageDecodingOptions) -> String {
        do {
            let image = try decoder.decode(data, options: options)
            return "image \(image.width)x\(image.height) \(image.pixelFormat) \(image.hashValue)"
        } catch {
            return "error \(error)"
        }
    }
}

/// A PNG written by hand, so the tests choose each row's filter and how the
/// image data is split into chunks.
struct HandmadePNG {
    let data: Data
    /// Where the first IDAT chunk starts (its length field).
    let firstImageDataOffset: Int
    private let body: [UInt8]

    /// - Parameters:
    ///   - filters: One filter type per row; a type above 4 writes the row unfiltered.
    ///   - chunkSizes: The sizes of the first IDAT chunks; the rest goes in one more.
    ///   - dropRows: Rows left out of the compressed stream (a short stream).
    ///   - extraRows: Rows of zeros added to it (a long stream).
    ///   - editStream: Changes the compressed stream (its header or checksum).
    init(image: Image, filters: [UInt8], chunkSizes: [Int] = [], dropRows: Int = 0, extraRows: Int = 0,
         editStream: (inout [UInt8]) -> Void = { _ in }) {
        let channels = image.pixelFormat.bytesPerPixel
        let rowBytes = image.width * channels
        let pixels = image.frames[0].pixels
        var raw: [UInt8] = []
        for row in 0..<image.height - dropRows {
            let filter = filters[row]
            raw.append(filter)
            for i in 0..<rowBytes {
                let x = Int(pixels[row * rowBytes + i])
                let a = i >= channels ? Int(pixels[row * rowBytes + i - channels]) : 0
                let b = row > 0 ? Int(pixels[(row - 1) * rowBytes + i]) : 0
                let c = row > 0 && i >= channels ? Int(pixels[(row - 1) * rowBytes + i - channels]) : 0
                let prediction: Int
                switch filter {
                case 1: prediction = a
                case 2: prediction = b
                case 3: prediction = (a + b) / 2
                case 4:
                    let pa = abs(b - c), pb = abs(a - c), pc = abs(a + b - 2 * c)
                    prediction = pa <= pb && pa <= pc ? a : pb <= pc ? b : c
                default: prediction = 0
                }
                raw.append(UInt8(truncatingIfNeeded: x - prediction))
            }
        }
        raw += [UInt8](repeating: 0, count: extraRows * (rowBytes + 1))
        var compressed = Self.zlib(raw)
        editStream(&compressed)
        var body: [UInt8] = []
        var header = [UInt8]()
        for value in [UInt32(image.width), UInt32(image.height)] { header += Self.bigEndian(value) }
        header += [8, image.pixelFormat == .rgba8 ? 6 : 2, 0, 0, 0]
        body += Self.chunk("IHDR", header)
        firstImageDataOffset = 8 + body.count
        var offset = 0
        for size in chunkSizes where offset + size <= compressed.count {
            body += Self.chunk("IDAT", Array(compressed[offset..<offset + size]))
            offset += size
        }
        body += Self.chunk("IDAT", Array(compressed[offset...]))
        self.body = body
        data = Data([137, 80, 78, 71, 13, 10, 26, 10] + body + Self.chunk("IEND", []))
    }

    /// The same file with `trailer` between the image data and `IEND`.
    func with(trailer: [UInt8]) -> Data {
        Data([137, 80, 78, 71, 13, 10, 26, 10] + body + trailer + Self.chunk("IEND", []))
    }

    static func chunk(_ type: String, _ payload: [UInt8]) -> [UInt8] {
        let typed = Array(type.utf8) + payload
        let crc = typed.withUnsafeBytes { libdeflate_crc32(0, $0.baseAddress, $0.count) }
        return bigEndian(UInt32(payload.count)) + typed + bigEndian(crc)
    }

    static func bigEndian(_ value: UInt32) -> [UInt8] {
        [UInt8(value >> 24), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)]
    }

    static func zlib(_ bytes: [UInt8]) -> [UInt8] {
        let compressor = libdeflate_alloc_compressor(6)!
        defer { libdeflate_free_compressor(compressor) }
        var out = [UInt8](repeating: 0, count: libdeflate_zlib_compress_bound(compressor, bytes.count))
        let size = bytes.withUnsafeBytes { input in
            out.withUnsafeMutableBytes { output in
                libdeflate_zlib_compress(compressor, input.baseAddress, input.count, output.baseAddress, output.count)
            }
        }
        return Array(out.prefix(size))
    }
}
