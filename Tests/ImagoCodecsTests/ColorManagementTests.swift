import CLcms2
import Foundation
import Imago
import ImagoCodecs
import ImagoTesting
import ImagoTestingSupport
import Testing

/// Embedded colour profiles: read from each format, converted to sRGB by
/// default (checked against lcms2's own transform of the same pixels and
/// against Pillow's ImageCms), kept on request, and written back by the
/// encoders. Fixtures: `scripts/fixtures/make-color-fixtures.py`.
@Suite struct ColorManagementTests {
    static let keep = ImageDecodingOptions(colorManagement: .keepOriginal)

    private func decode(_ name: String, _ options: ImageDecodingOptions = ImageDecodingOptions()) throws -> Image {
        let data = try Fixtures.data("color/\(name)")
        let format = try #require(ImageFormat(sniffing: data))
        return try ImageDecoders.decoder(for: format).decode(data, options: options)
    }

    private func profile(_ name: String) throws -> ColorProfile {
        ColorProfile(data: try Fixtures.data("color/\(name)"))
    }

    @Test(arguments: [
        ("display-p3.jpg", "display-p3.icc"),
        ("display-p3.png", "display-p3.icc"),
        ("adobe-rgb.png", "adobe-rgb.icc"),
        ("adobe-rgb-alpha.webp", "adobe-rgb.icc"),
        ("prophoto.webp", "prophoto.icc"),
        ("prophoto-big.jpg", "prophoto-big.icc"),
    ])
    func wideGamutFilesConvertAsLittleCMSDoes(file: String, icc: String) throws {
        let stored = try decode(file, Self.keep)
        #expect(stored.colorProfile == (try profile(icc)), "the embedded profile, byte for byte")
        let converted = try decode(file)
        #expect(converted.colorProfile == nil)
        #expect((converted.width, converted.height, converted.pixelFormat) == (stored.width, stored.height, stored.pixelFormat))
        let reference = try referenceTransform(stored, profile: try profile(icc))
        #expect(largestByteDifference(converted.pixels, reference) <= 1, "against lcms2's own transform of the stored pixels")
        #expect(ImageComparison(converted, storedValues(stored)).maximumDifference > 20, "the conversion changed the pixels")
        if stored.pixelFormat == .rgba8 {
            let alpha = { (pixels: [UInt8]) in stride(from: 3, to: pixels.count, by: 4).map { pixels[$0] } }
            #expect(alpha(converted.pixels) == alpha(stored.pixels), "alpha is copied")
        }
    }

    /// `roundTrip`: how far the card may land from where it began after
    /// sRGB → space → 8 bits → sRGB. ProPhoto spreads its huge gamut over
    /// the same 256 levels, so its 8-bit round trip loses the most.
    @Test(arguments: [
        ("display-p3.png", "display-p3-expected.png", 4),
        ("adobe-rgb.png", "adobe-rgb-expected.png", 4),
        ("prophoto.webp", "prophoto-expected.png", 20),
    ])
    func losslessFilesMatchPillowsImageCms(file: String, expected: String, roundTrip: Int) throws {
        let converted = try decode(file)
        let pillow = try decode(expected)
        assertImage(converted, matches: pillow, .within(levels: 1), name: file)
        let card = try decode("card-srgb.png")
        assertImage(converted, matches: card, .within(levels: roundTrip), name: "\(file) round trip")
    }

    /// Matrix-and-curves profiles take Imago's table-and-matrix path; on a
    /// grid of 64 levels a channel (262,144 colours, every corner and edge
    /// of the cube) it lands within one level of lcms2's own transform.
    @Test(arguments: ["display-p3.icc", "adobe-rgb.icc", "prophoto.icc", "gamma-1.0.png", "chrm-adobe.png"])
    func matrixAndCurvesProfilesStayWithinOneLevelOfLittleCMS(source: String) throws {
        let profile = source.hasSuffix(".icc") ? try profile(source) : try #require(try decode(source, Self.keep).colorProfile)
        let levels = (0..<64).map { UInt8($0 * 255 / 63) }
        var pixels: [UInt8] = []
        for r in levels { for g in levels { for b in levels { pixels += [r, g, b, UInt8(truncatingIfNeeded: Int(r) &+ Int(b))] } } }
        let rgba = Image(width: 512, height: 512, pixelFormat: .rgba8, pixels: pixels)
        let rgb = rgba.converted(to: .rgb8)
        for image in [rgb, rgba] {
            let converted = try ColorConversionFunctions.lcms2.convertToSRGB(image, profile)
            let reference = try referenceTransform(image, profile: profile)
            #expect(largestByteDifference(converted.pixels, reference) <= 1, "\(source), \(image.pixelFormat)")
            #expect(ImageComparison(converted, image).maximumDifference > 10, "the conversion changed the pixels")
        }
    }

