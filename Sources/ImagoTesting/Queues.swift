import Imago

/// A ``Dispatching`` that runs work at once, on the caller's thread.
///
/// Use it to make completion handlers synchronous in tests.
public struct ImmediateQueue: Dispatching {
    /// Creates an immediate queue.
    public init() {}

    /// Runs `work` now.
    public func dispatch(_ work: @escaping @Sendable () -> Void) {
        work()
    }
}

/// A ``Dispatching`` that holds work until the test runs it.
///
/// ```swift
/// let queue = ManualQueue()
/// client.downloadImage(from: url) { result = $0 }   // completion queued
/// await queue.waitForWork()                         // no polling, no sleeps
/// queue.runAll()                                    // now it runs
/// ```
public final class ManualQueue: Dispatching {
    private struct State {
        var pending: [@Sendable () -> Void] = []
        var waiters: [(count: Int, continuation: CheckedContinuation<Void, Never>)] = []
    }

    private let state = Locked(State())

    /// Creates an empty queue.
    public init() {}

    /// Adds `work` to the end of the queue, waking whoever waits for it.
    public func dispatch(_ work: @escaping @Sendable () -> Void) {
        let ready = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.pending.append(work)
            let count = state.pending.count
            let ready = state.waiters.filter { $0.count <= count }.map(\.continuation)
            state.waiters.removeAll { $0.count <= count }
            return ready
        }
        for waiter in ready { waiter.resume() }
    }

    /// The number of work items waiting.
    public var pendingCount: Int { state.withLock { $0.pending.count } }

    /// Suspends until at least `count` items wait (returns at once when they
    /// already do): for work that arrives from another thread, as when a real
    /// loader or decoder finishes in the background.
    public func waitForWork(count: Int = 1) async {
        await withCheckedContinuation { continuation in
            let ready = state.withLock { state -> Bool in
                if state.pending.count >= count { return true }
                state.waiters.append((count, continuation))
                return false
            }
            if ready { continuation.resume() }
        }
    }

    /// Runs the oldest waiting item; returns `false` when there was none.
    @discardableResult
    public func runNext() -> Bool {
        let next = state.withLock { $0.pending.isEmpty ? nil : $0.pending.removeFirst() }
        guard let next else { return false }
        next()
        return true
    }

    /// Runs waiting items in order, including any they enqueue, until the
    /// queue is empty; returns how many ran.
    @discardableResult
    public func runAll() -> Int {
        var count = 0
        while runNext() { count += 1 }
        return count
    }
}
