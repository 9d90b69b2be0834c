import Foundation
import Imago
import ImagoCodecs
import ImagoTesting
import ImagoTestingSupport
import Testing

/// A fixture decoded as stored (no colour conversion), for reference images.
func referenceImage(_ path: String) throws -> Image {
    try ImageDecoders.all.decode(try Fixtures.data(path), options: ImageDecodingOptions(colorManagement: .keepOriginal))
}

/// `image` with its colour profile taken off: its stored values, read as
/// sRGB, for comparing them with a reference decoder's output (whose PNG
/// carries no profile) or with the sRGB original they should not match.
func storedValues(_ image: Image) -> Image {
    var stored = image
    stored.colorProfile = nil
    return stored
}

/// The colour of a pixel as a name, for the orientation cards (blue, with a
/// red block top left and a green one top right, as stored).
func colourName(_ image: Image, x: Int, y: Int) -> String {
    let p = pixel(of: image, x: x, y: y)
    if p[0] > 150 && p[1] < 100 && p[2] < 100 { return "red" }
    if p[1] > 150 && p[0] < 100 && p[2] < 100 { return "green" }
    if p[2] > 150 && p[0] < 100 && p[1] < 100 { return "blue" }
    return "\(p)"
}

/// The four corners of an image, by colour name: top left, top right, bottom left, bottom right.
func corners(_ image: Image) -> [String] {
    [colourName(image, x: 1, y: 1), colourName(image, x: image.width - 2, y: 1),
     colourName(image, x: 1, y: image.height - 2), colourName(image, x: image.width - 2, y: image.height - 2)]
}

/// AVIF through libavif and HEIC through libheif, on files made by
/// Pillow, pyvips and pillow-heif (`scripts/fixtures/make-format-fixtures.py`).
/// The reference decodes are libheif's; libavif upsamples 4:2:0 chroma
/// bilinearly (as Pillow, through the same libavif), libheif by repeating.
@Suite struct HEIFDecoderTests {
    @Test(arguments: [
        // file, reference, tolerance, alpha
        ("avif/rgba8.avif", "avif/rgba8.reference.png", 1, true),
        ("avif/lossless.avif", "avif/source-rgb.png", 0, false),
        ("avif/rgb10-lossy.avif", "avif/rgb10-lossy.reference.png", 1, false),
        ("avif/rgb10-lossless.avif", "avif/source-rgb16.png", 1, false),
        ("heic/rgb8.heic", "heic/rgb8.reference.png", 1, false),
        ("heic/rgba8.heic", "heic/rgba8.reference.png", 1, true),
        ("heic/rgb10.heic", "heic/rgb10.reference.png", 1, false),
        ("heic/grid.heic", "heic/grid.reference.png", 1, false),
    ])
    func decodesLikeTheReferenceDecoder(file: String, reference: String, tolerance: Int, alpha: Bool) throws {
        let data = try Fixtures.data(file)
        let format = try #require(ImageFormat(sniffing: data))
        #expect(format.rawValue == file.split(separator: ".").last.map(String.init))
        let image = try ImageDecoders.all.decode(data)
        #expect(image.pixelFormat == (alpha ? .rgba8 : .rgb8))
        #expect(!image.isPartial && image.frames.count == 1)
        // 10-bit references hold each level L as L << 6 in 16 bits; Imago keeps the top 8 bits.
        assertImage(image, matches: try referenceImage(reference), .within(levels: tolerance), name: file)
        let info = try ImageDecoders.info(for: data)
        #expect(info.width == image.width && info.height == image.height && info.frameCount == 1)
    }

