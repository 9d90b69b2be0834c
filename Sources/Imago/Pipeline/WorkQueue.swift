
/// Lets at most `maximumConcurrency` jobs run at once; waiting jobs start
/// by priority, then in arrival order. One per pipeline stage.
final class WorkQueue: Sendable {
    private struct Waiter {
        let id: UInt64
        var priority: ImageRequest.Priority
        let order: UInt64
        let continuation: CheckedContinuation<Void, any Error>
    }

    private struct State {
        var running = 0
        var waiters: [Waiter] = []
        var order: UInt64 = 0
    }

    let maximumConcurrency: Int
    private let state = Locked(State())

    init(maximumConcurrency: Int) {
        precondition(maximumConcurrency > 0, "a stage needs at least one worker")
        self.maximumConcurrency = maximumConcurrency
    }

    /// Waits for a slot. Throws `CancellationError` if the calling task is
    /// cancelled before it gets one. Every successful call needs one ``release()``.
    func acquire(id: UInt64, priority: ImageRequest.Priority) async throws {
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
                    state.order += 1
                    state.waiters.append(Waiter(id: id, priority: priority, order: state.order, continuation: continuation))
                    return false
                }
                switch outcome {
                case nil: continuation.resume(throwing: CancellationError())
                case true?: continuation.resume()
                case false?: break
                }
            }
        } onCancel: {
            let waiter = state.withLock { state -> Waiter? in
                guard let index = state.waiters.firstIndex(where: { $0.id == id }) else { return nil }
                return state.waiters.remove(at: index)
            }
            waiter?.continuation.resume(throwing: CancellationError())
        }
    }

    /// Gives a slot back: the most urgent waiter takes it.
    func release() {
        let next = state.withLock { state -> Waiter? in
            guard let index = state.waiters.indices.max(by: { a, b in
                let (x, y) = (state.waiters[a], state.waiters[b])
                return x.priority != y.priority ? x.priority < y.priority : x.order > y.order
            }) else {
                state.running -= 1
                return nil
            }
            return state.waiters.remove(at: index)
        }
        next?.continuation.resume()
    }

    /// Changes the priority of a waiting job; no effect once it runs.
    func update(id: UInt64, priority: ImageRequest.Priority) {
        state.withLock { state in
            if let index = state.waiters.firstIndex(where: { $0.id == id }) {
                state.waiters[index].priority = priority
            }
        }
    }
}
