import CImagoKernels
import CLcms2
import Foundation

/// The fast path for the profiles most files carry: an RGB profile made of
/// three tone curves and three colorants (Display P3, Adobe RGB, ProPhoto,
/// the profiles a PNG's `gAMA` and `cHRM` describe) converts to sRGB with
/// tables and one 3x3 matrix (`imago_matrix_shaper_convert`), and a gray
/// profile with one 256-entry table, instead of lcms2's general pipeline.
///
/// The arithmetic is the one lcms2 itself reduces such a pair of profiles
/// to (linear light by curve, the matrix from the profile's colorants to
/// sRGB's, both adapted to D50, clamping, sRGB's curve by a table of 16,384
/// steps); results stay within one level of lcms2's transform. Profiles
/// with lookup tables (`A2B` or `D2B` tags), which lcms2 prefers over the
/// colorants, are not taken: lcms2 converts those.
enum MatrixShaper {
    /// The conversion of `profile`'s RGB to sRGB, or `nil` when the profile
    /// is not matrix-and-curves or its matrix cannot be inverted.
    static func rgbTransform(from profile: cmsHPROFILE) -> OpaquePointer? {
        guard cmsGetColorSpace(profile) == cmsSigRgbData, cmsIsMatrixShaper(profile) != 0, !hasLookupTables(profile),
              let srgb = cmsCreate_sRGBProfile() else { return nil }
        defer { cmsCloseProfile(srgb) }
        guard let source = colorants(of: profile), let target = colorants(of: srgb), let inverse = inverted(target) else { return nil }
        let matrix = multiplied(inverse, source)
        guard matrix.allSatisfy({ $0.isFinite && abs($0) < 64 }) else { return nil }
        let curves = [cmsSigRedTRCTag, cmsSigGreenTRCTag, cmsSigBlueTRCTag].map { cmsReadTag(profile, $0).map(OpaquePointer.init) }
        guard curves.allSatisfy({ $0 != nil }) else { return nil }

        var linear = [Float](repeating: 0, count: 3 * 256)
        for (channel, curve) in curves.enumerated() {
            for level in 0..<256 { linear[channel * 256 + level] = cmsEvalToneCurveFloat(curve, Float(level) / 255) }
        }
        guard linear.allSatisfy({ $0.isFinite }) else { return nil }
        let top = Double(IMAGO_COLOR_ENCODE_STEPS - 1)
        let encode = (0..<Int(IMAGO_COLOR_ENCODE_STEPS)).map { encodedSRGB(Double($0) / top) }
        return imago_matrix_shaper_make(linear, matrix.map(Float.init), encode)
    }

    /// The table taking a gray profile's levels to sRGB's tone curve, or
    /// `nil` when the profile has no gray tone curve to read.
    static func grayTable(from profile: cmsHPROFILE) -> [UInt8]? {
        guard cmsGetColorSpace(profile) == cmsSigGrayData, !hasLookupTables(profile),
              let curve = cmsReadTag(profile, cmsSigGrayTRCTag).map(OpaquePointer.init) else { return nil }
        return (0..<256).map { level in encodedSRGB(Double(cmsEvalToneCurveFloat(curve, Float(level) / 255))) }
    }

    /// sRGB's encoding of linear light `value` (IEC 61966-2.1), as a byte.
    static func encodedSRGB(_ value: Double) -> UInt8 {
        let clamped = min(max(value, 0), 1)
        let encoded = clamped <= 0.0031308 ? clamped * 12.92 : 1.055 * pow(clamped, 1 / 2.4) - 0.055
        return UInt8((encoded * 255).rounded())
    }

    /// Whether lcms2 would take the profile's lookup tables rather than its colorants.
    private static func hasLookupTables(_ profile: cmsHPROFILE) -> Bool {
        [cmsSigAToB0Tag, cmsSigAToB1Tag, cmsSigAToB2Tag, cmsSigDToB0Tag, cmsSigDToB1Tag, cmsSigDToB2Tag]
            .contains { cmsIsTag(profile, $0) != 0 }
    }

    /// The colorants as a row-major 3x3 matrix whose columns are red's,
    /// green's and blue's XYZ (D50).
    private static func colorants(of profile: cmsHPROFILE) -> [Double]? {
        var columns: [cmsCIEXYZ] = []
        for tag in [cmsSigRedColorantTag, cmsSigGreenColorantTag, cmsSigBlueColorantTag] {
            guard let xyz = cmsReadTag(profile, tag)?.assumingMemoryBound(to: cmsCIEXYZ.self).pointee else { return nil }
            columns.append(xyz)
        }
        return [columns[0].X, columns[1].X, columns[2].X,
                columns[0].Y, columns[1].Y, columns[2].Y,
                columns[0].Z, columns[1].Z, columns[2].Z]
    }

    /// The inverse of a row-major 3x3 matrix, or `nil` when it is singular.
    private static func inverted(_ m: [Double]) -> [Double]? {
        let cofactors = [
            m[4] * m[8] - m[5] * m[7], m[2] * m[7] - m[1] * m[8], m[1] * m[5] - m[2] * m[4],
            m[5] * m[6] - m[3] * m[8], m[0] * m[8] - m[2] * m[6], m[2] * m[3] - m[0] * m[5],
            m[3] * m[7] - m[4] * m[6], m[1] * m[6] - m[0] * m[7], m[0] * m[4] - m[1] * m[3],
        ]
        let determinant = m[0] * cofactors[0] + m[1] * cofactors[3] + m[2] * cofactors[6]
        guard abs(determinant) > 1e-9 else { return nil }
        return cofactors.map { $0 / determinant }
    }

    /// The product `a` times `b` of two row-major 3x3 matrices.
    private static func multiplied(_ a: [Double], _ b: [Double]) -> [Double] {
        (0..<9).map { index in
            let row = index / 3, column = index % 3
            return (0..<3).reduce(0) { $0 + a[row * 3 + $1] * b[$1 * 3 + column] }
        }
    }
}