    /// A HEIC and an AVIF with a 320x240 thumbnail item (heif-enc -t 320,
    /// `scripts/fixtures/make-thumbnail-item-fixtures.py`): a thumbnail it
    /// covers decodes that item only; a larger one, or a full decode,
    /// decodes the 640x480 primary image; the results look alike.
    @Test(arguments: ["heic/thumbnail-item.heic", "avif/thumbnail-item.avif"])
    func aThumbnailItemThatCoversTheThumbnailIsDecodedInstead(file: String) throws {
        let data = try Fixtures.data(file)
        func decoded(_ thumbnail: Thumbnail?) throws -> Image {
            let options = ImageDecodingOptions(thumbnail: thumbnail)
            return file.hasSuffix(".avif") ? try Self.decoded(data, with: .avif, options) : try Self.decoded(data, with: .heif, options)
        }
        let full = try decoded(nil)
        #expect((full.width, full.height) == (640, 480))
        let item = try decoded(Thumbnail(width: 256, height: 256))
        #expect((item.width, item.height) == (320, 240), "the item, not the primary image")
        #expect((try decoded(Thumbnail(width: 320, height: 240, mode: .fill))).width == 320)
        #expect((try decoded(Thumbnail(width: 400, height: 400))).width == 640, "the item is too small")
        #expect((try decoded(Thumbnail(width: 300, height: 300, mode: .fill))).width == 640, "a 300x300 crop needs 400x300")
        // Through the decoder: the requested size, close to the primary image's own thumbnail.
        let thumbnail = try ImageDecoders.all.decode(data, options: ImageDecodingOptions(thumbnail: Thumbnail(width: 256, height: 256)))
        #expect((thumbnail.width, thumbnail.height) == (256, 192))
        let fromPrimary = full.resized(to: ResizeGeometry(sourceWidth: 640, sourceHeight: 480, boxWidth: 256, boxHeight: 256, mode: .fit))
        let error = ImageComparison(thumbnail, fromPrimary).meanAbsoluteDifference
        #expect(error < 4, "\(error)")
    }

    /// `usesEmbeddedThumbnail` (imgproxy's `enforce_thumbnail`) decodes the
    /// item whatever size is asked for, or when none is; a file without an
    /// item decodes its primary image.
    @Test(arguments: ["heic/thumbnail-item.heic", "avif/thumbnail-item.avif"])
    func anEnforcedThumbnailDecodesTheItem(file: String) throws {
        var options = ImageDecodingOptions()
        options.usesEmbeddedThumbnail = true
        let data = try Fixtures.data(file)
        let item = try ImageDecoders.all.decode(data, options: options)
        #expect((item.width, item.height) == (320, 240))
        let plain = try ImageDecoders.all.decode(try Fixtures.data("avif/rgb8-lossy.avif"), options: ImageDecodingOptions(usesEmbeddedThumbnail: true))
        #expect((plain.width, plain.height) == (96, 64))
    }

    /// What a codec table's `open` and `makeImage` give for `data`.
    static func decoded<State>(_ data: Data, with functions: CodecFunctions<State>, _ options: ImageDecodingOptions) throws -> Image {
        try functions.makeImage(try functions.open(data, options), 0, options)
    }

    /// A half-transparent AVIF whose 32x24 thumbnail item has no alpha
    /// (heif-enc --no-thumb-alpha): its thumbnail comes from the 64x48
    /// primary image, so it stays transparent.
    @Test func aThumbnailItemWithoutTheImagesAlphaIsNotUsed() throws {
        let data = try Fixtures.data("avif/thumbnail-item-without-alpha.avif")
        let image = try Self.decoded(data, with: .avif, ImageDecodingOptions(thumbnail: Thumbnail(width: 16, height: 16)))
        #expect((image.width, image.height, image.pixelFormat) == (64, 48, .rgba8))
        #expect(abs(Int(pixel(of: image, x: 32, y: 4)[3]) - 100) <= 4 && pixel(of: image, x: 32, y: 44)[3] >= 251)
        let thumbnail = try ImageDecoders.all.decode(data, options: ImageDecodingOptions(thumbnail: Thumbnail(width: 16, height: 16)))
        #expect(thumbnail.width == 16 && pixel(of: thumbnail, x: 8, y: 2)[3] < 128)
    }

    /// An AVIF without a thumbnail item gives its thumbnail from the primary
    /// image; an image sequence's from its first frame (items are not looked for).
    @Test func anAVIFThumbnailWithoutAUsableItemComesFromThePrimaryImage() throws {
        let options = ImageDecodingOptions(thumbnail: Thumbnail(width: 32, height: 32))
        let animated = try Self.decoded(try Fixtures.data("avif/animated.avif"), with: .avif, options)
        #expect((animated.width, animated.height, animated.frames.count) == (64, 48, 1))
        let plain = try Self.decoded(try Fixtures.data("avif/rgb8-lossy.avif"), with: .avif, options)
        #expect((plain.width, plain.height) == (96, 64))
    }

