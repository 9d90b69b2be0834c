import CImagoKernels
import CLcms2
import Foundation
import Imago

extension ColorConversionFunctions {
    /// The production table over Little CMS 2 (lcms2).
    ///
    /// RGB profiles convert ``PixelFormat/rgb8`` and ``PixelFormat/rgba8``
    /// images to sRGB, gray profiles convert ``PixelFormat/gray8`` and
    /// ``PixelFormat/grayAlpha8`` images to gray with sRGB's tone curve, and
    /// RGB images whose pixels are all gray (a gray PNG, which decodes to
    /// RGB) the same way; alpha is copied. The rendering intent is
    /// perceptual (for the common matrix-and-curves profiles the same as
    /// relative colorimetric), as in Pillow's `ImageCms` and browsers. A
    /// profile whose primaries, white point and curves match sRGB's is
    /// recognised and the pixels are left alone.
    ///
    /// Matrix-and-curves profiles (Display P3, Adobe RGB, ProPhoto, a PNG's
    /// `gAMA` and `cHRM`) and gray tone curves convert through tables and a
    /// 3x3 matrix in SIMD, several times faster than lcms2's general
    /// transform and within one level of it; profiles with lookup tables go
    /// through lcms2. Transforms are built once per profile and kept (up to 16).
    ///
    /// It throws ``CodecError`` for a profile lcms2 cannot read, or one whose
    /// colour space is not the image's (a CMYK profile on RGB pixels, a gray
    /// profile on colour pixels).
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

    /// A built conversion, or the finding that the profile is sRGB already.
    /// `@unchecked Sendable`: lcms2 transforms made with `cmsFLAGS_NOCACHE`
    /// may be used from several threads at once, the tables are only read
    /// once built, and both are freed only when no one holds the box.
    private final class Transform: @unchecked Sendable {
        enum Kind {
            /// The profile is sRGB: nothing to do.
            case identity
            /// lcms2's own transform.
            case lcms2(cmsHTRANSFORM)
            /// Tables and a matrix (``MatrixShaper``).
            case matrixShaper(OpaquePointer)
            /// One table for every colour channel: a gray profile. On RGB
            /// pixels it applies only when every pixel is gray (a gray PNG,
            /// which Imago decodes to RGB).
            case table([UInt8], onRGB: Bool)
        }

        let kind: Kind
        init(_ kind: Kind) { self.kind = kind }
        deinit {
            switch kind {
            case .lcms2(let handle): cmsDeleteTransform(handle)
            case .matrixShaper(let tables): imago_matrix_shaper_free(tables)
            case .identity, .table: break
            }
        }
    }

    /// The profile as an array, not `Data`: `Data` keeps its storage in an
    /// enum whose spare pointer bits hide it from the leak checker, which
    /// then reports every cached profile as leaked.
    private struct Key: Hashable {
        var profile: [UInt8]
        var pixelFormat: PixelFormat
        /// From inverted CMYK to `pixelFormat` (RGB), rather than from `pixelFormat`.
        var fromCMYK = false
    }

    private let transforms = Locked<[Key: Transform]>([:])

