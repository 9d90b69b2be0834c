import CImagoKernels
import Foundation
import Imago
@testable import ImagoCodecs
import ImagoTesting
import Testing

/// Imago's LZW decoder (`imago_gif_lzw_decode`) against giflib alone: on
/// every input the GIF table must give the same image, or the same error,
/// with and without it. The decoder hands any raster it does not take to
/// giflib, so it may change the speed, never an outcome.
@Suite struct GIFFastLZWTests {
    let fast = CodecDecoder(format: .gif, functions: .gif(fastLZW: true))
    let reference = CodecDecoder(format: .gif, functions: .gif(fastLZW: false))

    /// `count` colours, all different.
    static func colors(_ count: Int) -> [RGB] {
        (0..<count).map { (index: Int) -> RGB in
            RGB(red: UInt8(index), green: UInt8(255 - index), blue: UInt8(truncatingIfNeeded: index * 7))
        }
    }

    /// Indices below `colorCount`: noise, or runs long enough for strings of hundreds of bytes.
    static func indices(_ count: Int, colorCount: Int, runs: Bool, generator: inout SeededGenerator) -> [UInt8] {
        guard runs else { return (0..<count).map { _ in UInt8(truncatingIfNeeded: Int.random(in: 0..<colorCount, using: &generator)) } }
        var out: [UInt8] = []
        while out.count < count {
            out += repeatElement(UInt8(truncatingIfNeeded: Int.random(in: 0..<colorCount, using: &generator)), count: Int.random(in: 1...600, using: &generator))
        }
        return Array(out.prefix(count))
    }

    /// Animations that use every code size from 2 to 8, noise and long runs,
    /// interlacing, transparency, disposals, local colour maps, deferred
    /// clears and frames past the canvas (which giflib decodes).
    static func animations() -> [(String, Data)] {
        var generator = SeededGenerator(seed: 0x61F)
        var files: [(String, Data)] = []
        for colorCount in [2, 4, 16, 128, 256] {
            for runs in [false, true] {
                for clearsWhenFull in [true, false] {
                    var frames: [GIFBuilder.Frame] = []
                    for index in 0..<4 {
                        let (width, height) = index == 0 ? (97, 61) : (Int.random(in: 1...97, using: &generator), Int.random(in: 1...61, using: &generator))
                        var frame = GIFBuilder.Frame(
                            left: index == 0 ? 0 : Int.random(in: 0...(97 - width), using: &generator),
                            top: index == 0 ? 0 : Int.random(in: 0...(61 - height), using: &generator),
                            width: width, height: height,
                            indices: indices(width * height, colorCount: colorCount, runs: runs, generator: &generator),
                            interlaced: index == 2)
                        frame.control?.disposal = index
                        frame.control?.transparentIndex = index == 1 ? 0 : nil
                        if index == 3 { frame.localColors = Self.colors(colorCount).reversed() }
                        frames.append(frame)
                    }
                    frames.append(.solid(1, width: 30, height: 30, left: 80, top: 50))   // past the canvas: giflib's
                    var gif = GIFBuilder(width: 97, height: 61, globalColors: Self.colors(colorCount), frames: frames)
                    gif.clearsWhenFull = clearsWhenFull
                    files.append(("\(colorCount) colours, runs \(runs), clears \(clearsWhenFull)", gif.data))
                }
            }
        }
        return files
    }

    @Test func builtAnimationsDecodeAsGiflibDecodesThem() {
        for (name, data) in Self.animations() {
            #expect(outcome(fast, data) == outcome(reference, data), "\(name)")
            #expect(outcome(fast, data).hasPrefix("image"), "\(name)")
        }
    }

    /// Frames that cover the whole canvas with opaque pixels are drawn on a
    /// new buffer instead of a copy of the last one: each frame handed out
    /// keeps its own pixels, whatever the disposals and interlacing.
    @Test func opaqueFramesOverTheWholeCanvasKeepEveryFrameIntact() throws {
        var generator = SeededGenerator(seed: 0xF0)
        let colors = Self.colors(16)
        var frames: [GIFBuilder.Frame] = []
        for index in 0..<5 {
            var frame = GIFBuilder.Frame(width: 23, height: 17, indices: Self.indices(23 * 17, colorCount: 16, runs: index % 2 == 0, generator: &generator),
                                         interlaced: index == 3)
            frame.control?.disposal = [0, 2, 3, 1, 0][index]
            frames.append(frame)
        }
        let data = GIFBuilder(width: 23, height: 17, globalColors: colors, frames: frames).data
        let expected = frames.map { frame in frame.indices.flatMap { colors[Int($0)].rgba } }
        for decoder in [fast, reference] {
            #expect(try decoder.decode(data).frames.map(\.pixels) == expected)
            #expect(try decoder.decode(data, options: ImageDecodingOptions(frameIndex: 4)).pixels == expected[4])
        }
    }

