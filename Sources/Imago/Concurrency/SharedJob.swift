import Foundation

/// One piece of work shared by every caller that asks for the same key:
/// started by the first, cancelled when the last one leaves, running at the
/// highest priority any of them asks for.
package final class SharedJob<Value: Sendable>: Sendable {
    private struct Subscriber {
        var priority: ImageRequest.Priority
        var continuation: CheckedContinuation<Value, any Error>?
        var onProgress: (@Sendable (LoadingProgress) -> Void)?
    }

    private struct State {
        var subscribers: [Int: Subscriber] = [:]
        var nextSubscriber = 0
        var result: Result<Value, any Error>?
        var isCancelled = false
        var task: Task<Void, Never>?
        var priority: ImageRequest.Priority = .veryLow
        /// How many subscribers ask for each priority (by raw value): the
        /// highest is found in constant time, however many subscribers join.
        var subscribersByPriority = [Int](repeating: 0, count: ImageRequest.Priority.allCases.count)
        var observers: [@Sendable (ImageRequest.Priority) -> Void] = []
    }

    package let id: UInt64
    private let queue: WorkQueue
    private let state = Locked(State())
    private let onEnd: @Sendable (SharedJob<Value>) -> Void

    init(id: UInt64, queue: WorkQueue, onEnd: @escaping @Sendable (SharedJob<Value>) -> Void) {
        self.id = id
        self.queue = queue
        self.onEnd = onEnd
    }

    /// The highest priority among the subscribers.
    package var priority: ImageRequest.Priority { state.withLock { $0.priority } }

    /// Adds a subscriber; `nil` when the job already ended (the caller starts a new one).
    func subscribe(priority: ImageRequest.Priority, onProgress: (@Sendable (LoadingProgress) -> Void)?) -> Int? {
        state.withLock { state in
            guard state.result == nil, !state.isCancelled else { return nil }
            let id = state.nextSubscriber
            state.nextSubscriber += 1
            state.subscribers[id] = Subscriber(priority: priority, continuation: nil, onProgress: onProgress)
            state.subscribersByPriority[priority.rawValue] += 1
            return id
        }
    }

    /// Waits for the job's value; leaving (the caller's task cancelled) unsubscribes.
    func value(for subscriber: Int) async throws -> Value {
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                let immediate = state.withLock { state -> Result<Value, any Error>? in
                    guard state.subscribers[subscriber] != nil else { return .failure(CancellationError()) }
                    if let result = state.result { return result }
                    state.subscribers[subscriber]?.continuation = continuation
                    return nil
                }
                if let immediate { continuation.resume(with: immediate) }
            }
        } onCancel: {
            self.unsubscribe(subscriber)
        }
    }

    /// Changes a subscriber's priority.
    func setPriority(_ priority: ImageRequest.Priority, for subscriber: Int) {
        state.withLock { state in
            guard let old = state.subscribers[subscriber]?.priority else { return }
            state.subscribers[subscriber]?.priority = priority
            state.subscribersByPriority[old.rawValue] -= 1
            state.subscribersByPriority[priority.rawValue] += 1
        }
        recomputePriority()
    }

    /// Removes a subscriber; when none is left, the work is cancelled.
    func unsubscribe(_ subscriber: Int) {
        let (continuation, task, ended) = state.withLock { state -> (CheckedContinuation<Value, any Error>?, Task<Void, Never>?, Bool) in
            let removed = state.subscribers.removeValue(forKey: subscriber)
            if let removed { state.subscribersByPriority[removed.priority.rawValue] -= 1 }
            guard state.subscribers.isEmpty, state.result == nil, !state.isCancelled else {
                return (removed?.continuation, nil, false)
            }
            state.isCancelled = true
            defer { state.task = nil; state.observers = [] }
            return (removed?.continuation, state.task, true)
        }
        continuation?.resume(throwing: CancellationError())
        if ended {
            task?.cancel()
            onEnd(self)
        } else {
            recomputePriority()
        }
    }

    /// Calls `observer` now and whenever the job's priority changes.
    func observePriority(_ observer: @escaping @Sendable (ImageRequest.Priority) -> Void) {
        let priority = state.withLock { state in
            state.observers.append(observer)
            return state.priority
        }
        observer(priority)
    }

    /// Passes progress to every subscriber.
    func report(_ progress: LoadingProgress) {
        let handlers = state.withLock { $0.subscribers.values.compactMap(\.onProgress) }
        for handler in handlers { handler(progress) }
    }

    /// Runs `body` holding one of the stage's slots, waiting for one at the
    /// job's priority. Jobs take a slot only around their own work, never
    /// while they wait for another stage, so stages cannot starve each other.
    package func withSlot<T: Sendable>(_ body: () async throws -> T) async throws -> T {
        try await queue.acquire(id: id, priority: priority)
        defer { queue.release() }
        try Task.checkCancellation()
        return try await body()
    }

    /// Runs CPU-bound `work` on `dispatcher` in one of the stage's slots,
    /// waiting for one at the job's priority (``WorkQueue/perform(id:priority:on:_:)``):
    /// the worker thread hands the slot straight to the next job's work.
    package func perform<T: Sendable>(on dispatcher: any Dispatching, _ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await queue.perform(id: id, priority: priority, on: dispatcher, work)
    }

    /// Starts the work and delivers its result to every subscriber.
    func start(_ work: @escaping @Sendable (SharedJob<Value>) async throws -> Value) {
        recomputePriority()
        observePriority { [id, queue] priority in queue.update(id: id, priority: priority) }
        // Runs on the caller's thread up to the first suspension, so work
        // that answers at once has finished when `start` returns.
        let task = startImmediately {
            let result: Result<Value, any Error>
            do {
                result = .success(try await work(self))
            } catch {
                result = .failure(error)
            }
            self.finish(result)
        }
        let cancelled = state.withLock { state -> Bool in
            // A job that already finished keeps no task (it would only hold the closure).
            if state.result == nil { state.task = task }
            return state.isCancelled
        }
        if cancelled { task.cancel() }
    }

    private func finish(_ result: Result<Value, any Error>) {
        let continuations = state.withLock { state -> [CheckedContinuation<Value, any Error>]? in
            guard state.result == nil, !state.isCancelled else { return nil }
            state.result = result
            // The task captured the job; dropping it here breaks that cycle.
            state.task = nil
            state.observers = []
            let waiting = state.subscribers.values.compactMap(\.continuation)
            for key in state.subscribers.keys { state.subscribers[key]?.continuation = nil }
            return waiting
        }
        guard let continuations else { return }
        onEnd(self)
        for continuation in continuations { continuation.resume(with: result) }
    }

    private func recomputePriority() {
        let (changed, observers) = state.withLock { state -> (ImageRequest.Priority?, [@Sendable (ImageRequest.Priority) -> Void]) in
            let highest = state.subscribersByPriority.lastIndex { $0 > 0 }
            let priority = highest.flatMap(ImageRequest.Priority.init(rawValue:)) ?? state.priority
            guard priority != state.priority else { return (nil, []) }
            state.priority = priority
            return (priority, state.observers)
        }
        if let changed { for observer in observers { observer(changed) } }
    }
}
