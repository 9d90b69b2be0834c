import Foundation
import Imago
import ImagoCodecs
import ImagoTesting
import Testing

/// `EncoderSettings` and the encoder knobs it gathers (imgproxy's
/// compression settings): each knob changes the file as it says, the
/// files decode, the defaults write what the encoders wrote before the
/// knobs existed, and no number is fatal.
@Suite struct EncoderSettingsTests {
    let photo = SettingsFixtures.photo()
    let translucent = SettingsFixtures.photo(alpha: true)

    // MARK: Defaults

    /// The digests (FNV-1a) and sizes of what each encoder wrote, at its
    /// defaults, before the settings existed (recorded at 660d2ec): the
    /// new code paths (libwebp's advanced API instead of its one-call
    /// functions, the generalised median cut, PNG's rows through
    /// `filteredRows`) change no byte.
    static let recorded: [String: (digest: UInt64, count: Int)] = [
        "png photo": (0xd67b_aa32_ed3d_efd1, 10506),
        "png translucent": (0x0578_3635_0586_4679, 10705),
        "png few": (0x1105_ce93_08d4_2529, 460),
        "png gray": (0x811b_be00_02e7_680b, 3594),
        "webp photo": (0x69aa_b9a4_5b2c_8d3f, 852),
        "webp translucent": (0x0957_23ea_990f_dd84, 778),
        "webp lossless": (0x8e53_c04e_90bf_d964, 5048),
        "webp gray": (0x18bd_69a0_f687_3ad2, 336),
        "gif photo": (0x10a7_57b8_c99a_abde, 5777),
        "gif translucent": (0xad9f_d676_299e_28e6, 4605),
        "webp animation": (0xeb9c_f9c5_19e7_f593, 1816),
        "gif animation": (0x82fe_94b5_2857_c261, 11600),
        "jpeg photo": (0x3d8c_408c_6661_1150, 1727),
        "avif photo": (0x16c2_3574_1bd9_c97a, 471),
        "jxl photo": (0xad68_d1f6_42f8_87df, 581),
    ]

