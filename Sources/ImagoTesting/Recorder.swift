import Imago

/// Collects what callbacks hand over, from any thread, and lets a test wait
/// for it: the lock box and the latch that tests of completion handlers
/// otherwise write by hand.
///
/// ```swift
/// let results = Recorder<Result<Image, any Error>>()
/// client.downloadImage(from: url, completion: results.record)
/// let first = await results.waitForValues(1)[0]   // or results.values at once, with an immediate queue
/// ```
public final class Recorder<Value: Sendable>: Sendable {
    private struct State {
        var values: [Value] = []
        var waiters: [(count: Int, continuation: CheckedContinuation<[Value], Never>)] = []
    }

    private let state = Locked(State())

    /// Creates a recorder with nothing recorded.
    public init() {}

    /// Records `value`, waking whoever waits for it.
    public func record(_ value: Value) {
        let (ready, values) = state.withLock { state -> ([CheckedContinuation<[Value], Never>], [Value]) in
            state.values.append(value)
            let count = state.values.count
            let ready = state.waiters.filter { $0.count <= count }.map(\.continuation)
            state.waiters.removeAll { $0.count <= count }
            return (ready, state.values)
        }
        for waiter in ready { waiter.resume(returning: values) }
    }

    /// Everything recorded, in order.
    public var values: [Value] { state.withLock { $0.values } }

    /// The last value recorded.
    public var last: Value? { state.withLock { $0.values.last } }

    /// How many values were recorded.
    public var count: Int { state.withLock { $0.values.count } }

    /// Suspends until at least `count` values were recorded, then returns
    /// all of them (at once, when they already were).
    @discardableResult
    public func waitForValues(_ count: Int = 1) async -> [Value] {
        await withCheckedContinuation { continuation in
            let ready = state.withLock { state -> [Value]? in
                if state.values.count >= count { return state.values }
                state.waiters.append((count, continuation))
                return nil
            }
            if let ready { continuation.resume(returning: ready) }
        }
    }
}
