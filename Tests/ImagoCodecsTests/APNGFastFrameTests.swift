import CDeflate
import Foundation
import Imago
@testable import ImagoCodecs
import ImagoTesting
import Testing

/// APNG frames decoded by ``APNGFastFrame`` (ISA-L's inflate, Imago's
/// unfiltering, straight into the canvas) against libspng alone: every file
/// must give the same frames, or the same error, either way.
@Suite struct APNGFastFrameTests {
    let fast = CodecDecoder(format: .png, functions: .png(fastPath: true))
    let reference = CodecDecoder(format: .png, functions: .png(fastPath: false))
    static let files = ["blend-over.png", "default-image.png", "dispose.png", "offsets.png", "single-frame.png"]

    @Test(arguments: files)
    func fixturesDecodeAsLibspngDecodesThem(name: String) throws {
        let data = try Fixtures.data("apng/\(name)")
        #expect(outcome(fast, data) == outcome(reference, data))
        for frame in 0..<3 {
            let options = ImageDecodingOptions(frameIndex: frame)
            #expect(outcome(fast, data, options) == outcome(reference, data, options), "frame \(frame)")
        }
    }

    /// Frames the fast path takes, and the whole animation, as libspng decodes them.
    @Test func theFastPathDecodesTheFixturesItself() throws {
        let data = try Fixtures.data("apng/blend-over.png")
        let animation = try #require(APNG(reading: data))
        let fastFrame = try #require(APNGFastFrame(header: animation.header, paletteChunks: animation.paletteChunks))
        var canvas = [UInt8](repeating: 7, count: 64 * 48 * 4)
        let frame = animation.frames[1]
        #expect(fastFrame.draw(frame, from: data, on: &canvas, canvasWidth: 64, blend: frame.blend))
    }

    /// An RGB APNG (as APNGEncoder writes RGB frames): opaque RGBA canvases,
    /// the fast path's own, as libspng gives them; with damaged frame data too.
    @Test func rgbFramesDecodeAsLibspngDecodesThem() throws {
        let frames = (0..<3).map { PNGThumbnailTests.noise(width: 37 + $0, height: 23, format: .rgb8).resized(width: 37, height: 23) }
        let writer = try APNGEncoder().makeWriter(width: 37, height: 23, loopCount: 0)
        for frame in frames { try writer.add(frame, duration: 0.1) }
        let data = try writer.finish()
        let animation = try #require(APNG(reading: data))
        let decoded = try fast.decode(data)
        var expected: [[UInt8]] = []
        for frame in frames {
            var rgba: [UInt8] = []
            for start in stride(from: 0, to: frame.pixels.count, by: 3) {
                rgba += frame.pixels[start..<start + 3]
                rgba.append(255)
            }
            expected.append(rgba)
        }
        #expect(decoded.frames.map(\.pixels) == expected)
        // The fast path decodes them itself.
        let fastFrame = try #require(APNGFastFrame(header: animation.header, paletteChunks: animation.paletteChunks))
        var canvas = [UInt8](repeating: 0, count: 37 * 23 * 4)
        #expect(fastFrame.draw(animation.frames[2], from: data, on: &canvas, canvasWidth: 37, blend: 1))
        #expect(canvas == expected[2])
        #expect(outcome(fast, data) == outcome(reference, data))
        let original = [UInt8](data)
        let chunks = Self.imageDataChunks(original)
        var generator = SeededGenerator(seed: 0x2B)
        for round in 0..<200 {
            var bytes = original
            let chunk = chunks[round % chunks.count]
            bytes[Int.random(in: chunk.payload, using: &generator)] = UInt8.random(in: 0...255, using: &generator)
            Self.fixCRC(&bytes, chunk: chunk.start)
            #expect(outcome(fast, Data(bytes)) == outcome(reference, Data(bytes)), "round \(round)")
        }
    }