    @Test func defaultsWriteTheBytesOfBeforeTheSettings() throws {
        let few = TestImages.gradient(width: 12, height: 10)
        let gray = photo.converted(to: .gray8)
        let animation = SettingsFixtures.animation()
        let defaults = EncoderSettings()
        let still = { (format: ImageFormat, quality: Int?) in ImageEncoders.encoder(for: format, quality: quality, settings: defaults)! }
        // Each case twice: the encoder made without settings, and through the settings at their defaults.
        let cases: [(String, Data, Data)] = [
            ("png photo", try ImageEncoders.png().encode(photo), try still(.png, nil).encode(photo)),
            ("png translucent", try ImageEncoders.png().encode(translucent), try still(.png, nil).encode(translucent)),
            ("png few", try ImageEncoders.png().encode(few), try still(.png, nil).encode(few)),
            ("png gray", try ImageEncoders.png().encode(gray), try still(.png, nil).encode(gray)),
            ("webp photo", try ImageEncoders.webp().encode(photo), try still(.webp, nil).encode(photo)),
            ("webp translucent", try ImageEncoders.webp().encode(translucent), try still(.webp, nil).encode(translucent)),
            ("webp lossless", try ImageEncoders.webp(lossless: true).encode(translucent),
             try ImageEncoders.webp(lossless: true, preset: defaults.webpPreset, effort: defaults.webpEffort).encode(translucent)),
            ("webp gray", try ImageEncoders.webp(quality: 60).encode(gray), try still(.webp, 60).encode(gray)),
            ("gif photo", try GIFEncoder().encode(photo), try still(.gif, nil).encode(photo)),
            ("gif translucent", try GIFEncoder().encode(translucent), try still(.gif, nil).encode(translucent)),
            ("webp animation", try WebPAnimationEncoder().encode(animation),
             try ImageEncoders.animationEncoder(for: .webp, settings: defaults)!.encode(animation)),
            ("gif animation", try GIFAnimationEncoder().encode(animation),
             try ImageEncoders.animationEncoder(for: .gif, settings: defaults)!.encode(animation)),
            ("jpeg photo", try ImageEncoders.jpeg().encode(photo), try still(.jpeg, nil).encode(photo)),
            ("avif photo", try ImageEncoders.avif().encode(photo), try still(.avif, nil).encode(photo)),
            ("jxl photo", try ImageEncoders.jxl().encode(photo), try still(.jxl, nil).encode(photo)),
        ]
        for (name, plain, viaSettings) in cases {
            let recorded = try #require(Self.recorded[name])
            #expect(plain == viaSettings, "\(name)")
            #expect(SettingsFixtures.digest(plain) == recorded.digest && plain.count == recorded.count,
                    "\(name): 0x\(String(SettingsFixtures.digest(plain), radix: 16)), \(plain.count) bytes")
        }
        // `encode(_:as:settings:)` at the defaults is `encode(_:as:)`.
        for format in [ImageFormat.png, .jpeg, .webp, .avif] {
            let decision = OutputDecision(format: format)
            #expect(try ImageEncoders.encode(photo, as: decision, settings: defaults) == ImageEncoders.encode(photo, as: decision))
        }
    }

    @Test func defaultSettingsAreTheEncodersDefaults() {
        let settings = EncoderSettings()
        #expect(settings.jpegProgressive == JPEGEncoder().progressive)
        #expect(settings.pngInterlaced == PNGEncoder().interlaced)
        #expect(settings.pngPaletteColors == nil && PNGEncoder().paletteColors == nil)
        #expect(settings.webpPreset == WebPEncoder().preset && settings.webpPreset == .default)
        #expect(settings.webpEffort == WebPEncoder().effort && settings.webpEffort == 4)
        #expect(settings.avifSpeed == AVIFEncoder().speed && settings.avifSpeed == 6)
        #expect(settings.jxlEffort == JXLEncoder().effort && settings.jxlEffort == 4)
    }

    /// Every knob reaches the encoder `encoder(for:quality:settings:)` makes.
    @Test func theSettingsReachTheEncoders() throws {
        let settings = EncoderSettings(jpegProgressive: true, pngInterlaced: true, pngPaletteColors: 64, webpPreset: .drawing,
                                       webpEffort: 6, avifSpeed: 8, jxlEffort: 7)
        let jpeg = try #require(ImageEncoders.encoder(for: .jpeg, quality: 70, settings: settings) as? JPEGEncoder)
        #expect(jpeg.progressive && jpeg.quality == 70)
        let png = try #require(ImageEncoders.encoder(for: .png, settings: settings) as? PNGEncoder)
        #expect(png.interlaced && png.paletteColors == 64)
        let webp = try #require(ImageEncoders.encoder(for: .webp, quality: 70, settings: settings) as? WebPEncoder)
        #expect(webp.preset == .drawing && webp.effort == 6 && webp.quality == 70)
        let avif = try #require(ImageEncoders.encoder(for: .avif, settings: settings) as? AVIFEncoder)
        #expect(avif.speed == 8)
        let jxl = try #require(ImageEncoders.encoder(for: .jxl, settings: settings) as? JXLEncoder)
        #expect(jxl.effort == 7)
        let animated = try #require(ImageEncoders.animationEncoder(for: .webp, settings: settings) as? WebPAnimationEncoder)
        #expect(animated.preset == .drawing && animated.effort == 6)
        // `encode(_:as:settings:)` writes with them too.
        let data = try ImageEncoders.encode(photo, as: OutputDecision(format: .jpeg), settings: settings)
        #expect(SettingsFixtures.startOfFrameMarkers(data) == [0xC2])
    }

    // MARK: JPEG

    @Test func aProgressiveJPEGHasSOF2AndABaselineOneSOF0() throws {
        for image in [photo, photo.converted(to: .gray8)] {
            let progressive = try ImageEncoders.encoder(for: .jpeg, settings: EncoderSettings(jpegProgressive: true))!.encode(image)
            let baseline = try ImageEncoders.encoder(for: .jpeg, settings: EncoderSettings(jpegProgressive: false))!.encode(image)
            #expect(SettingsFixtures.startOfFrameMarkers(progressive) == [0xC2])
            #expect(SettingsFixtures.startOfFrameMarkers(baseline) == [0xC0])
            // The same coefficients, in other scans: the same pixels decoded.
            #expect(try ImageDecoders.jpeg().decode(progressive) == ImageDecoders.jpeg().decode(baseline))
        }
    }

    // MARK: PNG interlacing

    /// Sizes where some of Adam7's passes are empty (1x1, 3x2) and where
    /// none is, in every pixel format, truecolour and indexed.
    @Test(arguments: [(1, 1), (3, 2), (5, 9), (37, 23), (96, 64)])
    func anInterlacedPNGDecodesToTheSamePixels(width: Int, height: Int) throws {
        let image = SettingsFixtures.photo(width: width, height: height, alpha: true)
        for format in PixelFormat.allCases {
            let converted = image.converted(to: format)
            let flat = try ImageEncoders.png().encode(converted)
            let interlaced = try ImageEncoders.png(interlaced: true).encode(converted)
            #expect(SettingsFixtures.header(flat).interlace == 0)
            #expect(SettingsFixtures.header(interlaced).interlace == 1)
            #expect(try ImageDecoders.png().decode(interlaced) == ImageDecoders.png().decode(flat), "\(width)x\(height) \(format)")
        }
        // Indexed (a few colours), and packed below a byte a pixel, interlaced too.
        let few = TestImages.gradient(width: width, height: height)
        for colors in [nil, 2, 16, 256] as [Int?] {
            let flat = try ImageEncoders.png(paletteColors: colors).encode(few)
            let interlaced = try ImageEncoders.png(interlaced: true, paletteColors: colors).encode(few)
            #expect(SettingsFixtures.header(interlaced).interlace == 1)
            #expect(SettingsFixtures.header(interlaced).colorType == SettingsFixtures.header(flat).colorType)
            #expect(try ImageDecoders.png().decode(interlaced) == ImageDecoders.png().decode(flat), "\(width)x\(height) \(String(describing: colors))")
        }
    }

    // MARK: PNG quantization

    static let paletteSizes: [(colors: Int, bitDepth: UInt8, maximumError: Double)] = [
        (2, 1, 45), (4, 2, 25), (16, 4, 13), (256, 8, 4.5),
    ]

    @Test(arguments: paletteSizes)
    func aQuantizedPNGIsIndexedAtItsBitDepthAndClose(_ size: (colors: Int, bitDepth: UInt8, maximumError: Double)) throws {
        // The bounds are means over the four samples of RGBA. ImageComparison
        // leaves alpha out when both images are opaque: the photo's mean is
        // over its three colour channels, and the same bound is 4/3 as large.
        for (source, channels) in [(photo, 3.0), (translucent, 4.0)] {
            let data = try ImageEncoders.encoder(for: .png, settings: EncoderSettings(pngPaletteColors: size.colors))!.encode(source)
            let header = SettingsFixtures.header(data)
            #expect(header.colorType == 3)
            #expect(header.bitDepth == size.bitDepth)
            let palette = try #require(SettingsFixtures.chunk("PLTE", in: data))
            #expect(palette.count % 3 == 0 && palette.count / 3 <= size.colors && palette.count / 3 >= 2)
            let transparency = SettingsFixtures.chunk("tRNS", in: data)
            #expect((transparency != nil) == source.pixelFormat.hasAlpha, "an RGBA image keeps alpha")
            #expect((transparency?.count ?? 0) <= palette.count / 3)
            let decoded = try ImageDecoders.png().decode(data)
            #expect(decoded.pixelFormat == .rgba8 && decoded.width == source.width && decoded.height == source.height)
            let error = ImageComparison(decoded, source).meanAbsoluteDifference
            #expect(error <= size.maximumError * 4 / channels, "\(size.colors) colours: mean difference \(error)")
            #expect(data != (try ImageEncoders.png().encode(source)), "more colours than the palette: quantized")
        }
    }

    @Test func moreColoursAreCloser() throws {
        let errors = try [2, 4, 16, 64, 256].map { colors in
            let data = try ImageEncoders.png(paletteColors: colors).encode(translucent)
            return ImageComparison(try ImageDecoders.png().decode(data), translucent).meanAbsoluteDifference
        }
        #expect(zip(errors, errors.dropFirst()).allSatisfy { $0 > $1 }, "\(errors)")
    }

    /// With room in the palette, transparent pixels stay transparent and
    /// opaque ones opaque, and translucent ones keep about their alpha.
    @Test(arguments: [16, 64, 256])
    func aQuantizedPNGKeepsAlpha(colors: Int) throws {
        let decoded = try ImageDecoders.png().decode(try ImageEncoders.png(paletteColors: colors).encode(translucent))
        // The alpha channel alone, pixel by pixel: ImageComparison folds alpha
        // into premultiplied colour, and this is about which alphas survive.
        var worst = 0
        for index in stride(from: 3, to: translucent.pixels.count, by: 4) {
            let (before, after) = (translucent.pixels[index], decoded.pixels[index])
            if before == 0 || before == 255 { #expect(after == before, "pixel \(index / 4): alpha \(before) became \(after)") }
            worst = max(worst, abs(Int(before) - Int(after)))
        }
        #expect(worst <= 48, "alpha off by \(worst)")
    }

    /// An image of no more colours than the palette keeps every pixel, at
    /// the palette size's bit depth; gray images are quantized too.
    @Test func fewColoursAreKeptExactlyAndGrayIsIndexed() throws {
        let three = Image(width: 7, height: 3, pixelFormat: .rgba8,
                          pixels: (0..<21).flatMap { [[255, 0, 0, 255], [0, 0, 255, 128], [0, 0, 0, 0]][$0 % 3] as [UInt8] })
        let data = try ImageEncoders.png(paletteColors: 4).encode(three)
        #expect(SettingsFixtures.header(data).colorType == 3 && SettingsFixtures.header(data).bitDepth == 2)
        #expect(try ImageDecoders.png().decode(data) == three)

        let gray = photo.converted(to: .gray8)
        let quantized = try ImageEncoders.png(paletteColors: 16).encode(gray)
        #expect(SettingsFixtures.header(quantized).colorType == 3 && SettingsFixtures.header(quantized).bitDepth == 4)
        #expect(SettingsFixtures.chunk("tRNS", in: quantized) == nil)
        let decoded = try ImageDecoders.png().decode(quantized)
        #expect(ImageComparison(decoded, gray).meanAbsoluteDifference <= 10)
    }

    // MARK: WebP

    @Test func everyWebPPresetAndEffortWritesAValidFile() throws {
        var files: [String: Data] = [:]
        for preset in WebPEncoder.Preset.allCases {
            for effort in [0, 1, 4, 6] {
                let settings = EncoderSettings(webpPreset: preset, webpEffort: effort)
                let data = try ImageEncoders.encoder(for: .webp, quality: 75, settings: settings)!.encode(photo)
                #expect(ImageFormat(sniffing: data) == .webp)
                let decoded = try ImageDecoders.webp().decode(data)
                #expect(decoded.width == photo.width && decoded.height == photo.height)
                let error = ImageComparison(decoded, photo).meanAbsoluteDifference
                #expect(error <= 12, "\(preset) at \(effort): mean difference \(error)")
                files["\(preset) \(effort)"] = data
            }
        }
        #expect(files["text 4"] != files["default 4"], "a preset changes the file")
        #expect(files["photo 4"] != files["drawing 4"], "a preset changes the file")
        #expect(files["default 0"] != files["default 6"], "the effort changes the file")
        #expect(Set(files.values).count > 4)
        // Lossless at every effort keeps every pixel; the preset does not matter there.
        let opaque = photo.converted(to: .rgb8)
        for effort in [0, 6] {
            let data = try ImageEncoders.webp(lossless: true, effort: effort).encode(opaque)
            #expect(try ImageDecoders.webp().decode(data).converted(to: .rgb8) == opaque)
            #expect(try ImageEncoders.webp(lossless: true, preset: .text, effort: effort).encode(opaque) == data)
        }
    }

    @Test func theWebPAnimationEncoderTakesThePresetAndTheEffort() throws {
        let animation = SettingsFixtures.animation()
        let plain = try ImageEncoders.animationEncoder(for: .webp, quality: 75)!.encode(animation)
        let tuned = try ImageEncoders.animationEncoder(for: .webp, quality: 75,
                                                       settings: EncoderSettings(webpPreset: .text, webpEffort: 0))!.encode(animation)
        #expect(plain != tuned)
        for data in [plain, tuned] {
            let decoded = try ImageDecoders.webp().decode(data)
            #expect(decoded.frames.count == 2 && decoded.width == animation.width)
        }
        // APNG and GIF have no settings: the same bytes whatever they say.
        let every = EncoderSettings(pngInterlaced: true, pngPaletteColors: 4, webpPreset: .icon, webpEffort: 1)
        for format in [ImageFormat.png, .gif] {
            #expect(try ImageEncoders.animationEncoder(for: format, settings: every)!.encode(animation)
                == ImageEncoders.animationEncoder(for: format)!.encode(animation))
        }
    }

    // MARK: Out of range

    @Test func numbersOutOfRangeAreClamped() {
        let low = EncoderSettings(pngPaletteColors: Int.min, webpEffort: -1, avifSpeed: -5, jxlEffort: 0)
        #expect(low.pngPaletteColors == 2 && low.webpEffort == 0 && low.avifSpeed == 0 && low.jxlEffort == 1)
        let high = EncoderSettings(pngPaletteColors: 1000, webpEffort: 7, avifSpeed: Int.max, jxlEffort: 10)
        #expect(high.pngPaletteColors == 256 && high.webpEffort == 6 && high.avifSpeed == 9 && high.jxlEffort == 9)
        var set = EncoderSettings()
        set.pngPaletteColors = 1
        set.webpEffort = 100
        set.avifSpeed = -1
        set.jxlEffort = 42
        #expect(set == EncoderSettings(pngPaletteColors: 2, webpEffort: 6, avifSpeed: 0, jxlEffort: 9))
        set.pngPaletteColors = nil
        #expect(set.pngPaletteColors == nil)
    }

    /// Encoders made with numbers outside their ranges write valid files,
    /// as with the nearest number in range.
    @Test func encodersTakeNumbersOutOfRange() throws {
        let small = SettingsFixtures.photo(width: 24, height: 16)
        for colors in [Int.min, -1, 0, 1] {
            let data = try PNGEncoder(paletteColors: colors).encode(small)
            #expect(data == (try PNGEncoder(paletteColors: 2).encode(small)))
            #expect(SettingsFixtures.header(data).bitDepth == 1)
        }
        #expect(try PNGEncoder(paletteColors: Int.max).encode(small) == PNGEncoder(paletteColors: 256).encode(small))
        for (effort, inRange) in [(Int.min, 0), (-1, 0), (7, 6), (Int.max, 6)] {
            #expect(try WebPEncoder(effort: effort).encode(small) == WebPEncoder(effort: inRange).encode(small))
            #expect(try WebPAnimationEncoder(effort: effort).encode(small) == WebPAnimationEncoder(effort: inRange).encode(small))
        }
        for (speed, inRange) in [(-3, 0), (42, 9)] {
            let data = try AVIFEncoder(speed: speed).encode(small)
            #expect(data == (try AVIFEncoder(speed: inRange).encode(small)))
            #expect(try ImageDecoders.avif().decode(data).width == small.width)
        }
        for (effort, inRange) in [(-7, 1), (0, 1), (77, 9)] {
            let data = try JXLEncoder(effort: effort).encode(small)
            #expect(data == (try JXLEncoder(effort: inRange).encode(small)))
            #expect(try ImageDecoders.jxl().decode(data).width == small.width)
        }
    }
}