    /// Converts every frame of `image` from `profile` to sRGB.
    func convertToSRGB(_ image: Image, from profile: ColorProfile) throws -> Image {
        let transform = try self.transform(for: profile, pixelFormat: image.pixelFormat)
        if case .identity = transform.kind { return image.withoutProfile() }
        if case .table(_, onRGB: true) = transform.kind, !image.frames.allSatisfy({ Self.isGray($0.pixels, image) }) {
            throw CodecError.lcms2(unusableProfile: "a gray profile on pixels that are not all gray")
        }
        let rowBytes = image.width * image.pixelFormat.bytesPerPixel
        let channels = image.pixelFormat.bytesPerPixel
        let frames = image.frames.map { frame in
            let pixels = [UInt8](pixelCapacity: image.bytesPerRow * image.height) { output, count in
                frame.pixels.withUnsafeBytes { input in
                    let (source, target) = (input.bindMemory(to: UInt8.self).baseAddress!, output.baseAddress!)
                    let (width, height, stride) = (image.width, image.height, image.bytesPerRow)
                    switch transform.kind {
                    case .lcms2(let handle):
                        cmsDoTransformLineStride(handle, source, target, cmsUInt32Number(width), cmsUInt32Number(height),
                                                 cmsUInt32Number(stride), cmsUInt32Number(stride), 0, 0)
                    case .matrixShaper(let tables):
                        imago_matrix_shaper_convert(tables, source, stride, target, stride, width, height, channels)
                    case .table(let table, _):
                        imago_table_convert(table, source, stride, target, stride, width, height, channels)
                    case .identity:
                        break
                    }
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

    /// Whether every pixel of an RGB or RGBA frame has equal red, green and blue.
    private static func isGray(_ pixels: [UInt8], _ image: Image) -> Bool {
        let channels = image.pixelFormat.bytesPerPixel
        return pixels.withUnsafeBufferPointer { bytes in
            for row in 0..<image.height {
                var index = row * image.bytesPerRow
                for _ in 0..<image.width {
                    if bytes[index] != bytes[index + 1] || bytes[index] != bytes[index + 2] { return false }
                    index += channels
                }
            }
            return true
        }
    }

    /// Converts a CMYK JPEG's inks, as libjpeg-turbo hands them over
    /// (Adobe's inverted CMYK, 4 bytes a pixel, packed), to sRGB through
    /// the file's CMYK `profile` (perceptual intent): RGB8, packed.
    ///
    /// - Throws: ``CodecError`` when lcms2 cannot read the profile or it is
    ///   not a CMYK profile.
    func rgb(fromInvertedCMYK inks: [UInt8], width: Int, height: Int, profile: ColorProfile) throws -> [UInt8] {
        let key = Key(profile: [UInt8](profile.data), pixelFormat: .rgb8, fromCMYK: true)
        let transform = try kept(key) { try Self.makeCMYKTransform(for: profile) }
        guard case .lcms2(let handle) = transform.kind else { throw CodecError.lcms2(unusableProfile: "no CMYK transform") }
        return [UInt8](pixelCapacity: width * height * 3) { output, count in
            inks.withUnsafeBytes { input in
                cmsDoTransformLineStride(handle, input.baseAddress, output.baseAddress, cmsUInt32Number(width), cmsUInt32Number(height),
                                         cmsUInt32Number(width * 4), cmsUInt32Number(width * 3), 0, 0)
            }
            count = width * height * 3
        }
    }

    private func transform(for profile: ColorProfile, pixelFormat: PixelFormat) throws -> Transform {
        try kept(Key(profile: [UInt8](profile.data), pixelFormat: pixelFormat)) {
            try Self.makeTransform(for: profile, pixelFormat: pixelFormat)
        }
    }

    /// The transform kept for `key`, made by `make` (and kept) when there is none.
    private func kept(_ key: Key, make: () throws -> Transform) throws -> Transform {
        if let kept = transforms.withLock({ $0[key] }) { return kept }
        let made = try make()
        transforms.withLock { kept in
            if kept.count >= Self.capacity, let any = kept.keys.first { kept[any] = nil }
            kept[key] = made
        }
        return made
    }

    private static func makeTransform(for profile: ColorProfile, pixelFormat: PixelFormat) throws -> Transform {
        try withOpened(profile) { input in
            let space = cmsGetColorSpace(input)
            let format: cmsUInt32Number
            switch pixelFormat {
            case .rgb8: format = imago_lcms_rgb8
            case .rgba8: format = imago_lcms_rgba8
            case .gray8: format = imago_lcms_gray8
            case .grayAlpha8: format = imago_lcms_graya8
            }
            if space == cmsSigGrayData, let table = MatrixShaper.grayTable(from: input) {
                return Transform(.table(table, onRGB: !pixelFormat.isGray))
            }
            let expected = pixelFormat.isGray ? cmsSigGrayData : cmsSigRgbData
            guard space == expected else {
                throw CodecError.lcms2(unusableProfile: "a profile for another colour space than the \(pixelFormat) pixels")
            }
            if !pixelFormat.isGray && isSRGB(input) { return Transform(.identity) }
            if let tables = MatrixShaper.rgbTransform(from: input) { return Transform(.matrixShaper(tables)) }
            return try lcms2Transform(from: input, format, to: pixelFormat.isGray ? makeSRGBGrayProfile() : cmsCreate_sRGBProfile(), format,
                                      flags: cmsUInt32Number(cmsFLAGS_COPY_ALPHA | cmsFLAGS_NOCACHE))
        }
    }

    private static func makeCMYKTransform(for profile: ColorProfile) throws -> Transform {
        try withOpened(profile) { input in
            guard cmsGetColorSpace(input) == cmsSigCmykData else {
                throw CodecError.lcms2(unusableProfile: "a profile for another colour space than CMYK inks")
            }
            return try lcms2Transform(from: input, imago_lcms_cmyk8_inverted, to: cmsCreate_sRGBProfile(), imago_lcms_rgb8,
                                      flags: cmsUInt32Number(cmsFLAGS_NOCACHE))
        }
    }

    /// Runs `body` with `profile` opened by lcms2, closed afterwards.
    private static func withOpened<T>(_ profile: ColorProfile, _ body: (cmsHPROFILE) throws -> T) throws -> T {
        let opened = profile.data.withUnsafeBytes { raw in
            cmsOpenProfileFromMem(raw.baseAddress, cmsUInt32Number(clamping: raw.count))
        }
        guard let input = opened else { throw CodecError.lcms2(unusableProfile: "lcms2 could not read the profile") }
        defer { cmsCloseProfile(input) }
        return try body(input)
    }

    /// lcms2's perceptual transform from `input` to `output` (made by the
    /// caller, closed here), with the pixel formats and flags given.
    private static func lcms2Transform(from input: cmsHPROFILE, _ inputFormat: cmsUInt32Number, to output: cmsHPROFILE?,
                                       _ outputFormat: cmsUInt32Number, flags: cmsUInt32Number) throws -> Transform {
        guard let output else { throw CodecError.lcms2(unusableProfile: "lcms2 could not make the sRGB profile") }
        defer { cmsCloseProfile(output) }
        guard let handle = cmsCreateTransform(input, inputFormat, output, outputFormat, cmsUInt32Number(INTENT_PERCEPTUAL), flags) else {
            throw CodecError.lcms2(unusableProfile: "lcms2 could not build a transform from the profile")
        }
        return Transform(.lcms2(handle))
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
