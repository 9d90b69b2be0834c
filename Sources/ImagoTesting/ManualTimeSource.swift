import Foundation
import Imago

/// A ``TimeSource`` that moves only when the test says, and whose waits
/// return at once: for time-to-live, HTTP freshness and back-off tests with
/// no sleeping.
///
/// ```swift
/// let time = ManualTimeSource()
/// let cache = ImageCache(configuration: .init(timeToLive: 60), time: time.timeSource)
/// time.advance(by: 61)                                   // the entry has expired
///
/// let loader = RetryingDataLoader(wrapping: mock, time: time.timeSource)
/// _ = try await loader.data(for: request)
/// #expect(time.sleeps == [3])                            // Retry-After: 3, not waited for
/// ```
public final class ManualTimeSource: Sendable {
    private struct State {
        var now: Date
        var sleeps: [TimeInterval] = []
    }

    private let state: Locked<State>

    /// Creates a clock reading `start` (default: 2001-01-01 00:00:00 UTC).
    public init(start: Date = Date(timeIntervalSinceReferenceDate: 0)) {
        state = Locked(State(now: start))
    }

    /// The current time.
    public var now: Date { state.withLock { $0.now } }

    /// Every wait asked for so far, in seconds, in order.
    public var sleeps: [TimeInterval] { state.withLock { $0.sleeps } }

    /// Moves the clock forward by `seconds`.
    public func advance(by seconds: TimeInterval) {
        precondition(seconds >= 0, "the clock cannot go back")
        state.withLock { $0.now.addTimeInterval(seconds) }
    }

    /// The ``TimeSource`` to inject: ``now`` as the time; a wait records its
    /// length, moves the clock forward by it and returns at once (after a
    /// `Task.yield()`), or throws `CancellationError` if the task is cancelled.
    public var timeSource: TimeSource {
        TimeSource(
            now: { self.now },
            sleep: { seconds in
                try Task.checkCancellation()
                self.state.withLock { state in
                    state.sleeps.append(max(0, seconds))
                    state.now.addTimeInterval(max(0, seconds))
                }
                await Task.yield()
            }
        )
    }
}