/// Images and file readers for ``EncoderSettingsTests``.
enum SettingsFixtures {
    /// Smooth gradients with seeded noise: thousands of colours. With
    /// `alpha`, a transparent left quarter, a band of graded alpha along
    /// the top, the rest opaque.
    static func photo(width: Int = 96, height: Int = 64, alpha: Bool = false, seed: UInt64 = 7) -> Image {
        var generator = SeededGenerator(seed: seed)
        var pixels: [UInt8] = []
        pixels.reserveCapacity(width * height * 4)
        for y in 0..<height {
            for x in 0..<width {
                let noise = Int(generator.next() % 24)
                let red = min(255, x * 230 / max(1, width - 1) + noise)
                let green = min(255, y * 230 / max(1, height - 1) + noise / 2)
                let blue = (x + y) * 255 / max(1, width + height - 2)
                let opacity = !alpha ? 255 : x < width / 4 ? 0 : y < height / 3 ? x * 255 / max(1, width - 1) : 255
                pixels += [UInt8(red), UInt8(green), UInt8(blue), UInt8(opacity)]
            }
        }
        return Image(width: width, height: height, pixelFormat: .rgba8, pixels: pixels)
    }

    /// Two frames of ``photo(width:height:alpha:seed:)``, looping.
    static func animation() -> Image {
        Image(width: 96, height: 64, frames: [photo().frames[0], photo(seed: 8).frames[0]], loopCount: 0)
    }