    @Test func aProfileWhoseLookupTableDisagreesWithItsColorantsConvertsByTheTable() throws {
        let stored = try decode("p3-with-adobe-table.png", Self.keep)
        let tabled = try profile("p3-with-adobe-table.icc")
        #expect(stored.colorProfile == tabled)
        let converted = try decode("p3-with-adobe-table.png")
        #expect(largestByteDifference(converted.pixels, try referenceTransform(stored, profile: tabled)) == 0, "lcms2 itself, by the table")
        let byColorants = try referenceTransform(stored, profile: try profile("display-p3.icc"))
        #expect(largestByteDifference(converted.pixels, byColorants) > 10, "not the colorants' answer")
    }

    /// A gray profile applies to gray pixels: a gray JPEG's `gray8`, and a
    /// gray PNG's, which Imago decodes to RGB (all three channels equal).
    @Test(arguments: ["gray-profile.png", "gray-alpha-profile.png", "gray-profile.jpg"])
    func grayProfilesApplyToGrayImages(file: String) throws {
        let stored = try decode(file, Self.keep)
        #expect(stored.colorProfile == (try profile("gray.icc")))
        let converted = try decode(file)
        #expect(converted.colorProfile == nil)
        #expect(converted.pixelFormat == stored.pixelFormat)
        let channels = stored.pixelFormat.bytesPerPixel
        let colours = stored.pixelFormat.hasAlpha ? channels - 1 : channels
        // lcms2: the gray profile to sRGB's tone curve, level by level.
        let grayLevels = Image(width: 256, height: 1, pixelFormat: .gray8, pixels: (0...255).map(UInt8.init))
        let table = try referenceGrayTransform(grayLevels, profile: try profile("gray.icc"))
        // Sample by sample against lcms2's table, and alpha on its own: the
        // conversion works on stored colour whatever the alpha, which
        // ImageComparison would premultiply away under translucent pixels.
        var largest = 0, moved = 0
        for index in stride(from: 0, to: stored.pixels.count, by: channels) {
            for channel in 0..<colours {
                largest = max(largest, abs(Int(converted.pixels[index + channel]) - Int(table[Int(stored.pixels[index + channel])])))
                moved = max(moved, abs(Int(converted.pixels[index + channel]) - Int(stored.pixels[index + channel])))
            }
            if colours < channels { #expect(converted.pixels[index + colours] == stored.pixels[index + colours], "alpha is copied") }
        }
        #expect(largest <= 1, "within one level of lcms2")
        #expect(moved >= 3, "gamma 2.2 is not sRGB's curve")
    }

    @Test func aCMYKJPEGConvertsThroughItsProfile() throws {
        let converted = try decode("cmyk.jpg")
        #expect((converted.pixelFormat, converted.colorProfile) == (.rgb8, nil))
        assertImage(converted, matches: try decode("cmyk-expected.png"), .within(levels: 1))   // as Pillow's ImageCms converts the inks
        #expect(ImageComparison(converted, try decode("card-srgb.png")).maximumDifference > 20, "the press's inks, not a naive inversion")
        // No pixel format holds inks: kept or not, the pixels are sRGB, and say so.
        let kept = try decode("cmyk.jpg", Self.keep)
        #expect(kept.pixels == converted.pixels)
        #expect(kept.colorProfile == .sRGB)
        #expect(try ImageDecoders.jpeg().info(for: Fixtures.data("color/cmyk.jpg")).colorProfile == (try profile("cmyk.icc")))
        // A thumbnail converts the same way.
        let thumbnail = try decode("cmyk.jpg", ImageDecodingOptions(maximumPixelSize: 24))
        #expect(thumbnail.width == 24)
        assertImage(thumbnail, matches: converted.resized(width: 24, height: 16), .within(levels: 40))
    }

    /// Damaged profiles (bytes changed at random in the tags and the tag
    /// table) convert or are refused with a typed error: never a crash, a
    /// pixel out of place, or a non-finite table (the address sanitizer run
    /// checks the reads).
    @Test(arguments: ["display-p3.icc", "prophoto.icc", "gray.icc", "p3-with-adobe-table.icc"])
    func damagedProfilesConvertOrAreRefused(icc: String) throws {
        let original = [UInt8](try profile(icc).data)
        var generator = SeededGenerator(seed: 28)
        let rgba = Image(width: 16, height: 16, pixelFormat: .rgba8, pixels: (0..<1024).map { UInt8(truncatingIfNeeded: $0 &* 37) })
        let gray = Image(width: 16, height: 16, pixelFormat: .gray8, pixels: (0..<256).map(UInt8.init))
        for _ in 0..<50 {
            var bytes = original
            for _ in 0..<Int.random(in: 1...8, using: &generator) {
                bytes[Int.random(in: 128..<bytes.count, using: &generator)] = UInt8.random(in: 0...255, using: &generator)
            }
            for image in [rgba, gray] {
                do {
                    let converted = try ColorConversionFunctions.lcms2.convertToSRGB(image, ColorProfile(data: Data(bytes)))
                    #expect((converted.width, converted.height, converted.pixelFormat) == (image.width, image.height, image.pixelFormat))
                    if image.pixelFormat == .rgba8 {
                        #expect(stride(from: 3, to: 1024, by: 4).allSatisfy { converted.pixels[$0] == image.pixels[$0] }, "alpha is copied")
                    }
                } catch {
                    #expect(error is CodecError)
                }
            }
        }
    }

    @Test func theMultiSegmentProfileIsReassembled() throws {
        let data = try Fixtures.data("color/prophoto-big.jpg")
        #expect(data.count(of: Array("ICC_PROFILE".utf8)) == 2)
        let image = try decode("prophoto-big.jpg", Self.keep)
        #expect(image.colorProfile?.data.count == 77_524)
        #expect(image.colorProfile == (try profile("prophoto-big.icc")))
    }

    @Test func aPNGGammaOfOneIsLinearLight() throws {
        let stored = try decode("gamma-1.0.png", Self.keep)
        #expect(stored.colorProfile?.colorSpace == "RGB", "a profile made from gAMA")
        #expect(stored.colorProfile?.data[24..<36].allSatisfy { $0 == 0 } == true, "no creation time: the same chunks give the same bytes")
        let converted = try decode("gamma-1.0.png")
        let expected = stored.pixels.map { value -> UInt8 in
            let linear = Double(value) / 255
            let encoded = linear <= 0.0031308 ? linear * 12.92 : 1.055 * pow(linear, 1 / 2.4) - 0.055
            return UInt8((encoded * 255).rounded())
        }
        #expect(largestByteDifference(converted.pixels, expected) <= 1)
    }

    @Test func chrmAndGammaDescribeTheSpace() throws {
        let converted = try decode("chrm-adobe.png")
        let card = try decode("card-srgb.png")
        assertImage(converted, matches: card, .within(levels: 4))
        // The stored values, read as sRGB, are not the card.
        #expect(ImageComparison(storedValues(try decode("chrm-adobe.png", Self.keep)), card).maximumDifference > 20)
    }

    @Test(arguments: ["gamma-0.45455.png", "srgb-chunk.png", "card-srgb.png"])
    func pngsThatAreSRGBAreLeftAlone(file: String) throws {
        let spy = SpyColorConversion()
        let data = try Fixtures.data("color/\(file)")
        let image = try ImageDecoders.png(functions: .png, colorConversion: spy.functions).decode(data, options: ImageDecodingOptions())
        #expect(spy.calls.isEmpty)
        #expect(image.colorProfile == nil)
        #expect(image.pixels == (try decode("card-srgb.png")).pixels)
    }

    @Test(arguments: ["garbage-profile.jpg", "gray-profile-on-rgb.jpg"])
    func anUnusableProfileLeavesThePixelsAsStored(file: String) throws {
        let stored = try decode(file, Self.keep)
        #expect(stored.colorProfile != nil, "the profile is still there to keep")
        let converted = try decode(file)
        #expect(converted.colorProfile == nil)
        #expect(converted.pixels == stored.pixels)
        // lcms2 itself says why.
        let error = try #require(throws: CodecError.self) { try ColorConversionFunctions.lcms2.convertToSRGB(stored, stored.colorProfile!) }
        #expect(error.library == "lcms2")
    }

    @Test func anSRGBProfileIsRecognisedAndChangesNothing() throws {
        let card = try decode("card-srgb.png")
        let tagged = try ImageEncoders.png(compression: .fast).encode(withProfile(card, .sRGB))
        let stored = try ImageDecoders.png().decode(tagged, options: Self.keep)
        #expect(stored.colorProfile == .sRGB)
        #expect(try ImageDecoders.png().decode(tagged, options: ImageDecodingOptions()).pixels == card.pixels)
    }

    // MARK: - The seam, through the spy

    @Test func theDecoderConvertsOnceAfterTheThumbnailWithTheFilesProfile() throws {
        let spy = SpyColorConversion()
        let data = try Fixtures.data("color/display-p3.png")
        let decoder = ImageDecoders.png(functions: .png, colorConversion: spy.functions)
        let image = try decoder.decode(data, options: ImageDecodingOptions(maximumPixelSize: 24))
        #expect(spy.calls.count == 1)
        #expect(spy.calls.first?.profile == (try profile("display-p3.icc")))
        #expect(spy.calls.first.map { [$0.image.width, $0.image.height] } == [24, 16], "converted after scaling: fewer pixels")
        #expect(image.colorProfile == nil)

        _ = try decoder.decode(data, options: Self.keep)
        #expect(spy.calls.count == 1, "keepOriginal does not convert")
    }

    @Test func aFailingConversionKeepsThePixelsAndDropsTheProfile() throws {
        struct Refused: Error {}
        let spy = SpyColorConversion(failingWith: Refused())
        let data = try Fixtures.data("color/adobe-rgb.png")
        let image = try ImageDecoders.png(functions: .png, colorConversion: spy.functions).decode(data, options: ImageDecodingOptions())
        #expect(spy.calls.count == 1)
        #expect(image.colorProfile == nil)
        #expect(image.pixels == (try decode("adobe-rgb.png", Self.keep)).pixels)
    }

    @Test func aDecoderWithoutAColorTableKeepsTheProfile() throws {
        let data = try Fixtures.data("color/adobe-rgb.png")
        let image = try ImageDecoders.png(functions: .png, colorConversion: nil).decode(data, options: ImageDecodingOptions())
        #expect(image.colorProfile == (try profile("adobe-rgb.icc")))
    }

    @Test func transformationsKeepTheProfileUnlessTheyTurnColourToGray() throws {
        let image = try decode("display-p3.png", Self.keep)
        let profile = try profile("display-p3.icc")
        #expect(image.resized(width: 12, height: 8).colorProfile == profile)
        #expect(image.cropped(x: 2, y: 2, width: 10, height: 10).colorProfile == profile)
        #expect(image.applying(.right).colorProfile == profile)
        #expect(image.converted(to: .rgba8).colorProfile == profile)
        #expect(image.converted(to: .gray8).colorProfile == nil)
    }

    // MARK: - Encoders

    @Test(arguments: ["jpeg", "png", "webp"])
    func encodersEmbedAKeptProfile(format: String) throws {
        for file in ["display-p3.png", "prophoto-big.jpg"] {
            let image = try decode(file, Self.keep)
            let encoded = try encoder(format).encode(image)
            let decoded = try ImageDecoders.decoder(for: try #require(ImageFormat(sniffing: encoded))).decode(encoded, options: Self.keep)
            #expect(decoded.colorProfile == image.colorProfile, "\(file) as \(format)")
            if format == "png" { #expect(decoded.pixels == image.pixels) }
        }
    }

    @Test(arguments: ["jpeg", "webp"])
    func encodersTagSRGBOnRequest(format: String) throws {
        let card = try decode("card-srgb.png")
        let plain = try encoder(format).encode(card)
        let tagged = try encoder(format, sRGB: true).encode(card)
        let decoder = ImageDecoders.decoder(for: format == "jpeg" ? .jpeg : .webp)
        #expect(try decoder.decode(plain, options: Self.keep).colorProfile == nil)
        #expect(try decoder.decode(tagged, options: Self.keep).colorProfile == .sRGB)
        #expect(try decoder.decode(tagged, options: ImageDecodingOptions()).pixels == (try decoder.decode(plain, options: ImageDecodingOptions())).pixels)
    }

    @Test func thePNGEncoderMarksSRGBWithAChunk() throws {
        let card = try decode("card-srgb.png")
        let tagged = try ImageEncoders.png(embedsSRGBProfile: true).encode(card)
        #expect(tagged.count(of: Array("sRGB".utf8)) == 1)
        #expect(try ImageEncoders.png().encode(card).count(of: Array("sRGB".utf8)) == 0)
    }

    // MARK: - EXIF orientation outside JPEG

    @Test(arguments: [
        ("orientation3.png", 6, 4, 5, 3), ("orientation6.png", 4, 6, 3, 0), ("orientation8.png", 4, 6, 0, 5),
        ("orientation3.webp", 6, 4, 5, 3), ("orientation6.webp", 4, 6, 3, 0), ("orientation8.webp", 4, 6, 0, 5),
    ])
    func pngAndWebPOrientationIsApplied(file: String, width: Int, height: Int, redX: Int, redY: Int) throws {
        let image = try decode(file)
        #expect((image.width, image.height) == (width, height))
        let red = image.pixel(x: redX, y: redY)
        #expect(red[0] > 200 && red[1] < 50, "the stored top-left pixel, turned upright: \(red)")
        #expect(image.pixel(x: width - 1 - redX, y: height - 1 - redY)[0] < 50)
    }

    // MARK: - Helpers

    private func encoder(_ format: String, sRGB: Bool = false) -> any ImageEncoding {
        switch format {
        case "jpeg": ImageEncoders.jpeg(quality: 95, embedsSRGBProfile: sRGB)
        case "png": ImageEncoders.png(embedsSRGBProfile: sRGB)
        default: ImageEncoders.webp(lossless: true, embedsSRGBProfile: sRGB)
        }
    }

    private func withProfile(_ image: Image, _ profile: ColorProfile) -> Image {
        var tagged = image
        tagged.colorProfile = profile
        return tagged
    }

    /// lcms2's transform of gray pixels from `profile` to a gray with sRGB's
    /// tone curve (as sRGB's gray axis), perceptual intent.
    private func referenceGrayTransform(_ image: Image, profile: ColorProfile) throws -> [UInt8] {
        var parameters: [cmsFloat64Number] = [2.4, 1 / 1.055, 0.055 / 1.055, 1 / 12.92, 0.04045]
        let curve = try #require(cmsBuildParametricToneCurve(nil, 4, &parameters))
        defer { cmsFreeToneCurve(curve) }
        var white = cmsCIExyY(x: 0.3457, y: 0.3585, Y: 1)
        return try lcms2(image, from: profile, to: try #require(cmsCreateGrayProfile(&white, curve)), format: imago_lcms_gray8, flags: 0)
    }

    /// lcms2's transform of `image`'s packed pixels from `profile` to its
    /// built-in sRGB, perceptual intent, default flags: independent of
    /// Imago's wrapper.
    private func referenceTransform(_ image: Image, profile: ColorProfile) throws -> [UInt8] {
        let hasAlpha = image.pixelFormat == .rgba8
        return try lcms2(image, from: profile, to: try #require(cmsCreate_sRGBProfile()),
                         format: hasAlpha ? imago_lcms_rgba8 : imago_lcms_rgb8, flags: hasAlpha ? cmsUInt32Number(cmsFLAGS_COPY_ALPHA) : 0)
    }

    /// `image`'s packed pixels through lcms2 from `profile` to `output`
    /// (closed here), perceptual intent.
    private func lcms2(_ image: Image, from profile: ColorProfile, to output: cmsHPROFILE, format: cmsUInt32Number,
                       flags: cmsUInt32Number) throws -> [UInt8] {
        defer { cmsCloseProfile(output) }
        let input = try #require(profile.data.withUnsafeBytes { cmsOpenProfileFromMem($0.baseAddress, cmsUInt32Number($0.count)) })
        defer { cmsCloseProfile(input) }
        let transform = try #require(cmsCreateTransform(input, format, output, format, cmsUInt32Number(INTENT_PERCEPTUAL), flags))
        defer { cmsDeleteTransform(transform) }
        var result = image.pixels
        image.pixels.withUnsafeBytes { source in
            result.withUnsafeMutableBytes { target in
                cmsDoTransform(transform, source.baseAddress, target.baseAddress, cmsUInt32Number(image.width * image.height))
            }
        }
        return result
    }
}

/// The largest difference between two equally long byte arrays (`Int.max`
/// when the lengths differ): for lcms2's output and values computed by
/// formula, which are bytes rather than images, and whose colour counts
/// under translucent pixels too (ImageComparison premultiplies it).
func largestByteDifference(_ a: [UInt8], _ b: [UInt8]) -> Int {
    guard a.count == b.count else { return .max }
    return zip(a, b).reduce(0) { max($0, abs(Int($1.0) - Int($1.1))) }
}

extension Data {
    /// How many times `pattern` occurs.
    func count(of pattern: [UInt8]) -> Int {
        var count = 0, start = startIndex
        while let found = self[start...].firstRange(of: pattern) {
            count += 1
            start = found.upperBound
        }
        return count
    }
}
