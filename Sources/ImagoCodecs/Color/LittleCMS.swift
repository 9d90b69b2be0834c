import CLcms2
import Foundation
import Imago

extension ColorConversionFunctions {
    /// The production table over Little CMS 2 (lcms2).
    ///
    /// RGB profiles convert ``PixelFormat/rgb8`` and ``PixelFormat/rgba8``
    /// images to sRGB, gray profiles convert ``PixelFormat/gray8`` and
    /// ``PixelFormat/grayAlpha8`` images to gray with sRGB's tone curve;
    /// alpha is copied. The rendering intent is perceptual (for the common
    /// matrix-and-curves profiles the same as relative colorimetric), as in
    /// Pillow's `ImageCms` and browsers. A profile whose primaries, white
    /// point and curves match sRGB's is recognised and the pixels are left
    /// alone. Transforms are built once per profile and kept (up to 16).
    ///
    /// It throws ``CodecError`` for a profile lcms2 cannot read, or one whose
    /// colour space is not the image's (a CMYK profile on RGB pixels).
    public static let lcms2 = ColorConversionFunctions { image, profile in
        try LittleCMS.shared.convertToSRGB(image, from: profile)
    }
}

extension ColorProfile {
    /// sRGB IEC 61966-2.1 as an ICC version 2 profile (made by lcms2), for
    /// encoders asked to tag their output.
    public static let sRGB: ColorProfile = {
        let profile = cmsCreate_sRGBProfile()!
        defer { cmsCloseProfile(profile) }
        cmsSetProfileVersion(profile, 2.1)
        return ColorProfile(data: LittleCMS.save(profile) ?? Data())
    }()

    /// The RGB profile a gamma and primaries describe (a PNG's `gAMA` and
    /// `cHRM` chunks, a HEIF `nclx` box), or `nil` when they describe sRGB
    /// closely enough that no conversion is needed (the common `gAMA` of
    /// 1/2.2 with no `cHRM`, or with sRGB's chromaticities).
    ///
    /// - Parameters:
    ///   - gamma: The file gamma (`gAMA` / 100000), such as 0.45455; `nil`
    ///     when absent, which means sRGB's curve.
    ///   - chromaticities: White point and primaries (`cHRM`), as CIE xy;
    ///     `nil` when absent, which means sRGB's (ITU-R BT.709, D65).
    static func synthesized(gamma: Double?, chromaticities: Chromaticities?) -> ColorProfile? {
        let srgbLike = chromaticities.map { $0.isClose(to: .sRGB) } ?? true
        if srgbLike, gamma == nil || abs(gamma! - 0.45455) < 0.005 { return nil }
        guard gamma.map({ $0 > 0.01 && $0 < 100 }) ?? true else { return nil }
        let curve = gamma.map { cmsBuildGamma(nil, 1 / $0) } ?? LittleCMS.makeSRGBCurve()
        guard let curve else { return nil }
        defer { cmsFreeToneCurve(curve) }
        let c = chromaticities ?? .sRGB
        var white = cmsCIExyY(x: c.white.x, y: c.white.y, Y: 1)
        var primaries = cmsCIExyYTRIPLE(
            Red: cmsCIExyY(x: c.red.x, y: c.red.y, Y: 1),
            Green: cmsCIExyY(x: c.green.x, y: c.green.y, Y: 1),
            Blue: cmsCIExyY(x: c.blue.x, y: c.blue.y, Y: 1)
        )
        var curves: [OpaquePointer?] = [curve, curve, curve]
        let made = curves.withUnsafeMutableBufferPointer { cmsCreateRGBProfile(&white, &primaries, $0.baseAddress) }
        guard let made else { return nil }
        defer { cmsCloseProfile(made) }
        return LittleCMS.save(made).map(ColorProfile.init(data:))
    }
}

/// A white point and three primaries as CIE xy (a PNG `cHRM` chunk, a HEIF `nclx` box).
struct Chromaticities: Sendable, Equatable {
    var white: (x: Double, y: Double)
    var red: (x: Double, y: Double)
    var green: (x: Double, y: Double)
    var blue: (x: Double, y: Double)

    /// sRGB's (ITU-R BT.709 primaries, D65 white).
    static let sRGB = Chromaticities(white: (0.3127, 0.3290), red: (0.64, 0.33), green: (0.30, 0.60), blue: (0.15, 0.06))