    /// Each file with the mean difference from the sRGB card that Pillow
    /// (pillow-heif for HEIC) gets converting it with the same profile:
    /// 0.99 and 13.19 (HEIC's 4:2:0 smears the detail band). Imago may be
    /// 0.1 worse: libheif upsamples chroma unlike libavif.
    @Test(arguments: [("avif/display-p3.avif", 0.99), ("heic/display-p3.heic", 13.19)])
    func displayP3IsConvertedToSRGBOrKept(file: String, peerError: Double) throws {
        let data = try Fixtures.data(file)
        let profile = ColorProfile(data: try Fixtures.data("color/display-p3.icc"))
        #expect(try ImageDecoders.info(for: data).colorProfile == profile)
        let kept = try ImageDecoders.all.decode(data, options: ImageDecodingOptions(colorManagement: .keepOriginal))
        #expect(kept.colorProfile == profile)
        let reference = try referenceImage(file.replacingOccurrences(of: file.hasSuffix("avif") ? ".avif" : ".heic", with: ".reference.png"))
        // The stored pixels, as the reference decoder gives them (its PNG carries no profile).
        assertImage(storedValues(kept), matches: reference, .within(levels: 1), name: file)
        // Converted, it comes back close to the sRGB card it was made from; the stored pixels, read as sRGB, do not.
        let converted = try ImageDecoders.all.decode(data)
        #expect(converted.colorProfile == nil)
        let card = try referenceImage(file.hasSuffix("avif") ? "avif/source-rgb.png" : "heic/source-rgb.png")
        let error = ImageComparison(converted, card).meanAbsoluteDifference
        #expect(error <= peerError + 0.1, "\(error)")
        #expect(ImageComparison(storedValues(kept), card).meanAbsoluteDifference > 1.5 * error)
    }

    @Test(arguments: [
        ("avif/orientation6.avif", ["blue", "red", "blue", "green"]),
        ("avif/orientation7.avif", ["blue", "green", "blue", "red"]),
        ("heic/orientation6.heic", ["blue", "red", "blue", "green"]),
        // MIAF: only irot/imir turn a HEIF image, never its EXIF orientation.
        ("avif/exif-orientation6-no-irot.avif", ["red", "green", "blue", "blue"]),
    ])
    func irotAndImirTurnTheImageAndEXIFDoesNot(file: String, expected: [String]) throws {
        let data = try Fixtures.data(file)
        let image = try ImageDecoders.all.decode(data)
        let turned = !file.contains("no-irot")
        #expect((image.width, image.height) == (turned ? (16, 24) : (24, 16)))
        #expect(corners(image) == expected, "\(file)")
        let info = try ImageDecoders.info(for: data)
        #expect((info.width, info.height) == (image.width, image.height))
        // A thumbnail is turned the same way.
        let small = try ImageDecoders.all.decode(data, options: ImageDecodingOptions(maximumPixelSize: 12))
        #expect(max(small.width, small.height) == 12 && (small.height > small.width) == turned)
    }

    @Test func subsampledAVIFIsAsCloseToItsSourceAsPillowsDecode() throws {
        // Pillow decodes the same file through libavif: 18.59 levels from the card on average.
        let image = try ImageDecoders.avif().decode(try Fixtures.data("avif/rgb8-lossy.avif"))
        let mean = ImageComparison(image, try referenceImage("avif/source-rgb.png")).meanAbsoluteDifference
        #expect(mean <= 18.6, "\(mean)")
        #expect(image.pixelFormat == .rgb8 && (image.width, image.height) == (96, 64))
    }

