import Foundation
import Imago
import ImagoCodecs
import ImagoTesting
import ImagoTestingSupport
import Testing

/// Frame-by-frame decoding (`decodeFrames`) of every animated format, and
/// the animation writers (WebP, GIF, APNG) read back by the decoders.
@Suite struct AnimationTests {
    static let animations = ["gif/pillow-animation.gif", "webp/animated.webp", "apng/dispose.png", "avif/animated.avif", "jxl/animated.jxl"]

    @Test(arguments: animations)
    func framesOneByOneAreTheFramesOfAWholeDecode(_ path: String) throws {
        let data = try Fixtures.data(path)
        let whole = try ImageDecoders.all.decode(data)
        #expect(whole.frames.count > 1)
        var handed: [Image] = []
        try ImageDecoders.all.decodeFrames(data, options: ImageDecodingOptions(), maximumFrames: nil) { frame in
            handed.append(frame)
            return true
        }
        #expect(handed.count == whole.frames.count)
        for (index, frame) in handed.enumerated() {
            #expect(frame.frames.count == 1, "one frame at a time")
            #expect((frame.width, frame.height, frame.pixelFormat) == (whole.width, whole.height, whole.pixelFormat))
            #expect(frame.frames[0] == whole.frames[index], "\(path) frame \(index)")
            #expect(frame.loopCount == whole.loopCount)
        }
    }