    @Test func fixtureFilesDecodeAsGiflibDecodesThem() throws {
        let directory = Fixtures.url("tolerance")
        let tolerance = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.hasSuffix(".gif") }.map { "tolerance/\($0)" }
        for name in ["gif/pillow-animation.gif", "gif/pillow-quadrants.gif"] + tolerance {
            let data = try Fixtures.data(name)
            #expect(outcome(fast, data) == outcome(reference, data), "\(name)")
        }
    }

    /// The decoder itself takes clean rasters of every code size, deferred
    /// clears and strings longer than the copy's eight bytes (it does not
    /// hand them to giflib), and stops at the pixel count.
    @Test(arguments: [2, 4, 16, 128, 256])
    func theDecoderTakesCleanRasters(colorCount: Int) {
        var generator = SeededGenerator(seed: UInt64(colorCount))
        let codeSize = max(2, Int(GIFBuilder.tableBits(colorCount)) + 1)
        for runs in [false, true] {
            for clearsWhenFull in [true, false] {
                let pixels = Self.indices(40_000, colorCount: colorCount, runs: runs, generator: &generator)
                let raster = GIFBuilder.subBlocks(GIFBuilder.lzw(pixels, minimumCodeSize: codeSize, clearsWhenFull: clearsWhenFull)) + [0x3B]
                var output = [UInt8](repeating: 0, count: pixels.count + Int(IMAGO_GIF_LZW_SLACK))
                let consumed = output.withUnsafeMutableBufferPointer { out in
                    raster.withUnsafeBufferPointer { imago_gif_lzw_decode($0.baseAddress, $0.count, UInt32(codeSize), out.baseAddress, pixels.count, out.count) }
                }
                #expect(consumed == raster.count - 1, "\(colorCount) colours, runs \(runs), clears \(clearsWhenFull)")
                #expect(Array(output.prefix(pixels.count)) == pixels, "\(colorCount) colours, runs \(runs), clears \(clearsWhenFull)")
                // Fewer pixels than the raster holds: the rest is skipped, as giflib skips it.
                let fewer = output.withUnsafeMutableBufferPointer { out in
                    raster.withUnsafeBufferPointer { imago_gif_lzw_decode($0.baseAddress, $0.count, UInt32(codeSize), out.baseAddress, 1_000, out.count) }
                }
                #expect(fewer == raster.count - 1)
                // More pixels than it holds, or a raster cut short: declined.
                let more = output.withUnsafeMutableBufferPointer { out in
                    raster.withUnsafeBufferPointer { imago_gif_lzw_decode($0.baseAddress, $0.count, UInt32(codeSize), out.baseAddress, pixels.count + 1, out.count) }
                }
                let cut = output.withUnsafeMutableBufferPointer { out in
                    raster.withUnsafeBufferPointer { imago_gif_lzw_decode($0.baseAddress, $0.count - 3, UInt32(codeSize), out.baseAddress, pixels.count, out.count) }
                }
                #expect(more == -1 && cut == -1)
            }
        }
    }

    @Test func randomCorruptionFailsOrDecodesAsGiflibDecides() {
        let files = Self.animations()
        var generator = SeededGenerator(seed: 0xC0DE)
        for round in 0..<1_500 {
            let (name, original) = files[round % files.count]
            var bytes = [UInt8](original)
            // Past the header and colour map mostly: the rasters are most of the file.
            for _ in 0..<Int.random(in: 1...3, using: &generator) {
                bytes[Int.random(in: 13..<bytes.count, using: &generator)] = UInt8.random(in: 0...255, using: &generator)
            }
            if round % 5 == 0 { bytes.removeLast(Int.random(in: 1..<bytes.count / 2, using: &generator)) }
            let data = Data(bytes)
            #expect(outcome(fast, data) == outcome(reference, data), "\(name), round \(round)")
        }
    }

    /// The image's pixels and frames, or the error, as text to compare.
    private func outcome(_ decoder: CodecDecoder, _ data: Data) -> String {
        do {
            let image = try decoder.decode(data)
            return "image \(image.width)x\(image.height) \(image.frames.count) frames \(image.hashValue)"
        } catch {
            return "error \(error)"
        }
    }
}
