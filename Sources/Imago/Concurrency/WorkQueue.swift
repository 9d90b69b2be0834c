/// Lets at most `maximumConcurrency` jobs run at once; waiting jobs start
/// by priority, then oldest job first: the one slot limit of the package.
/// One per pipeline stage; the image server's renders share the decode
/// stage's.
///
/// A job's age is its id (``makeID()`` hands them out in increasing order
/// as jobs are made), so a job that comes back for a second slot (the
/// server's render decodes in one, then resizes and encodes in another)
/// goes ahead of the jobs made after it, instead of queueing again behind
/// them: work already begun finishes first, which keeps the slowest
/// requests' waits short and holds fewer decoded images at once.
///
/// Every operation is O(1) or O(log n) in the number of waiters (a priority
/// change is O(n) in the worst case), so thousands of queued requests cost
/// nothing per release.
package final class WorkQueue: Sendable {
    private struct Waiter {
        var priority: ImageRequest.Priority
        /// The job's id: its age, the order it waits in.
        let order: UInt64
        let resumption: Resumption
    }

    /// What a waiter does with the slot it is given.
    private enum Resumption {
        /// An ``acquire(id:priority:)``: its task goes on, holding the slot.
        case task(CheckedContinuation<Void, any Error>)
        /// A ``perform(id:priority:on:_:)``: its work is dispatched by the
        /// thread that gave the slot back.
        case work(WorkItem)

        /// Tells the waiter it was cancelled before it got a slot.
        func cancel() {
            switch self {
            case .task(let continuation): continuation.resume(throwing: CancellationError())
            case .work(let item): item.run(true)
            }
        }
    }

    /// Work handed to the queue with its caller's continuation.
    private struct WorkItem: Sendable {
        /// Where the work runs.
        let dispatcher: any Dispatching
        /// Runs the work and resumes the caller with its result, or only
        /// resumes it with `CancellationError` when `cancelled`.
        let run: @Sendable (_ cancelled: Bool) -> Void
    }

    /// The ids waiting at one priority, oldest first. Entries go stale
    /// when their waiter leaves or moves to another level; they are skipped
    /// when reached.
    private struct Level {
        var entries: [(order: UInt64, id: UInt64)] = []
        var head = 0

        /// Inserts keeping the order of age (a moved waiter keeps its place in line).
        mutating func insert(order: UInt64, id: UInt64) {
            if entries.last.map({ $0.order < order }) ?? true {
                entries.append((order, id))
                return
            }
            var low = head, high = entries.count
            while low < high {
                let middle = (low + high) / 2
                if entries[middle].order < order { low = middle + 1 } else { high = middle }
            }
            if low < entries.count && entries[low].order == order { return }
            entries.insert((order, id), at: low)
        }

        /// Drops consumed entries once they are most of the storage.
        mutating func compact() {
            if head == entries.count {
                entries.removeAll(keepingCapacity: true)
                head = 0
            } else if head > 64 && head * 2 > entries.count {
                entries.removeFirst(head)
                head = 0
            }
        }
    }

    private struct State {
        var running = 0
        var waiters: [UInt64: Waiter] = [:]
        var levels = Array(repeating: Level(), count: ImageRequest.Priority.allCases.count)

        /// Adds a waiter under its job's id, in line by priority and age.
        mutating func wait(_ waiter: Waiter, id: UInt64) {
            precondition(waiters[id] == nil, "job \(id) is already waiting in this queue")
            waiters[id] = waiter
            levels[waiter.priority.rawValue].insert(order: waiter.order, id: id)
        }

        /// Removes and returns the most urgent waiter.
        mutating func popMostUrgent() -> Waiter? {
            for level in levels.indices.reversed() {
                while levels[level].head < levels[level].entries.count {
                    let entry = levels[level].entries[levels[level].head]
                    levels[level].head += 1
                    if let waiter = waiters[entry.id], waiter.order == entry.order, waiter.priority.rawValue == level {
                        waiters[entry.id] = nil
                        levels[level].compact()
                        return waiter
                    }
                }
                levels[level].compact()
            }
            return nil
        }
    }

    package let maximumConcurrency: Int
    private let state = Locked(State())
    private static let lastID = Locked<UInt64>(0)

    /// A new identity for a waiter, unique in the process, so that waiters
    /// from different registries can share one queue.
    package static func makeID() -> UInt64 {
        lastID.withLock { id in
            id += 1
            return id
        }
    }

    package init(maximumConcurrency: Int) {
        precondition(maximumConcurrency > 0, "a stage needs at least one worker")
        self.maximumConcurrency = maximumConcurrency
    }

    /// Waits for a slot. Throws `CancellationError` if the calling task is
    /// cancelled before it gets one. Every successful call needs one ``release()``.
    /// `id` comes from ``makeID()`` (the job's age, the order it waits in)
    /// and must not belong to another job waiting in this queue.
    package func acquire(id: UInt64, priority: ImageRequest.Priority) async throws {
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                switch enter(Waiter(priority: priority, order: id, resumption: .task(continuation)), id: id) {
                case nil: continuation.resume(throwing: CancellationError())
                case true?: continuation.resume()
                case false?: break
                }
            }
        } onCancel: {
            let waiter = state.withLock { $0.waiters.removeValue(forKey: id) }
            waiter?.resumption.cancel()
        }
    }

    /// Runs `work` on `dispatcher` in one slot, waiting for it at
    /// `priority`, under the calling task's ``WorkDeadline/current`` (none
    /// starts once it has passed), and returns its result.
    ///
    /// It does what ``acquire(id:priority:)``, a dispatch and ``release()``
    /// do, without their trips through the cooperative thread pool: the
    /// slot is given back on the worker thread as soon as `work` returns,
    /// and the work of a job waiting with work of its own is dispatched
    /// from there at once. So a slot never sits idle while the next job's
    /// task waits for a cooperative thread to dispatch it.
    ///
    /// - Throws: `CancellationError` when the calling task is cancelled
    ///   before the work starts; ``WorkDeadlineExceeded``; what `work` throws.
    package func perform<T: Sendable>(
        id: UInt64, priority: ImageRequest.Priority, on dispatcher: any Dispatching, _ work: @escaping @Sendable () throws -> T
    ) async throws -> T {
        try Task.checkCancellation()
        let deadline = WorkDeadline.current
        if let deadline, deadline.hasPassed { throw WorkDeadlineExceeded(deadline: deadline) }
        // Set by the cancellation handler; read by the work before it starts.
        let cancelled = Locked(false)
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
                let item = WorkItem(dispatcher: dispatcher) { isCancelled in
                    if isCancelled || cancelled.withLock({ $0 }) {
                        continuation.resume(throwing: CancellationError())
                        return
                    }
                    continuation.resume(with: Result { try deadline.map { try $0.run(work) } ?? work() })
                }
                switch enter(Waiter(priority: priority, order: id, resumption: .work(item)), id: id) {
                case nil: continuation.resume(throwing: CancellationError())
                case true?: start(item)
                case false?: break
                }
            }
        } onCancel: {
            cancelled.withLock { $0 = true }
            let waiter = state.withLock { $0.waiters.removeValue(forKey: id) }
            waiter?.resumption.cancel()
        }
    }

    /// Takes a free slot (`true`), or puts `waiter` in line (`false`);
    /// `nil` when the calling task is cancelled.
    private func enter(_ waiter: Waiter, id: UInt64) -> Bool? {
        state.withLock { state -> Bool? in
            // The cancellation flag is set before the handler runs, so
            // checking it under the lock leaves no gap.
            if Task.isCancelled { return nil }
            if state.running < maximumConcurrency {
                state.running += 1
                return true
            }
            state.wait(waiter, id: id)
            return false
        }
    }

    /// Runs `item`, which holds a slot, where it asked to run.
    private func start(_ item: WorkItem) {
        item.dispatcher.dispatch { self.run(item) }
    }

    /// Runs `item` holding a slot, then hands the slot on from this thread:
    /// a waiting job's work is dispatched at once (behind whatever else its
    /// queue holds, so other work on that queue is not starved), a waiting
    /// task resumed.
    private func run(_ item: WorkItem) {
        item.run(false)
        if let next = popOrRelease() { hand(to: next.resumption) }
    }

    /// The most urgent waiter, which takes over the caller's slot; `nil`
    /// when none waits, and the slot is free.
    private func popOrRelease() -> Waiter? {
        state.withLock { state -> Waiter? in
            guard let waiter = state.popMostUrgent() else {
                state.running -= 1
                return nil
            }
            return waiter
        }
    }

    /// Gives a slot to a waiter: its task goes on, or its work starts.
    private func hand(to resumption: Resumption) {
        switch resumption {
        case .task(let continuation): continuation.resume()
        case .work(let item): start(item)
        }
    }

    /// How many jobs wait for a slot.
    package var waitingCount: Int { state.withLock { $0.waiters.count } }

    /// Gives a slot back: the most urgent waiter takes it.
    package func release() {
        if let next = popOrRelease() { hand(to: next.resumption) }
    }

    /// Changes the priority of a waiting job; no effect once it runs. The
    /// job keeps its place by age within its new level.
    package func update(id: UInt64, priority: ImageRequest.Priority) {
        state.withLock { state in
            guard var waiter = state.waiters[id], waiter.priority != priority else { return }
            waiter.priority = priority
            state.waiters[id] = waiter
            state.levels[priority.rawValue].insert(order: waiter.order, id: id)
        }
    }

    /// Runs `body` holding one slot, waiting for it at `priority`.
    ///
    /// - Throws: `CancellationError` when the calling task is cancelled
    ///   while it waits; what `body` throws.
    package func withSlot<T: Sendable>(priority: ImageRequest.Priority = .normal, _ body: () async throws -> T) async throws -> T {
        try await acquire(id: Self.makeID(), priority: priority)
        defer { release() }
        try Task.checkCancellation()
        return try await body()
    }
}