    /// Whether every coordinate is within 0.001 of `other`'s.
    func isClose(to other: Chromaticities) -> Bool {
        let mine = [white.x, white.y, red.x, red.y, green.x, green.y, blue.x, blue.y]
        let theirs = [other.white.x, other.white.y, other.red.x, other.red.y, other.green.x, other.green.y, other.blue.x, other.blue.y]
        return zip(mine, theirs).allSatisfy { abs($0 - $1) <= 0.001 }
    }

    static func == (a: Chromaticities, b: Chromaticities) -> Bool {
        a.white == b.white && a.red == b.red && a.green == b.green && a.blue == b.blue
    }
}

/// Little CMS transforms to sRGB, built once per profile and pixel format.
final class LittleCMS: Sendable {
    static let shared = LittleCMS()

    /// The most transforms kept at once.
    static let capacity = 16

    /// A built transform, or the finding that the profile is sRGB already.
    /// `@unchecked Sendable`: lcms2 transforms made with `cmsFLAGS_NOCACHE`
    /// may be used from several threads at once, and the handle is deleted
    /// only when no one holds the box.
    private final class Transform: @unchecked Sendable {
        let handle: cmsHTRANSFORM?
        init(_ handle: cmsHTRANSFORM?) { self.handle = handle }
        deinit { if let handle { cmsDeleteTransform(handle) } }
    }

    /// The profile as an array, not `Data`: `Data` keeps its storage in an
    /// enum whose spare pointer bits hide it from the leak checker, which
    /// then reports every cached profile as leaked.
    private struct Key: Hashable {
        var profile: [UInt8]
        var pixelFormat: PixelFormat
    }

    private let transforms = Locked<[Key: Transform]>([:])

    /// Converts every frame of `image` from `profile` to sRGB.
    func convertToSRGB(_ image: Image, from profile: ColorProfile) throws -> Image {
        let transform = try self.transform(for: profile, pixelFormat: image.pixelFormat)
        guard let handle = transform.handle else { return image.withoutProfile() }   // sRGB already
        let rowBytes = image.width * image.pixelFormat.bytesPerPixel
        let frames = image.frames.map { frame in
            let pixels = [UInt8](pixelCapacity: image.bytesPerRow * image.height) { output, count in
                frame.pixels.withUnsafeBytes { input in
                    cmsDoTransformLineStride(
                        handle, input.baseAddress, output.baseAddress,
                        cmsUInt32Number(image.width), cmsUInt32Number(image.height),
                        cmsUInt32Number(image.bytesPerRow), cmsUInt32Number(image.bytesPerRow), 0, 0
                    )
                }
                // Padding past each row, if any, is copied as it was.
                if image.bytesPerRow > rowBytes {
                    for row in 0..<image.height {
                        let start = row * image.bytesPerRow
                        for index in start + rowBytes..<start + image.bytesPerRow { output[index] = frame.pixels[index] }
                    }
                }
                count = image.bytesPerRow * image.height
            }
            return ImageFrame(pixels: pixels, duration: frame.duration)
        }
        return Image(width: image.width, height: image.height, pixelFormat: image.pixelFormat, bytesPerRow: image.bytesPerRow,
                     frames: frames, loopCount: image.loopCount)
    }

    private func transform(for profile: ColorProfile, pixelFormat: PixelFormat) throws -> Transform {
        let key = Key(profile: [UInt8](profile.data), pixelFormat: pixelFormat)
        if let kept = transforms.withLock({ $0[key] }) { return kept }
        let made = try Self.makeTransform(for: profile, pixelFormat: pixelFormat)
        transforms.withLock { kept in
            if kept.count >= Self.capacity, let any = kept.keys.first { kept[any] = nil }
            kept[key] = made
        }
        return made
    }

