#if Server
import Foundation

extension ProcessingOptions {
    /// The request headers client hints come from, as `Vary` names them.
    static let clientHintHeaders = ["Sec-Ch-Dpr", "Dpr", "Sec-Ch-Width", "Width"]

    /// Sets what the path leaves unset from the client's hints, as imgproxy
    /// does: the device pixel ratio from `Sec-CH-DPR` or `DPR` (above 0, at
    /// most 8), and the width from `Sec-CH-Width` or `Width` (a whole
    /// number above 0) divided by that ratio. Hints that do not parse are
    /// ignored.
    mutating func applyClientHints(_ headers: RequestHeaders) {
        let ratio = ["sec-ch-dpr", "dpr"].lazy.compactMap { headers[$0].flatMap { Double($0.trimmingCharacters(in: .whitespaces)) } }
            .first { $0 > 0 && $0 <= 8 && $0.isFinite }
        let width = ["sec-ch-width", "width"].lazy.compactMap { headers[$0].flatMap { Int($0.trimmingCharacters(in: .whitespaces)) } }
            .first { $0 > 0 }
        guard ratio != nil || width != nil else { return }
        if dpr == 1, let ratio { dpr = ratio }
        if self.width == 0, let width {
            self.width = min(ImageServerPath.maximumOutputSide, max(1, Int((Double(width) / (ratio ?? 1)).rounded())))
        }
    }
}
#endif
