import Foundation

/// Where Imago's time comes from: the one clock seam for every stage.
///
/// ``now`` is the wall-clock time, for HTTP freshness (`max-age`, `Expires`,
/// `Retry-After` dates) and memory-cache lifetimes; ``sleep`` waits, for the
/// back-off between retries. Tests pass `ImagoTesting`'s `ManualTimeSource`,
/// which they move by hand and whose waits return at once:
///
/// ```swift
/// let time = ManualTimeSource()
/// let cache = ImageCache(configuration: .init(timeToLive: 60), time: time.timeSource)
/// time.advance(by: 61)
/// ```
///
/// Both are plain `Date` and `TimeInterval` values, so the seam works back to
/// the oldest OS versions Swift concurrency supports.
public struct TimeSource: Sendable {
    /// The current time.
    public var now: @Sendable () -> Date
    /// Waits `seconds`; throws `CancellationError` when the calling task is
    /// cancelled first.
    public var sleep: @Sendable (_ seconds: TimeInterval) async throws -> Void

    /// Creates a time source from its two functions.
    public init(
        now: @escaping @Sendable () -> Date,
        sleep: @escaping @Sendable (_ seconds: TimeInterval) async throws -> Void
    ) {
        self.now = now
        self.sleep = sleep
    }

    /// The system's clock and `Task.sleep`.
    public static let system = TimeSource(
        now: { Date() },
        sleep: { seconds in
            guard seconds > 0 else { return try Task.checkCancellation() }
            try await Task.sleep(nanoseconds: UInt64(min(seconds, 1e9) * 1e9))
        }
    )
}
