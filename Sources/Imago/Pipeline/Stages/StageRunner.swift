import Foundation

/// Told how much of the download a job waits for has arrived.
typealias ProgressHandler = @Sendable (LoadingProgress) -> Void

/// Runs the jobs of one pipeline stage and owns what every stage has in
/// common, so that a stage only says what its input is, what its work is
/// and how its failures read:
///
/// - merging: asking for a key in flight joins that job (``JobRegistry``);
/// - priority: a job runs at the highest priority of its requesters, and
///   the upstream work it waits for follows that priority;
/// - slots: the stage's own work holds one slot of its ``WorkQueue``, never
///   while the job waits upstream, so stages cannot starve each other; an
///   optional admission queue bounds whole jobs, from before the input is
///   fetched until the work ends;
/// - cancellation: `CancellationError` passes through unchanged; any other
///   error of the stage's own work goes through the stage's `failure`
///   mapping (upstream errors arrive already mapped, and pass through);
/// - progress: what upstream reports reaches every requester of the job;
/// - output: each job's output goes to `didProduce` once, before it is
///   delivered (the image stages hand it to the memory cache).
final class StageRunner<Key: Hashable & Sendable, Output: Sendable>: Sendable {
    /// Called once per job with its output, its key and the request that started it.
    typealias Produced = @Sendable (_ output: Output, _ key: Key, _ request: IdentifiedRequest) -> Void

    private let jobs: JobRegistry<Key, Output>
    private let admission: WorkQueue?
    private let didProduce: Produced?

    /// - Parameters:
    ///   - slots: Bounds the stage's own work.
    ///   - admission: Bounds whole jobs, waiting for their input included.
    ///   - didProduce: Receives each job's output.
    init(slots: WorkQueue, admission: WorkQueue? = nil, didProduce: Produced? = nil) {
        jobs = JobRegistry(queue: slots)
        self.admission = admission
        self.didProduce = didProduce
    }

    /// How many jobs the stage started.
    var startedCount: Int { jobs.startedCount }
    /// How many requests joined a job in flight instead of starting one.
    var joinedCount: Int { jobs.joinedCount }

    /// The output for `key`: joins the job in flight, or starts one that
    /// gets its input from upstream, then runs `work` on `workQueue` in one
    /// of the stage's slots (``SharedJob/perform(on:_:)``: the slot passes
    /// from one job's work to the next without a trip through a task), under the
    /// calling task's ``WorkDeadline``.
    ///
    /// - Parameters:
    ///   - input: Asks the upstream stage, with a subscription that follows
    ///     the job's priority and a progress handler that reaches every
    ///     requester. No slot is held meanwhile.
    ///   - work: The stage's own work: CPU-bound, off the cooperative threads.
    ///   - failure: The error to report for an error of `work`.
    func output<Input: Sendable>(
        for key: Key,
        of request: IdentifiedRequest,
        subscription: JobSubscription,
        onProgress: ProgressHandler?,
        on workQueue: any Dispatching,
        input: @escaping @Sendable (_ upstream: JobSubscription, _ progress: @escaping ProgressHandler) async throws -> Input,
        work: @escaping @Sendable (Input) throws -> Output,
        failure: @escaping @Sendable (any Error, Input) -> any Error
    ) async throws -> Output {
        try await jobs.value(for: key, subscription: subscription, onProgress: onProgress) { job in
            try await self.admitted(job) {
                let upstream = JobSubscription(priority: job.priority)
                job.observePriority { upstream.setPriority($0) }
                let input = try await input(upstream, job.report)
                return try await self.ownWork(of: job, key: key, request: request) {
                    try await job.perform(on: workQueue) { try work(input) }
                } failure: {
                    failure($0, input)
                }
            }
        }
    }

    /// The output for `key`, for a stage with no upstream (the data stage).
    func output(
        for key: Key,
        of request: IdentifiedRequest,
        subscription: JobSubscription,
        onProgress: ProgressHandler?,
        work: @escaping @Sendable (_ progress: @escaping ProgressHandler) async throws -> Output,
        failure: @escaping @Sendable (any Error) -> any Error
    ) async throws -> Output {
        try await jobs.value(for: key, subscription: subscription, onProgress: onProgress) { job in
            try await self.admitted(job) {
                try await self.ownWork(of: job, key: key, request: request) {
                    try await job.withSlot { try await work(job.report) }
                } failure: {
                    failure($0)
                }
            }
        }
    }

    /// Runs `body` holding an admission slot, when the stage has an admission queue.
    private func admitted(_ job: SharedJob<Output>, _ body: () async throws -> Output) async throws -> Output {
        guard let admission else { return try await body() }
        job.observePriority { [id = job.id] priority in admission.update(id: id, priority: priority) }
        try await admission.acquire(id: job.id, priority: job.priority)
        defer { admission.release() }
        return try await body()
    }

    /// Runs the stage's own work (which takes one of its slots), maps its
    /// failure, and hands the output to ``didProduce``.
    private func ownWork(
        of job: SharedJob<Output>,
        key: Key,
        request: IdentifiedRequest,
        _ work: () async throws -> Output,
        failure: (any Error) -> any Error
    ) async throws -> Output {
        let output: Output
        do {
            output = try await work()
        } catch is CancellationError {
            throw CancellationError()
        } catch {
            throw failure(error)
        }
        didProduce?(output, key, request)
        return output
    }
}

extension Dispatching {
    /// Runs CPU-bound stage work (decoding, processing) on this queue, off
    /// the cooperative thread pool, and waits for its result. The calling
    /// task's ``WorkDeadline/current`` carries over: the work runs under it
    /// (``WorkDeadline/run(_:)``), and none starts once it has passed.
    package func perform<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try Task.checkCancellation()
        let deadline = WorkDeadline.current
        if let deadline, deadline.hasPassed { throw WorkDeadlineExceeded(deadline: deadline) }
        return try await withCheckedThrowingContinuation { continuation in
            dispatch { continuation.resume(with: Result { try deadline.map { try $0.run(work) } ?? work() }) }
        }
    }
}
