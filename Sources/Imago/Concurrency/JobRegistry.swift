import Foundation

/// Shared jobs by identity: asking for a key that is in flight joins that
/// job instead of starting another. The one table of shared work in the
/// package: each pipeline stage has one, and so has the image server for
/// its renders.
///
/// A job runs at the highest priority of its requesters, holds one slot of
/// its ``WorkQueue`` around its own work, and is cancelled when the last
/// requester leaves (see ``SharedJob``).
package final class JobRegistry<Key: Hashable & Sendable, Value: Sendable>: Sendable {
    /// Thrown when starting a job would exceed the registry's limit.
    package struct LimitReached: Error {}

    /// A requester's place in a job: whether it started the job or joined it.
    package struct Ticket: Sendable {
        fileprivate let job: SharedJob<Value>
        fileprivate let subscriber: Int
        /// Whether this requester joined a job already in flight.
        package let joined: Bool
    }

    private struct State {
        var jobs: [Key: SharedJob<Value>] = [:]
        var started = 0
        var joined = 0
    }

    private let state = Locked(State())
    private let queue: WorkQueue
    private let limit: Int

    /// - Parameters:
    ///   - queue: The slots the jobs' own work runs in.
    ///   - limit: The most jobs in flight at once; a request that would start
    ///     one more throws ``LimitReached`` (joining is always possible).
    package init(queue: WorkQueue, limit: Int = .max) {
        self.queue = queue
        self.limit = max(1, limit)
    }

    /// How many jobs this registry has started (for tests and benchmarks of merging).
    package var startedCount: Int { state.withLock { $0.started } }
    /// How many requests joined a job already in flight instead of starting one.
    package var joinedCount: Int { state.withLock { $0.joined } }
    /// How many jobs are in flight.
    package var count: Int { state.withLock { $0.jobs.count } }

    /// The value for `key`: joins the job in flight, or starts one with `work`.
    package func value(
        for key: Key,
        subscription: JobSubscription,
        onProgress: (@Sendable (LoadingProgress) -> Void)? = nil,
        work: @escaping @Sendable (SharedJob<Value>) async throws -> Value
    ) async throws -> Value {
        try Task.checkCancellation()
        return try await value(of: enter(key, subscription: subscription, onProgress: onProgress, work: work))
    }

    /// Joins the job for `key`, or starts one with `work`, without waiting
    /// for it: for callers that need to know which happened.
    ///
    /// - Throws: ``LimitReached`` when a new job would exceed the limit.
    package func enter(
        _ key: Key,
        subscription: JobSubscription,
        onProgress: (@Sendable (LoadingProgress) -> Void)? = nil,
        work: @escaping @Sendable (SharedJob<Value>) async throws -> Value
    ) throws -> Ticket {
        let ticket = try state.withLock { state -> Ticket in
            if let job = state.jobs[key], let subscriber = job.subscribe(priority: subscription.priority, onProgress: onProgress) {
                state.joined += 1
                return Ticket(job: job, subscriber: subscriber, joined: true)
            }
            guard state.jobs.count < limit else { throw LimitReached() }
            state.started += 1
            let job = SharedJob<Value>(id: WorkQueue.makeID(), queue: queue) { [weak self] ended in
                self?.state.withLock { state in
                    if state.jobs[key] === ended { state.jobs[key] = nil }
                }
            }
            let subscriber = job.subscribe(priority: subscription.priority, onProgress: onProgress)!
            state.jobs[key] = job
            return Ticket(job: job, subscriber: subscriber, joined: false)
        }
        subscription.attach { [job = ticket.job, subscriber = ticket.subscriber] priority in job.setPriority(priority, for: subscriber) }
        if !ticket.joined { ticket.job.start(work) }
        return ticket
    }

    /// Waits for the value of the job `ticket` belongs to; cancelling the
    /// calling task leaves the job (which stops when nobody else wants it).
    package func value(of ticket: Ticket) async throws -> Value {
        try await ticket.job.value(for: ticket.subscriber)
    }
}
