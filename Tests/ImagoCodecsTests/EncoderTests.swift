import Foundation
import Imago
import ImagoCodecs
import ImagoTesting
import Testing

/// PNG and JPEG encoders, checked by decoding what they write.
@Suite struct EncoderTests {
    let gradient = TestImages.gradient(width: 37, height: 23)

    @Test(arguments: PixelFormat.allCases)
    func pngRoundTripIsExactForEveryPixelFormat(format: PixelFormat) throws {
        let image = gradient.converted(to: format)
        let data = try ImageEncoders.png().encode(image)
        #expect(ImageFormat(sniffing: data) == .png)
        let decoded = try ImageDecoders.png().decode(data)
        // The decoder widens gray to RGB(A); compare in the decoder's format.
        #expect(decoded.width == 37 && decoded.height == 23)
        #expect(decoded == image.converted(to: decoded.pixelFormat))
        #expect(decoded.pixelFormat.hasAlpha == format.hasAlpha)
    }

    @Test func pngEncodesAPaddedStrideImage() throws {
        // 2x2 RGB with 2 bytes of padding per row.
        let image = Image(width: 2, height: 2, pixelFormat: .rgb8, bytesPerRow: 8, pixels: [1, 2, 3, 4, 5, 6, 0, 0, 7, 8, 9, 10, 11, 12, 0, 0])
        let decoded = try ImageDecoders.png().decode(try ImageEncoders.png().encode(image))
        #expect(decoded.pixels == [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12])
    }

    @Test func harderPNGCompressionIsNotLarger() throws {
        let sizes = try PNGEncoder.Compression.allCases.map { try ImageEncoders.png(compression: $0).encode(gradient).count }
        #expect(sizes[2] <= sizes[1] && sizes[2] <= sizes[0], "\(sizes)")
    }

    /// Every compression, every pixel format, noise and flat areas: the
    /// decode is the source, byte for byte, and libspng (not our reader)
    /// accepts every chunk's checksum.
    @Test(arguments: PNGEncoder.Compression.allCases)
    func pngRoundTripsExactlyAtEveryCompression(_ compression: PNGEncoder.Compression) throws {
        var generator = SeededGenerator(seed: 28)
        for format in [PixelFormat.rgba8, .rgb8, .grayAlpha8, .gray8] {
            let (width, height) = (37, 23)
            let pixels = (0..<(width * height * format.bytesPerPixel)).map { index in
                index % 97 < 40 ? UInt8(index % 7) : UInt8(truncatingIfNeeded: generator.next())
            }
            let image = Image(width: width, height: height, pixelFormat: format, bytesPerRow: width * format.bytesPerPixel, pixels: pixels)
            let data = try ImageEncoders.png(compression: compression).encode(image)
            let decoded = try ImageDecoders.png(functions: .png, colorConversion: nil).decode(data)
            // The decoder may widen gray to RGB; the samples must be the same.
            #expect(decoded.pixelFormat.hasAlpha == format.hasAlpha)
            let same = decoded.converted(to: format).pixels == pixels
            #expect(same, "\(format)")
        }
    }

    /// The colour type in a PNG's `IHDR`.
    private func colorType(_ png: Data) -> UInt8 { png[png.startIndex + 25] }

    /// Whether a PNG has a chunk of `type`.
    private func hasChunk(_ png: Data, _ type: String) -> Bool {
        let bytes = Array(png)
        var offset = 8
        while offset + 8 <= bytes.count {
            let length = bytes[offset..<(offset + 4)].reduce(0) { $0 << 8 | Int($1) }
            if String(decoding: bytes[(offset + 4)..<(offset + 8)], as: UTF8.self) == type { return true }
            offset += 12 + length
        }
        return false
    }

