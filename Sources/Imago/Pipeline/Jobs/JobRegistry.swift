import Foundation

/// The jobs of one stage, by identity: asking for a key that is in flight
/// joins that job instead of starting another.
final class JobRegistry<Key: Hashable & Sendable, Value: Sendable>: Sendable {
    private struct State {
        var jobs: [Key: SharedJob<Value>] = [:]
        var nextID: UInt64 = 0
        var started = 0
        var joined = 0
    }

    private let state = Locked(State())
    private let queue: WorkQueue

    init(queue: WorkQueue) {
        self.queue = queue
    }

    /// How many jobs this registry has started (for tests and benchmarks of merging).
    var startedCount: Int { state.withLock { $0.started } }
    /// How many requests joined a job already in flight instead of starting one.
    var joinedCount: Int { state.withLock { $0.joined } }

    /// The value for `key`: joins the job in flight, or starts one with `work`.
    func value(
        for key: Key,
        subscription: JobSubscription,
        onProgress: (@Sendable (LoadingProgress) -> Void)? = nil,
        work: @escaping @Sendable (SharedJob<Value>) async throws -> Value
    ) async throws -> Value {
        try Task.checkCancellation()
        let (job, subscriber, isNew) = state.withLock { state -> (SharedJob<Value>, Int, Bool) in
            if let job = state.jobs[key], let subscriber = job.subscribe(priority: subscription.priority, onProgress: onProgress) {
                state.joined += 1
                return (job, subscriber, false)
            }
            state.nextID += 1
            state.started += 1
            let job = SharedJob<Value>(id: state.nextID, queue: queue) { [weak self] ended in
                self?.state.withLock { state in
                    if state.jobs[key] === ended { state.jobs[key] = nil }
                }
            }
            let subscriber = job.subscribe(priority: subscription.priority, onProgress: onProgress)!
            state.jobs[key] = job
            return (job, subscriber, true)
        }
        subscription.attach { priority in job.setPriority(priority, for: subscriber) }
        if isNew { job.start(work) }
        return try await job.value(for: subscriber)
    }
}
