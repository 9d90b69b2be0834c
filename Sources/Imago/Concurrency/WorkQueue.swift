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
        let continuation: CheckedContinuation<Void, any Error>
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
                let outcome = state.withLock { state -> Bool? in
                    // The cancellation flag is set before the handler runs, so
                    // checking it under the lock leaves no gap.
                    if Task.isCancelled { return nil }
                    if state.running < maximumConcurrency {
                        state.running += 1
                        return true
                    }
                    precondition(state.waiters[id] == nil, "job \(id) is already waiting in this queue")
                    state.waiters[id] = Waiter(priority: priority, order: id, continuation: continuation)
                    state.levels[priority.rawValue].insert(order: id, id: id)
                    return false
                }
                switch outcome {
                case nil: continuation.resume(throwing: CancellationError())
                case true?: continuation.resume()
                case false?: break
                }
            }
        } onCancel: {
            let waiter = state.withLock { $0.waiters.removeValue(forKey: id) }
            waiter?.continuation.resume(throwing: CancellationError())
        }
    }

    /// How many jobs wait for a slot.
    package var waitingCount: Int { state.withLock { $0.waiters.count } }

    /// Gives a slot back: the most urgent waiter takes it.
    package func release() {
        let next = state.withLock { state -> Waiter? in
            guard let waiter = state.popMostUrgent() else {
                state.running -= 1
                return nil
            }
            return waiter
        }
        next?.continuation.resume()
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
