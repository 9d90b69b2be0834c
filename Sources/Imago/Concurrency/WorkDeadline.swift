import Dispatch

/// A moment after which synchronous image work stops: the resampler, the
/// image operations (canvas, flatten, blur, sharpen, pixelate, trim,
/// composite) and the server's walk over an animation's frames check it
/// as they go.
///
/// Work runs under a deadline with ``run(_:)``: the operations inside stop
/// early once it passes (their partial results are thrown away), and
/// `run` then throws ``WorkDeadlineExceeded``, so a result made under a
/// deadline is always whole. Outside `run` nothing checks a deadline and
/// nothing stops.
///
/// ```swift
/// let deadline = WorkDeadline(secondsFromNow: 2)
/// let thumbnail = try deadline.run { image.resized(toFit: 256, height: 256) }
/// ```
///
/// The deadline is a task-local value, which synchronous code on any
/// thread (a Dispatch queue's included) reads where `run` bound it.
public struct WorkDeadline: Sendable, Hashable, Comparable {
    /// The moment, on the monotonic clock (`DispatchTime`'s uptime).
    public let uptimeNanoseconds: UInt64

    /// A deadline at a moment of the monotonic clock.
    public init(uptimeNanoseconds: UInt64) {
        self.uptimeNanoseconds = uptimeNanoseconds
    }

    /// A deadline `seconds` from now (at least now; infinite or huge values
    /// are the end of time).
    public init(secondsFromNow seconds: Double) {
        let now = DispatchTime.now().uptimeNanoseconds
        let nanoseconds = max(0, seconds) * 1e9
        self.uptimeNanoseconds = nanoseconds >= Double(UInt64.max - now) ? .max : now + UInt64(nanoseconds)
    }

    /// Whether the moment has come.
    public var hasPassed: Bool { DispatchTime.now().uptimeNanoseconds >= uptimeNanoseconds }

    /// Seconds until the moment; 0 once it has passed.
    public var secondsLeft: Double {
        let now = DispatchTime.now().uptimeNanoseconds
        return now >= uptimeNanoseconds ? 0 : Double(uptimeNanoseconds - now) / 1e9
    }

    public static func < (lhs: WorkDeadline, rhs: WorkDeadline) -> Bool { lhs.uptimeNanoseconds < rhs.uptimeNanoseconds }

    /// The deadline the running work is under, if any: set by ``run(_:)``.
    @TaskLocal public static var current: WorkDeadline?

    /// Whether the running work is under a deadline that has passed: what a
    /// long loop asks, every row or so, to stop early.
    @inlinable public static var currentHasPassed: Bool { current?.hasPassed ?? false }

    /// Throws when the running work's deadline has passed: for a step that
    /// would be wasted after it (an encode after a stopped resize).
    ///
    /// - Throws: ``WorkDeadlineExceeded``.
    public static func checkCurrent() throws(WorkDeadlineExceeded) {
        if let current, current.hasPassed { throw WorkDeadlineExceeded(deadline: current) }
    }

    /// `work`'s result, with this deadline as ``current`` (the earlier of
    /// the two when `run` is nested).
    ///
    /// - Throws: ``WorkDeadlineExceeded`` when the deadline has passed
    ///   before or after `work` (whose result is then dropped, since the
    ///   loops inside may have stopped early); else what `work` throws.
    public func run<T>(_ work: () throws -> T) throws -> T {
        let effective = min(self, Self.current ?? self)
        guard !effective.hasPassed else { throw WorkDeadlineExceeded(deadline: effective) }
        let value = try Self.$current.withValue(effective) { try work() }
        guard !effective.hasPassed else { throw WorkDeadlineExceeded(deadline: effective) }
        return value
    }
}

/// The error of work whose ``WorkDeadline`` passed before it was done.
public struct WorkDeadlineExceeded: Error, Sendable, Hashable, CustomStringConvertible {
    /// The deadline that passed.
    public let deadline: WorkDeadline

    /// Creates the error.
    public init(deadline: WorkDeadline) {
        self.deadline = deadline
    }

    public var description: String { "the work passed its deadline and was stopped" }
}