    /// RGB with a `tRNS` colour key, palettes, grey and 16-bit samples go to libspng.
    @Test func otherFormatsAreLeftToLibspng() {
        let header = { (depth: UInt8, type: UInt8) in [0, 0, 0, 8, 0, 0, 0, 8, depth, type, 0, 0, 0] as [UInt8] }
        let transparency: [UInt8] = [0, 0, 0, 6] + Array("tRNS".utf8) + [0, 1, 0, 2, 0, 3] + [0, 0, 0, 0]
        #expect(APNGFastFrame(header: header(8, 6), paletteChunks: []) != nil)
        #expect(APNGFastFrame(header: header(8, 2), paletteChunks: []) != nil)
        #expect(APNGFastFrame(header: header(8, 2), paletteChunks: transparency) == nil)
        #expect(APNGFastFrame(header: header(8, 3), paletteChunks: []) == nil)
        #expect(APNGFastFrame(header: header(8, 0), paletteChunks: []) == nil)
        #expect(APNGFastFrame(header: header(16, 6), paletteChunks: []) == nil)
    }

    /// Damage inside the frames' compressed data, with each chunk's CRC made
    /// right again so the animation stays whole: a broken stream, a wrong
    /// Adler-32, an unknown filter type, data that ends early.
    @Test(arguments: files)
    func damagedFrameDataFailsOrDecodesAsLibspngDecides(name: String) throws {
        let original = [UInt8](try Fixtures.data("apng/\(name)"))
        let chunks = Self.imageDataChunks(original)
        var generator = SeededGenerator(seed: UInt64(name.utf8.count) * 977)
        for round in 0..<300 {
            var bytes = original
            let chunk = chunks[round % chunks.count]
            for _ in 0..<Int.random(in: 1...3, using: &generator) {
                bytes[Int.random(in: chunk.payload, using: &generator)] = UInt8.random(in: 0...255, using: &generator)
            }
            Self.fixCRC(&bytes, chunk: chunk.start)
            let data = Data(bytes)
            #expect(outcome(fast, data) == outcome(reference, data), "\(name), round \(round)")
        }
    }

    /// The `IDAT` and `fdAT` chunks: where each starts and its bytes to damage (past an `fdAT`'s sequence number).
    static func imageDataChunks(_ bytes: [UInt8]) -> [(start: Int, payload: Range<Int>)] {
        var chunks: [(Int, Range<Int>)] = []
        var offset = 8
        while offset + 12 <= bytes.count {
            let length = Int(bytes[offset]) << 24 | Int(bytes[offset + 1]) << 16 | Int(bytes[offset + 2]) << 8 | Int(bytes[offset + 3])
            let type = String(decoding: bytes[offset + 4..<offset + 8], as: UTF8.self)
            if type == "IDAT" { chunks.append((offset, offset + 8..<offset + 8 + length)) }
            if type == "fdAT" { chunks.append((offset, offset + 12..<offset + 8 + length)) }
            offset += 12 + length
        }
        return chunks
    }

    /// Writes the right CRC of the chunk at `start`.
    static func fixCRC(_ bytes: inout [UInt8], chunk start: Int) {
        let length = Int(bytes[start]) << 24 | Int(bytes[start + 1]) << 16 | Int(bytes[start + 2]) << 8 | Int(bytes[start + 3])
        let crc = bytes[start + 4..<start + 8 + length].withUnsafeBufferPointer { libdeflate_crc32(0, $0.baseAddress, $0.count) }
        for index in 0..<4 { bytes[start + 8 + length + index] = UInt8(truncatingIfNeeded: crc >> (24 - 8 * index)) }
    }

    private func outcome(_ decoder: CodecDecoder, _ data: Data, _ options: ImageDecodingOptions = ImageDecodingOptions()) -> String {
        do {
            let image = try decoder.decode(data, options: options)
            return "image \(image.width)x\(image.height) \(image.frames.count) frames \(image.hashValue)"
        } catch {
            return "error \(error)"
        }
    }
}