    /// An image of `colors` colours (RGB, or RGBA with every fourth colour
    /// translucent), in runs and noise, `width` wide with rows padded.
    private func fewColors(_ colors: Int, format: PixelFormat, width: Int = 301, height: Int = 67) -> Image {
        var generator = SeededGenerator(seed: 7)
        let channels = format.bytesPerPixel, stride = width * channels + 5
        var pixels = [UInt8](repeating: 0, count: stride * height)
        for y in 0..<height {
            for x in 0..<width {
                let color = (x / 9 + y / 5) % 3 == 0 ? Int(generator.next() % UInt64(colors)) : (x / 13 + y) % colors
                let base = y * stride + x * channels
                pixels[base] = UInt8(color % 256)
                pixels[base + 1] = UInt8((color * 7) % 256)
                pixels[base + 2] = UInt8(color / 256 * 40)
                if channels == 4 { pixels[base + 3] = color % 4 == 0 ? UInt8(color % 200) : 255 }
            }
        }
        return Image(width: width, height: height, pixelFormat: format, bytesPerRow: stride, pixels: pixels)
    }

    /// RGB and RGBA images of at most 256 colours are written indexed (RGBA
    /// ones with tRNS, even when opaque, so they decode with alpha) and
    /// decode to the source, at every compression; 257 colours stay RGB.
    @Test(arguments: PNGEncoder.Compression.allCases)
    func fewColorsAreWrittenIndexedAndRoundTrip(_ compression: PNGEncoder.Compression) throws {
        let cases: [(Int, PixelFormat, UInt8)] = [(1, .rgb8, 3), (2, .rgba8, 3), (64, .rgb8, 3), (256, .rgba8, 3),
                                                  (256, .rgb8, 3), (257, .rgb8, 2), (300, .rgba8, 6)]
        for (colors, format, expectedType) in cases {
            let image = fewColors(colors, format: format)
            let data = try ImageEncoders.png(compression: compression).encode(image)
            #expect(colorType(data) == expectedType, "\(colors) \(format)")
            #expect(hasChunk(data, "tRNS") == (expectedType == 3 && format == .rgba8), "\(colors) \(format)")
            let decoded = try ImageDecoders.png(functions: .png, colorConversion: nil).decode(data)
            #expect(decoded.pixelFormat == format, "\(colors) \(format)")
            #expect(decoded == image.converted(to: format), "\(colors) \(format)")
        }
        // Opaque RGBA of few colours keeps its alpha channel.
        let opaque = TestImages.solid(width: 40, height: 40, red: 9, green: 8, blue: 7).converted(to: .rgba8)
        let decoded = try ImageDecoders.png().decode(try ImageEncoders.png(compression: compression).encode(opaque))
        #expect(decoded.pixelFormat == .rgba8 && decoded == opaque)
    }

    /// Images large enough for the default's sampled choice of compressor
    /// (noise, which run-length deflate wins, and repeated text-like
    /// strings, which libdeflate wins) decode to the source.
    @Test func largeImagesRoundTripAtEveryCompression() throws {
        var generator = SeededGenerator(seed: 11)
        let (width, height) = (611, 211)
        let noise = (0..<(width * height * 3)).map { index in UInt8(truncatingIfNeeded: (index / 3 % width) + Int(generator.next() % 9)) }
        let pattern = (0..<(width * height * 3)).map { index in UInt8(truncatingIfNeeded: (index * 31 / 7) % 251 ^ (index / 5000)) }
        for pixels in [noise, pattern] {
            let image = Image(width: width, height: height, pixelFormat: .rgb8, bytesPerRow: width * 3, pixels: pixels)
            for compression in PNGEncoder.Compression.allCases {
                let data = try ImageEncoders.png(compression: compression).encode(image)
                #expect(colorType(data) == 2)
                #expect(try ImageDecoders.png(functions: .png, colorConversion: nil).decode(data) == image, "\(compression)")
            }
        }
    }