    @Test func animatedAVIFGivesEveryFrameWithItsDuration() throws {
        let data = try Fixtures.data("avif/animated.avif")
        #expect(ImageFormat(sniffing: data) == .avif)
        #expect(try ImageDecoders.info(for: data).frameCount == 3)
        let image = try ImageDecoders.all.decode(data)
        #expect(image.frames.count == 3 && image.width == 64 && image.height == 48 && image.loopCount == 0)
        #expect(image.frames.map { Int(($0.duration ?? 0) * 1_000 + 0.5) } == [100, 200, 300])
        // Each frame: its own background, and the white square where the file put it.
        let backgrounds: [[UInt8]] = [[220, 30, 40], [30, 50, 210], [20, 190, 60]]
        let squares = [(8, 8), (24, 16), (40, 24)]
        for index in 0..<3 {
            let close = { (a: [UInt8], b: [UInt8]) in zip(a, b).allSatisfy { abs(Int($0) - Int($1)) <= 8 } }
            let corner = index == 2 ? (2, 2) : (60, 44)
            #expect(close(pixel(of: image, frame: index, x: corner.0, y: corner.1), backgrounds[index]), "frame \(index)")
            #expect(close(pixel(of: image, frame: index, x: squares[index].0 + 8, y: squares[index].1 + 8), [250, 250, 250]), "frame \(index)")
            let one = try ImageDecoders.avif().decode(data, options: ImageDecodingOptions(frameIndex: index))
            #expect(one.frames.count == 1 && one.frames[0].pixels == image.frames[index].pixels)
        }
    }

    @Test func truncatedAndDamagedFilesGiveTypedErrors() throws {
        let data = try Fixtures.data("heic/rgb8.heic")
        for length in [0, 12, 40, data.count / 2, data.count - 10] {
            do {
                _ = try ImageDecoders.heic().decode(data.prefix(length))
                Issue.record("a HEIC cut to \(length) bytes decoded")
            } catch let error as ImageDecodingError {
                #expect(error.format == .heic)
                #expect(error.underlying == nil || (error.underlying as? CodecError)?.library == "libheif")
            }
        }
    }

    @Test func aSideLongerThanThePixelLimitIsRefusedByLibheifWhileParsing() throws {
        let data = try Fixtures.data("heic/grid.heic")   // 160x96
        let error = try #require(throws: ImageDecodingError.self) {
            try ImageDecoders.heic().decode(data, options: ImageDecodingOptions(maximumPixelCount: 150))
        }
        #expect(error.code == .couldNotOpen)
        #expect((error.underlying as? CodecError)?.library == "libheif")
        let area = try #require(throws: ImageDecodingError.self) {
            try ImageDecoders.heic().decode(data, options: ImageDecodingOptions(maximumPixelCount: 10_000))
        }
        #expect(area.code == .tooManyPixels)
    }

    @Test(arguments: ["avif/rgb8-lossy.avif", "heic/rgba8.heic"])
    func passesTheDecoderVerifier(file: String) throws {
        let data = try Fixtures.data(file)
        let report = DecoderVerifier.verify(ImageDecoders.decoder(for: ImageFormat(sniffing: data)!), on: data)
        #expect(report.failures.isEmpty, "\(report.failures)")
    }
}

/// JPEG XL through libjxl, on files made by cjxl 0.7.
@Suite struct JXLDecoderTests {
    @Test(arguments: [
        ("jxl/rgb8-lossy.jxl", "jxl/rgb8-lossy.reference.png", 1, false),
        ("jxl/rgba8-lossless.jxl", "jxl/source-rgba.png", 0, true),
        ("jxl/rgb16-lossless.jxl", "jxl/source-rgb16.png", 1, false),
        ("jxl/display-p3-lossy.jxl", "jxl/display-p3-lossy.reference.png", 1, false),
    ])
    func decodesLikeTheReferenceDecoder(file: String, reference: String, tolerance: Int, alpha: Bool) throws {
        let data = try Fixtures.data(file)
        #expect(ImageFormat(sniffing: data) == .jxl)
        let image = try ImageDecoders.all.decode(data, options: ImageDecodingOptions(colorManagement: .keepOriginal))
        #expect(image.pixelFormat == (alpha ? .rgba8 : .rgb8))
        // The stored values: the references carry no profile.
        assertImage(storedValues(image), matches: try referenceImage(reference), .within(levels: tolerance), name: file)
    }

