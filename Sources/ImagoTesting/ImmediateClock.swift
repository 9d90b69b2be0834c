import Imago

/// A `Clock` whose sleeps return at once, moving its time forward by the
/// amount asked and recording it: for retry and back-off tests that check
/// the waits without waiting.
///
/// ```swift
/// let clock = ImmediateClock()
/// let loader = RetryingDataLoader(wrapping: mock, clock: clock)
/// _ = try await loader.data(for: request)
/// #expect(clock.sleeps == [.seconds(3)])
/// ```
public final class ImmediateClock: Clock, Sendable {
    /// A point in the clock's time: the time passed since it was created.
    public struct Instant: InstantProtocol {
        /// The time since the clock was created.
        public var offset: Duration

        public func advanced(by duration: Duration) -> Instant { Instant(offset: offset + duration) }
        public func duration(to other: Instant) -> Duration { other.offset - offset }
        public static func < (lhs: Instant, rhs: Instant) -> Bool { lhs.offset < rhs.offset }
    }

    private struct State {
        var now = Instant(offset: .zero)
        var sleeps: [Duration] = []
    }

    private let state = Locked(State())

    /// Creates a clock at time zero.
    public init() {}

    /// The current time.
    public var now: Instant { state.withLock { $0.now } }

    /// The smallest step: none.
    public var minimumResolution: Duration { .zero }

    /// Every sleep asked for so far, in order.
    public var sleeps: [Duration] { state.withLock { $0.sleeps } }

    /// Moves time to `deadline` (if later) and returns; throws
    /// `CancellationError` if the calling task is cancelled.
    public func sleep(until deadline: Instant, tolerance: Duration?) async throws {
        try Task.checkCancellation()
        state.withLock { state in
            state.sleeps.append(max(.zero, state.now.duration(to: deadline)))
            if deadline > state.now { state.now = deadline }
        }
        await Task.yield()
    }
}