    @Test(arguments: [false, true])
    func jpegRoundTripIsClose(progressive: Bool) throws {
        let image = TestImages.solid(width: 64, height: 48, red: 200, green: 80, blue: 40)
        let data = try ImageEncoders.jpeg(quality: 95, progressive: progressive).encode(image)
        #expect(ImageFormat(sniffing: data) == .jpeg)
        let decoded = try ImageDecoders.jpeg().decode(data)
        #expect(decoded.pixelFormat == .rgb8)
        #expect(decoded.width == 64 && decoded.height == 48)
        let pixel = decoded.pixel(x: 30, y: 20).map(Int.init)
        #expect(zip(pixel, [200, 80, 40]).allSatisfy { abs($0 - $1) <= 4 }, "\(pixel)")
    }

    @Test func jpegQualityTradesSizeForFidelity() throws {
        let low = try ImageEncoders.jpeg(quality: 10).encode(gradient)
        let high = try ImageEncoders.jpeg(quality: 100).encode(gradient)
        #expect(low.count < high.count)
    }

    @Test func grayJPEGStaysGray() throws {
        let data = try ImageEncoders.jpeg().encode(gradient.converted(to: .gray8))
        #expect(try ImageDecoders.jpeg().decode(data).pixelFormat == .gray8)
    }

    @Test(arguments: [0, 101, -5])
    func jpegRejectsQualityOutsideTheRange(quality: Int) throws {
        let error = try #require(throws: ImageEncodingError.self) { try ImageEncoders.jpeg(quality: quality).encode(gradient) }
        #expect(error.code == .unsupportedImage)
        #expect(error.format == .jpeg)
    }

    @Test func encoderForFormat() {
        #expect(ImageEncoders.encoder(for: .png)?.format == .png)
        #expect(ImageEncoders.encoder(for: .jpeg)?.format == .jpeg)
        #expect(ImageEncoders.encoder(for: .webp)?.format == .webp)
        #expect(ImageEncoders.encoder(for: .avif)?.format == .avif)
        for format in ImageFormat.allCases {
            #expect((ImageEncoders.encoder(for: format) != nil) == format.isWritable, "\(format)")
        }
    }

    /// One set of default qualities: the mapping's, the factories' and the encoders' own.
    @Test func oneSetOfDefaultQualities() {
        #expect(ImageEncoders.defaultQuality(for: .jpeg) == 85)
        #expect(ImageEncoders.defaultQuality(for: .webp) == 80)
        #expect(ImageEncoders.defaultQuality(for: .avif) == 60)
        #expect(ImageEncoders.defaultQuality(for: .png) == nil)
        #expect((ImageEncoders.encoder(for: .jpeg) as? JPEGEncoder)?.quality == 85)
        #expect((ImageEncoders.encoder(for: .webp) as? WebPEncoder)?.quality == 80)
        #expect((ImageEncoders.encoder(for: .avif) as? AVIFEncoder)?.quality == 60)
        #expect(ImageEncoders.jpeg().quality == JPEGEncoder().quality && JPEGEncoder().quality == 85)
        #expect(ImageEncoders.webp().quality == WebPEncoder().quality && WebPEncoder().quality == 80)
        #expect(ImageEncoders.avif().quality == AVIFEncoder().quality && AVIFEncoder().quality == 60)
        #expect((ImageEncoders.encoder(for: .jpeg, quality: 40) as? JPEGEncoder)?.quality == 40)
        #expect((ImageEncoders.encoder(for: .webp, quality: 40) as? WebPEncoder)?.quality == 40)
        #expect((ImageEncoders.encoder(for: .avif, quality: 40) as? AVIFEncoder)?.quality == 40)
        #expect(ImageEncoders.defaultQuality(for: .jxl) == 80)
        #expect((ImageEncoders.encoder(for: .jxl) as? JXLEncoder)?.quality == 80)
        #expect((ImageEncoders.encoder(for: .jxl, quality: 40) as? JXLEncoder)?.quality == 40)
    }
}