    @Test func displayP3ProfilesAreConvertedToSRGB() throws {
        let card = try referenceImage("jxl/source-rgb.png")
        for file in ["jxl/display-p3-lossy.jxl", "jxl/display-p3-icc-lossless.jxl"] {
            let data = try Fixtures.data(file)
            #expect(try ImageDecoders.info(for: data).colorProfile != nil, "\(file)")
            let converted = try ImageDecoders.jxl().decode(data)
            let kept = try ImageDecoders.jxl().decode(data, options: ImageDecodingOptions(colorManagement: .keepOriginal))
            #expect(converted.colorProfile == nil && kept.colorProfile != nil)
            // djxl's own output, converted with Pillow, is 7.6 levels from the card on average (lossy).
            let error = ImageComparison(converted, card).meanAbsoluteDifference
            #expect(error < 8, "\(file): \(error)")
            // The stored pixels, read as sRGB, are far from it.
            #expect(ImageComparison(storedValues(kept), card).meanAbsoluteDifference > 2 * error, "\(file)")
        }
        // An sRGB file carries no profile.
        #expect(try ImageDecoders.info(for: try Fixtures.data("jxl/rgb8-lossy.jxl")).colorProfile == nil)
    }

    @Test func floatImagesAreClippedToEightBits() throws {
        // R runs 0...2 across, G 0...1 down: values above 1 clip to 255.
        let image = try ImageDecoders.jxl().decode(try Fixtures.data("jxl/float32-lossless.jxl"))
        #expect(image.width == 32 && image.height == 24)
        #expect(pixel(of: image, x: 31, y: 12)[0] == 255)
        #expect(pixel(of: image, x: 0, y: 0)[0] <= 2 && pixel(of: image, x: 0, y: 23)[1] >= 250)
    }

    @Test func recompressedJPEGDecodesToTheJPEGsPixels() throws {
        let jxl = try ImageDecoders.jxl().decode(try Fixtures.data("jxl/from-jpeg.jxl"))
        let jpeg = try ImageDecoders.jpeg().decode(try Fixtures.data("jxl/from-jpeg.source.jpg"))
        // libjxl's reconstruction differs from libjpeg-turbo's as djxl's does from Pillow's: at most 13, 0.66 on average.
        let comparison = ImageComparison(jxl, jpeg)
        #expect(comparison.matches(.within(levels: 13)), "\(comparison)")
        #expect(comparison.meanAbsoluteDifference < 1, "\(comparison.meanAbsoluteDifference)")
    }

    @Test func animationGivesEveryFrameWithItsDuration() throws {
        let data = try Fixtures.data("jxl/animated.jxl")
        let info = try ImageDecoders.info(for: data)
        #expect(info.frameCount == 4)
        let image = try ImageDecoders.jxl().decode(data)
        #expect(image.frames.count == 4 && image.loopCount == 0 && image.pixelFormat == .rgba8)
        #expect(image.frames.map { Int(($0.duration ?? 0) * 1_000 + 0.5) } == [100, 50, 33, 250])
        for index in 0..<4 {
            let expected = try referenceImage("apng/offsets.frame\(index).png")
            assertImage(image.derived(frame: index), matches: expected, .exact, name: "frame \(index)")
            // A single frame is composited the same.
            let one = try ImageDecoders.jxl().decode(data, options: ImageDecodingOptions(frameIndex: index))
            #expect(one.frames.count == 1 && one.frames[0].pixels == image.frames[index].pixels)
        }
    }

    @Test func truncatedFilesGiveTypedErrors() throws {
        let data = try Fixtures.data("jxl/rgb8-lossy.jxl")
        for length in [0, 2, 20, data.count / 2, data.count - 1] {
            let error = try #require(throws: ImageDecodingError.self, "cut to \(length)") {
                try ImageDecoders.jxl().decode(data.prefix(length))
            }
            #expect(error.underlying == nil || (error.underlying as? CodecError)?.library == "libjxl")
        }
    }

    @Test(arguments: ["jxl/rgb8-lossy.jxl", "jxl/animated.jxl"])
    func passesTheDecoderVerifier(file: String) throws {
        let report = DecoderVerifier.verify(ImageDecoders.jxl(), on: try Fixtures.data(file))
        #expect(report.failures.isEmpty, "\(report.failures)")
    }
}

/// Animated PNG, on files made by Pillow's APNG writer, against
/// frames composited by an independent implementation of the APNG spec.
@Suite struct APNGTests {
    /// The facts `expected.json` records about `file`.
    static func expected(_ file: String) throws -> [String: Any] {
        let all = try JSONSerialization.jsonObject(with: try Fixtures.data("apng/expected.json")) as? [String: Any]
        return try #require(all?[file] as? [String: Any])
    }

