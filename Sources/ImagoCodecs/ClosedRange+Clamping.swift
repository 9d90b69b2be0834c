/// The encoders' settings are clamped to their ranges, never refused.
extension ClosedRange<Int> {
    /// `value`, or the nearer end of the range when it lies outside.
    func clamping(_ value: Int) -> Int {
        Swift.min(Swift.max(value, lowerBound), upperBound)
    }
}