    @Test(arguments: animations)
    func theFirstFramesOnlyAndTheLimitCountsThem(_ path: String) throws {
        let data = try Fixtures.data(path)
        let info = try ImageDecoders.info(for: data)
        var count = 0
        try ImageDecoders.all.decodeFrames(data, options: ImageDecodingOptions(), maximumFrames: 2) { _ in
            count += 1
            return true
        }
        #expect(count == 2)
        // A limit that holds two frames but not all of them.
        var options = ImageDecodingOptions()
        options.maximumPixelCount = info.width * info.height * 2
        #expect(throws: Never.self) {
            try ImageDecoders.all.decodeFrames(data, options: options, maximumFrames: 2) { _ in true }
        }
        let error = try #require(throws: ImageDecodingError.self) {
            try ImageDecoders.all.decodeFrames(data, options: options, maximumFrames: nil) { _ in true }
        }
        #expect(error.code == .tooManyPixels)
        // The body stops the walk.
        count = 0
        try ImageDecoders.all.decodeFrames(data, options: ImageDecodingOptions(), maximumFrames: nil) { _ in
            count += 1
            return false
        }
        #expect(count == 1)
    }

    @Test func aStillImageIsOneFrame() throws {
        let data = try ImageEncoders.png().encode(Image(width: 3, height: 2, pixelFormat: .rgb8, pixels: [UInt8](repeating: 9, count: 18)))
        var frames: [Image] = []
        try ImageDecoders.all.decodeFrames(data, options: ImageDecodingOptions(), maximumFrames: 5) { frames.append($0); return true }
        #expect(frames.count == 1)
        #expect(frames[0].pixel(x: 2, y: 1) == [9, 9, 9])
    }

    @Test func anErrorOfTheBodyPassesThrough() throws {
        struct Stop: Error {}
        let data = try Fixtures.data("gif/pillow-animation.gif")
        #expect(throws: Stop.self) { try ImageDecoders.all.decodeFrames(data, options: ImageDecodingOptions(), maximumFrames: nil) { _ in throw Stop() } }
    }

    // MARK: Writers

    /// Three 24x16 frames: red, a half-transparent green, and a gradient.
    static func frames() -> [Image] {
        let red = Image(width: 24, height: 16, pixelFormat: .rgba8, pixels: Array(repeatElement([UInt8(250), 10, 10, 255], count: 24 * 16).joined()))
        let green = Image(width: 24, height: 16, pixelFormat: .rgba8, pixels: Array(repeatElement([UInt8(0), 200, 0, 255], count: 24 * 16).joined()))
        var gradient = [UInt8]()
        for y in 0..<16 { for x in 0..<24 { gradient += [UInt8(x * 10), UInt8(y * 15), 128, x < 4 ? 0 : 255] } }
        return [red, green, Image(width: 24, height: 16, pixelFormat: .rgba8, pixels: gradient)]
    }

    func written(_ encoder: any AnimationEncoding, loopCount: Int = 0) throws -> Image {
        let writer = try encoder.makeWriter(width: 24, height: 16, loopCount: loopCount)
        for (index, frame) in Self.frames().enumerated() { try writer.add(frame, duration: Double(index + 1) / 10) }
        let data = try writer.finish()
        #expect(ImageFormat(sniffing: data) == encoder.format)
        return try ImageDecoders.all.decode(data)
    }

    @Test(arguments: [0, 3])
    func webPKeepsFramesDurationsAndLoops(_ loopCount: Int) throws {
        let image = try written(WebPAnimationEncoder(lossless: true), loopCount: loopCount)
        #expect(image.frames.count == 3)
        #expect(image.frames.map(\.duration) == [0.1, 0.2, 0.3])
        #expect(image.loopCount == loopCount)
        // Lossless: every pixel, except the colour of transparent ones.
        for (index, frame) in Self.frames().enumerated() {
            assertImage(image.derived(frame: index), matches: frame, .exact, name: "frame \(index)")
        }
        #expect(image.derived(frame: 2).pixel(x: 1, y: 1)[3] == 0)
        let lossy = try written(WebPAnimationEncoder(quality: 80))
        #expect(lossy.frames.count == 3)
    }

    @Test func gifKeepsColoursOfFewColourFramesAndTransparency() throws {
        let image = try written(GIFAnimationEncoder())
        #expect(image.frames.count == 3)
        #expect(image.frames.map(\.duration) == [0.1, 0.2, 0.3])
        #expect(image.loopCount == 0)
        let frames = Self.frames()
        // A solid frame's colour is exact.
        assertImage(image.derived(frame: 0), matches: frames[0], .exact, name: "frame 0")
        assertImage(image.derived(frame: 1), matches: frames[1], .exact, name: "frame 1")
        // The gradient has 20x16 opaque colours, more than 255: each within a few levels.
        assertImage(image.derived(frame: 2), matches: frames[2], .within(levels: 12), name: "frame 2")
        #expect(image.derived(frame: 2).pixel(x: 1, y: 1)[3] == 0, "alpha below 128 is transparent")
        #expect(try written(GIFAnimationEncoder(), loopCount: 1).loopCount == 1, "play once: no loop extension")
    }

    @Test func apngKeepsEveryPixel() throws {
        let image = try written(APNGEncoder())
        #expect(image.frames.count == 3)
        #expect(image.loopCount == 0)
        #expect(image.frames.map(\.duration) == [0.1, 0.2, 0.3])
        for (index, frame) in Self.frames().enumerated() {
            #expect(image.frames[index].pixels == frame.frames[0].pixels, "frame \(index)")
        }
    }

    /// A decoded animation written whole: every frame, its duration and
    /// the loop count, through the encoder `ImageEncoders` picks for each
    /// format that animates; none for the formats written as stills.
    @Test func aDecodedAnimationIsWrittenWholeByTheFormatsThatAnimate() throws {
        let source = try written(APNGEncoder(), loopCount: 3)
        for format in [ImageFormat.png, .webp, .gif] {
            let encoder = try #require(ImageEncoders.animationEncoder(for: format, quality: 90))
            #expect(encoder.format == format)
            let data = try encoder.encode(source)
            #expect(ImageFormat(sniffing: data) == format)
            let image = try ImageDecoders.all.decode(data)
            #expect(image.frames.count == 3, "\(format)")
            #expect(image.frames.map(\.duration) == [0.1, 0.2, 0.3], "\(format)")
            #expect(image.loopCount == 3, "\(format)")
            #expect(image.derived(frame: 1).pixel(x: 5, y: 5)[1] > 150, "\(format): the second frame is the green one")
        }
        #expect(try ImageDecoders.all.decode(APNGEncoder().encode(source)).frames.map(\.pixels) == source.frames.map(\.pixels))
        for format in [ImageFormat.jpeg, .avif, .jxl, .heic] { #expect(ImageEncoders.animationEncoder(for: format) == nil) }
        // A still image is an animation of one frame.
        let still = try ImageDecoders.all.decode(APNGEncoder().encode(Self.frames()[0]))
        #expect(still.frames.count == 1 && still.frames[0].pixels == Self.frames()[0].pixels)
    }

    /// After the first frame, APNG writes only the rectangle that changed:
    /// a small moving square over a still background costs a fraction of
    /// whole frames, and every frame decodes exactly, including a frame
    /// equal to the one before and changes at the canvas's edges.
    @Test func apngWritesOnlyWhatChanged() throws {
        var background = [UInt8]()
        for y in 0..<64 { for x in 0..<96 { background += [UInt8(x * 2), UInt8(y * 3), UInt8((x * y) & 0xFF), 255] } }
        func frame(square: (x: Int, y: Int)?) -> Image {
            var pixels = background
            if let square {
                for y in square.y..<(square.y + 5) { for x in square.x..<(square.x + 5) {
                    pixels.replaceSubrange(((y * 96 + x) * 4)..<((y * 96 + x) * 4 + 4), with: [255, 0, 0, 128])
                } }
            }
            return Image(width: 96, height: 64, pixelFormat: .rgba8, pixels: pixels)
        }
        let frames = [frame(square: nil), frame(square: (0, 0)), frame(square: (0, 0)), frame(square: (40, 20)),
                      frame(square: (91, 59)), frame(square: nil)]
        let writer = try APNGEncoder().makeWriter(width: 96, height: 64, loopCount: 0)
        for still in frames { try writer.add(still, duration: 0.05) }
        let data = try writer.finish()
        let decoded = try ImageDecoders.all.decode(data)
        #expect(decoded.frames.count == frames.count)
        for (index, still) in frames.enumerated() {
            #expect(decoded.frames[index].pixels == still.pixels, "frame \(index)")
        }
        let whole = try ImageEncoders.png().encode(frames[0]).count
        #expect(data.count < whole * 2, "\(data.count) bytes for 6 frames, \(whole) for one whole frame")
    }

    @Test func writersRefuseWrongSizesAndEmptyAnimations() throws {
        for encoder in [WebPAnimationEncoder() as any AnimationEncoding, GIFAnimationEncoder(), APNGEncoder()] {
            #expect(throws: ImageEncodingError.self) { try encoder.makeWriter(width: 0, height: 10, loopCount: 0) }
            let writer = try encoder.makeWriter(width: 24, height: 16, loopCount: 0)
            #expect(throws: ImageEncodingError.self) { try writer.finish() }
            #expect(throws: ImageEncodingError.self) { try writer.add(Image(width: 2, height: 2, pixelFormat: .rgb8, pixels: [UInt8](repeating: 0, count: 12)), duration: 0.1) }
        }
    }
}

extension Image {
    /// Frame `index` alone.
    func derived(frame index: Int) -> Image {
        Image(width: width, height: height, pixelFormat: pixelFormat, bytesPerRow: bytesPerRow, pixels: frames[index].pixels)
    }
}