    @Test(arguments: ["offsets.png", "dispose.png", "blend-over.png", "default-image.png"])
    func everyFrameIsCompositedAsTheSpecSays(file: String) throws {
        let facts = try Self.expected(file)
        let frameFiles = try #require(facts["expected_frames"] as? [String])
        let durations = try #require(facts["durations_ms"] as? [Double])
        let data = try Fixtures.data("apng/\(file)")
        #expect(try ImageDecoders.info(for: data).frameCount == frameFiles.count)
        let image = try ImageDecoders.png().decode(data)
        #expect(image.frames.count == frameFiles.count && image.pixelFormat == .rgba8)
        #expect(image.loopCount == (facts["num_plays"] as? Int ?? -1))
        #expect(zip(image.frames, durations).allSatisfy { abs(($0.duration ?? 0) * 1_000 - $1) < 0.01 })
        for (index, name) in frameFiles.enumerated() {
            let reference = try referenceImage("apng/\(name)")
            assertImage(image.derived(frame: index), matches: reference, .within(levels: file == "blend-over.png" ? 1 : 0),
                        name: "\(file) frame \(index)")
            let one = try ImageDecoders.png().decode(data, options: ImageDecodingOptions(frameIndex: index))
            #expect(one.frames.count == 1 && one.frames[0].pixels == image.frames[index].pixels)
        }
    }

    @Test func aSingleFrameThatIsTheDefaultImageIsAStillPNG() throws {
        let image = try ImageDecoders.png().decode(try Fixtures.data("apng/single-frame.png"))
        #expect(image.frames.count == 1 && !image.isAnimated)
        assertImage(image, matches: try referenceImage("apng/single-frame.frame0.png"), .exact)
    }

    @Test func brokenAnimationChunksShowTheStillImage() throws {
        let data = [UInt8](try Fixtures.data("apng/offsets.png"))
        let still = try referenceImage("apng/offsets.frame0.png")
        /// `data` with the body of the `occurrence`th chunk of `type` changed, and its checksum made right again.
        func changing(_ type: String, occurrence: Int = 0, _ change: (inout [UInt8], Int) -> Void) -> [UInt8] {
            var copy = data
            var offset = 8, seen = 0
            while offset + 12 <= copy.count {
                let length = Int(copy[offset]) << 24 | Int(copy[offset + 1]) << 16 | Int(copy[offset + 2]) << 8 | Int(copy[offset + 3])
                if String(decoding: copy[offset + 4..<offset + 8], as: UTF8.self) == type {
                    if seen == occurrence {
                        change(&copy, offset + 8)
                        let crc = crc32(Data(copy[offset + 4..<offset + 8 + length]))
                        for index in 0..<4 { copy[offset + 8 + length + index] = UInt8(truncatingIfNeeded: crc >> (24 - 8 * index)) }
                        return copy
                    }
                    seen += 1
                }
                offset += 12 + length
            }
            Issue.record("no \(type) #\(occurrence)")
            return copy
        }
        let damaged: [(String, [UInt8])] = [
            ("acTL declares one frame more", changing("acTL") { bytes, body in bytes[body + 3] += 1 }),
            ("an fcTL sequence number skips", changing("fcTL", occurrence: 1) { bytes, body in bytes[body + 3] += 5 }),
            ("an fdAT sequence number skips", changing("fdAT") { bytes, body in bytes[body + 3] += 5 }),
            ("a frame reaches past the canvas", changing("fcTL", occurrence: 2) { bytes, body in bytes[body + 15] = 60 }),
            ("a frame is 0 pixels wide", changing("fcTL", occurrence: 1) { bytes, body in bytes[body + 4...body + 7] = [0, 0, 0, 0] }),
            ("an unknown dispose op", changing("fcTL", occurrence: 1) { bytes, body in bytes[body + 24] = 7 }),
        ]
        for (name, bytes) in damaged {
            let image = try ImageDecoders.png().decode(Data(bytes))
            #expect(image.frames.count == 1, "\(name)")
            assertImage(image, matches: still, .exact, name: name)
        }
        // A damaged checksum in an animation chunk (they are ancillary) skips the chunk, as in any ancillary
        // chunk; the animation is then broken, and the still image shows.
        var corrupt = changing("fdAT") { _, _ in }
        corrupt[corrupt.count - 20] ^= 1
        let image = try ImageDecoders.png().decode(Data(corrupt))
        #expect(image.frames.count == 1)
        assertImage(image, matches: still, .exact)
    }