    /// FNV-1a over the bytes.
    static func digest(_ data: Data) -> UInt64 {
        data.reduce(0xcbf2_9ce4_8422_2325 as UInt64) { ($0 ^ UInt64($1)) &* 0x100_0000_01b3 }
    }

    /// The JPEG's start-of-frame markers (`0xC0` to `0xCF` but `DHT`,
    /// `JPG` and `DAC`), read segment by segment up to the first scan.
    static func startOfFrameMarkers(_ data: Data) -> [UInt8] {
        let bytes = [UInt8](data)
        var markers: [UInt8] = []
        var offset = 2
        while offset + 4 <= bytes.count, bytes[offset] == 0xFF {
            let marker = bytes[offset + 1]
            if marker == 0xDA { break }
            if (0xC0...0xCF).contains(marker), ![0xC4, 0xC8, 0xCC].contains(marker) { markers.append(marker) }
            offset += 2 + Int(bytes[offset + 2]) << 8 + Int(bytes[offset + 3])
        }
        return markers
    }

    /// A PNG's `IHDR` fields that the settings change.
    static func header(_ png: Data) -> (bitDepth: UInt8, colorType: UInt8, interlace: UInt8) {
        let start = png.startIndex
        return (png[start + 24], png[start + 25], png[start + 28])
    }

    /// The body of a PNG's first chunk of `type`, or `nil`.
    static func chunk(_ type: String, in png: Data) -> [UInt8]? {
        let bytes = [UInt8](png)
        var offset = 8
        while offset + 12 <= bytes.count {
            let length = bytes[offset..<offset + 4].reduce(0) { $0 << 8 | Int($1) }
            if String(decoding: bytes[offset + 4..<offset + 8], as: UTF8.self) == type {
                return Array(bytes[offset + 8..<offset + 8 + length])
            }
            offset += 12 + length
        }
        return nil
    }
}
