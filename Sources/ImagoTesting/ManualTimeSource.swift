import Imago

/// A clock that moves only when the test says, for time-to-live and
/// back-off tests with no sleeping.
///
/// ```swift
/// let clock = ManualTimeSource()
/// let cache = ImageCache(configuration: .init(timeToLive: .seconds(60)), time: clock.timeSource)
/// clock.advance(by: .seconds(61))
/// ```
public final class ManualTimeSource: Sendable {
    private let reading = Locked<Duration>(.zero)

    /// Creates a clock reading zero.
    public init() {}

    /// The current reading.
    public var now: Duration { reading.withLock { $0 } }

    /// Moves the clock forward.
    public func advance(by duration: Duration) {
        precondition(duration >= .zero, "a monotonic clock cannot go back")
        reading.withLock { $0 += duration }
    }

    /// The ``TimeSource`` to inject.
    public var timeSource: TimeSource {
        TimeSource { self.now }
    }
}