    @Test func thumbnailsScaleEveryFrame() throws {
        let image = try ImageDecoders.png().decode(try Fixtures.data("apng/dispose.png"), options: ImageDecodingOptions(maximumPixelSize: 16))
        #expect(image.frames.count == 4 && image.width == 16 && image.height == 12)
    }

    @Test(arguments: ["offsets.png", "default-image.png"])
    func passesTheDecoderVerifier(file: String) throws {
        let report = DecoderVerifier.verify(ImageDecoders.png(), on: try Fixtures.data("apng/\(file)"))
        #expect(report.failures.isEmpty, "\(report.failures)")
    }
}

/// Files that browsers and Pillow show (made from valid files by
/// `make-format-fixtures.py`), decoded as the README's rules say.
@Suite struct ToleranceTests {
    @Test func junkBeforeTheJPEGStartMarkerIsSkipped() throws {
        let data = try Fixtures.data("tolerance/junk-before-soi.jpg")
        #expect(ImageFormat(sniffing: data) == .jpeg)
        let image = try ImageDecoders.all.decode(data)
        let clean = try ImageDecoders.jpeg().decode(data.dropFirst(16))
        #expect(image == clean && image.width == 96 && !image.isPartial)
    }

    @Test(arguments: ["padding-in-markers.jpg", "png-trailing-garbage.png", "gif-trailing-garbage.gif"])
    func decodesAsPillowDoes(file: String) throws {
        let image = try ImageDecoders.all.decode(try Fixtures.data("tolerance/\(file)"))
        assertImage(image, matches: try referenceImage("tolerance/\(file).pillow.png"), .exact, name: file)
        #expect(!image.isPartial)
    }

    @Test(arguments: ["truncated-baseline.jpg", "truncated-progressive.jpg"])
    func truncatedJPEGsDecodeWhatIsThereAndSaySo(file: String) throws {
        let data = try Fixtures.data("tolerance/\(file)")
        let image = try ImageDecoders.all.decode(data)
        #expect(image.isPartial)
        // The same pixels as Pillow (LOAD_TRUNCATED_IMAGES) and pyvips: the missing part gray.
        assertImage(image, matches: try referenceImage("tolerance/\(file).pillow.png"), .within(levels: 1), name: file)
        // Thumbnails say so too, and a whole file does not.
        #expect(try ImageDecoders.all.decode(data, options: ImageDecodingOptions(maximumPixelSize: 20)).isPartial)
        #expect(!(try ImageDecoders.jpeg().decode(try Fixtures.data("jpeg/baseline.jpg"))).isPartial)
    }

    @Test func aBrokenEXIFSegmentKeepsWhatItCanRead() throws {
        // The IFD declares 40 entries and holds 2; the first, Orientation 6, is read (as Pillow reads it).
        let image = try ImageDecoders.jpeg().decode(try Fixtures.data("tolerance/truncated-app.jpg"))
        let stored = try referenceImage("tolerance/truncated-app.jpg.pillow.png")
        #expect(image.width == 64 && image.height == 96)
        assertImage(image, matches: stored.applying(.right), .within(levels: 1))
    }

    @Test func aGIFWithoutAnyPaletteDrawsGrayLevelsAsPillowDoes() throws {
        let image = try ImageDecoders.gif().decode(try Fixtures.data("tolerance/gif-no-palette.gif"))
        assertImage(image, matches: try referenceImage("tolerance/gif-no-palette.gif.pillow.png"), .exact)
    }

    @Test func aGIFFramePastTheScreenIsClippedAsPyvipsDoes() throws {
        // Pillow grows the canvas instead; pyvips and Imago keep the logical screen.
        let image = try ImageDecoders.gif().decode(try Fixtures.data("tolerance/gif-frame-outside-screen.gif"))
        #expect(image.width == 20 && image.height == 16 && image.frames.count == 2)
        assertImage(image.derived(frame: 0), matches: try referenceImage("tolerance/gif-frame-outside-screen.gif.pillow.png"), .exact)
        assertImage(image.derived(frame: 1), matches: try referenceImage("tolerance/gif-frame-outside-screen.gif.pyvips.frame1.png"),
                    .exact)
    }
}
