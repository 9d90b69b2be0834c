import Imago

/// Colour described by code points (ITU-T H.273, "CICP"), as AVIF's and
/// HEIF's `nclx` boxes and AV1 sequence headers carry it, turned into a
/// profile Little CMS can convert from.
enum CICP {
    /// The profile for colour `primaries` and `transfer` characteristics
    /// (H.273 code points), with the primaries' white point and xy values
    /// as the container decoded them; `nil` when that is sRGB or when no
    /// ICC profile here can express it.
    ///
    /// BT.709 (1) or unspecified (2) primaries count as sRGB's. The sRGB,
    /// BT.709, BT.601, BT.2020 and unspecified curves (13, 1, 6, 14, 15, 2)
    /// count as sRGB's curve, as browsers show them; linear (8) and the
    /// gammas 2.2 (4) and 2.8 (5) are kept; PQ, HLG and the rest give no
    /// profile, and the pixels stay as stored.
    static func profile(primaries: Int, transfer: Int, chromaticities: () -> Chromaticities?) -> ColorProfile? {
        let gamma: Double?
        switch transfer {
        case 13, 1, 6, 14, 15, 2: gamma = nil
        case 8: gamma = 1
        case 4: gamma = 1 / 2.2
        case 5: gamma = 1 / 2.8
        default: return nil
        }
        guard primaries != 1 && primaries != 2 else { return ColorProfile.synthesized(gamma: gamma, chromaticities: nil) }
        guard let values = chromaticities(),
              values.white.y > 0, values.red.y > 0, values.green.y > 0, values.blue.y > 0 else {
            return nil   // primaries the container could not decode
        }
        return ColorProfile.synthesized(gamma: gamma, chromaticities: values)
    }
}