    private static func makeTransform(for profile: ColorProfile, pixelFormat: PixelFormat) throws -> Transform {
        let opened = profile.data.withUnsafeBytes { raw in
            cmsOpenProfileFromMem(raw.baseAddress, cmsUInt32Number(clamping: raw.count))
        }
        guard let input = opened else { throw CodecError.lcms2(unusableProfile: "lcms2 could not read the profile") }
        defer { cmsCloseProfile(input) }
        let space = cmsGetColorSpace(input)
        let format: cmsUInt32Number
        switch pixelFormat {
        case .rgb8: format = imago_lcms_rgb8
        case .rgba8: format = imago_lcms_rgba8
        case .gray8: format = imago_lcms_gray8
        case .grayAlpha8: format = imago_lcms_graya8
        }
        let expected = pixelFormat.isGray ? cmsSigGrayData : cmsSigRgbData
        guard space == expected else {
            throw CodecError.lcms2(unusableProfile: "a profile for another colour space than the \(pixelFormat) pixels")
        }
        if !pixelFormat.isGray && isSRGB(input) { return Transform(nil) }
        guard let output = pixelFormat.isGray ? makeSRGBGrayProfile() : cmsCreate_sRGBProfile() else {
            throw CodecError.lcms2(unusableProfile: "lcms2 could not make the sRGB profile")
        }
        defer { cmsCloseProfile(output) }
        let flags = cmsUInt32Number(cmsFLAGS_COPY_ALPHA | cmsFLAGS_NOCACHE)
        guard let handle = cmsCreateTransform(input, format, output, format, cmsUInt32Number(INTENT_PERCEPTUAL), flags) else {
            throw CodecError.lcms2(unusableProfile: "lcms2 could not build a transform from the profile")
        }
        return Transform(handle)
    }

    /// Whether a matrix-and-curves RGB profile has sRGB's colorants (as
    /// adapted to D50 in the profile) and curves, within a small tolerance.
    private static func isSRGB(_ profile: cmsHPROFILE) -> Bool {
        guard let srgb = cmsCreate_sRGBProfile() else { return false }
        defer { cmsCloseProfile(srgb) }
        let colorants = [cmsSigRedColorantTag, cmsSigGreenColorantTag, cmsSigBlueColorantTag]
        for tag in colorants {
            guard let mine = cmsReadTag(profile, tag)?.assumingMemoryBound(to: cmsCIEXYZ.self).pointee,
                  let theirs = cmsReadTag(srgb, tag)?.assumingMemoryBound(to: cmsCIEXYZ.self).pointee else { return false }
            guard abs(mine.X - theirs.X) < 0.002, abs(mine.Y - theirs.Y) < 0.002, abs(mine.Z - theirs.Z) < 0.002 else { return false }
        }
        for tag in [cmsSigRedTRCTag, cmsSigGreenTRCTag, cmsSigBlueTRCTag] {
            guard let curve = cmsReadTag(profile, tag).map({ OpaquePointer($0) }) else { return false }
            for step in 0...16 {
                let x = Float(step) / 16
                let expected = x <= 0.04045 ? x / 12.92 : powf((x + 0.055) / 1.055, 2.4)
                guard abs(cmsEvalToneCurveFloat(curve, x) - expected) < 0.001 else { return false }
            }
        }
        return true
    }

    /// sRGB's tone curve (IEC 61966-2.1), as lcms2's parametric type 4.
    static func makeSRGBCurve() -> OpaquePointer? {
        var parameters: [cmsFloat64Number] = [2.4, 1 / 1.055, 0.055 / 1.055, 1 / 12.92, 0.04045]
        return cmsBuildParametricToneCurve(nil, 4, &parameters)
    }

    /// A gray profile with sRGB's tone curve and a D50 white: where gray pixels go.
    private static func makeSRGBGrayProfile() -> cmsHPROFILE? {
        guard let curve = makeSRGBCurve() else { return nil }
        defer { cmsFreeToneCurve(curve) }
        var white = cmsCIExyY(x: 0.3457, y: 0.3585, Y: 1)
        return cmsCreateGrayProfile(&white, curve)
    }

    /// The profile's bytes, as an ICC file holds them. The creation date
    /// in the header (bytes 24 to 35), which lcms2 sets to the current
    /// time, is zeroed: the same description gives the same bytes, so
    /// images made from it compare equal and transforms are reused.
    static func save(_ profile: cmsHPROFILE) -> Data? {
        var size: cmsUInt32Number = 0
        guard cmsSaveProfileToMem(profile, nil, &size) != 0, size >= 128 else { return nil }
        var data = Data(count: Int(size))
        let saved = data.withUnsafeMutableBytes { cmsSaveProfileToMem(profile, $0.baseAddress, &size) }
        guard saved != 0 else { return nil }
        data.replaceSubrange(24..<36, with: [UInt8](repeating: 0, count: 12))
        return data
    }
}

extension Image {
    /// The same image without a colour profile.
    func withoutProfile() -> Image {
        var image = self
        image.colorProfile = nil
        return image
    }
}
