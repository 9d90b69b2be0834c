/// Where time comes from, for caches and retries: a monotonic reading as a
/// duration since an arbitrary start. Tests pass a clock they move by hand
/// (`ImagoTesting`'s `ManualTimeSource`).
public struct TimeSource: Sendable {
    /// The current reading; never goes backwards.
    public var now: @Sendable () -> Duration

    /// Creates a time source from a reading function.
    public init(now: @escaping @Sendable () -> Duration) {
        self.now = now
    }

    /// The system's monotonic clock.
    public static let system: TimeSource = {
        let clock = ContinuousClock()
        let start = clock.now
        return TimeSource { clock.now - start }
    }()
}
