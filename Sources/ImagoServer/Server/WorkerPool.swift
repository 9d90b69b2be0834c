#if Server
import Dispatch
import Imago

/// Runs CPU-bound work (processing, encoding) on at most `count` threads
/// at once, off Swift's cooperative pool; callers beyond that wait in order.
final class WorkerPool: Sendable {
    private struct State {
        var busy = 0
        var waiting: [CheckedContinuation<Void, Never>] = []
    }
    private let count: Int
    private let state = Locked(State())

    init(count: Int) {
        self.count = max(1, count)
    }

    /// How many jobs wait for a worker.
    var waitingCount: Int { state.withLock { $0.waiting.count } }

    /// Runs `work` on a worker thread when one is free.
    func run<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        await acquire()
        defer { release() }
        return try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global().async { continuation.resume(with: Result { try work() }) }
        }
    }

    private func acquire() async {
        await withCheckedContinuation { continuation in
            let now = state.withLock { state -> Bool in
                if state.busy < count { state.busy += 1; return true }
                state.waiting.append(continuation)
                return false
            }
            if now { continuation.resume() }
        }
    }

    private func release() {
        let next = state.withLock { state -> CheckedContinuation<Void, Never>? in
            // The slot passes straight to the next waiter, if any.
            if state.waiting.isEmpty { state.busy -= 1; return nil }
            return state.waiting.removeFirst()
        }
        next?.resume()
    }
}
#endif
