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
/// #expect(queue.pendingCount == 1)
/// queue.runAll()                                     // now it runs
/// ```
public final class ManualQueue: Dispatching {
    private let pending = Locked<[@Sendable () -> Void]>([])

    /// Creates an empty queue.
    public init() {}

    /// Adds `work` to the end of the queue.
    public func dispatch(_ work: @escaping @Sendable () -> Void) {
        pending.withLock { $0.append(work) }
    }

    /// The number of work items waiting.
    public var pendingCount: Int { pending.withLock { $0.count } }

    /// Runs the oldest waiting item; returns `false` when there was none.
    @discardableResult
    public func runNext() -> Bool {
        let next = pending.withLock { $0.isEmpty ? nil : $0.removeFirst() }
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
