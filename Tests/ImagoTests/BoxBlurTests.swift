import Imago
import Testing

/// The box blur's mean is a multiplication by a reciprocal instead of a
/// division: exact for every sum of every window the blur uses.
@Suite struct BoxBlurTests {
    @Test func theReciprocalGivesTheRoundedMeanOfEverySum() {
        // Every window with a reciprocal is exact (checked in full up to 1,001 and at the largest few),
        // and a wider one divides.
        for window in Array(stride(from: 1, through: 1001, by: 2)) + [4091, 4093, 4095] {
            let reciprocal = BoxBlur.reciprocal(of: window)
            for sum in 0...(255 * window) where BoxBlur.mean(sum, half: window / 2, reciprocal: reciprocal, window: window) != UInt8((sum + window / 2) / window) {
                Issue.record("window \(window), sum \(sum): \(BoxBlur.mean(sum, half: window / 2, reciprocal: reciprocal, window: window)) vs \((sum + window / 2) / window)")
                return
            }
        }
    }

    @Test func aWindowTooWideForTheReciprocalDivides() {
        #expect(BoxBlur.reciprocal(of: 4097) == 0)
        #expect(BoxBlur.mean(255 * 4097, half: 2048, reciprocal: 0, window: 4097) == 255)
        #expect(BoxBlur.mean(4097 / 2 + 1, half: 2048, reciprocal: 0, window: 4097) == 1)
    }
}
