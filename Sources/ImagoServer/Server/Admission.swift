#if Server
import Imago

/// Admits distinct jobs up to a limit and merges identical ones: a request
/// for a key already in progress joins it and takes no place, so ten
/// thousand requests for one image are one job, while a flood of distinct
/// images meets a bound instead of an unbounded queue.
final class Admission<Value: Sendable>: Sendable {
    /// What happened to a request.
    enum Decision {
        /// A new job started; await its value.
        case started(Task<Value, Never>)
        /// The request joined a job in progress.
        case joined(Task<Value, Never>)
        /// The limit is reached.
        case saturated
    }

    private let limit: Int
    private let jobs = Locked([String: Task<Value, Never>]())

    init(limit: Int) {
        self.limit = max(1, limit)
    }

    /// How many distinct jobs are in progress.
    var count: Int { jobs.withLock { $0.count } }

    /// Joins the job for `key`, or starts `work` for it when there is room.
    /// The job leaves the table when `work` returns.
    func admit(_ key: String, work: @escaping @Sendable () async -> Value) -> Decision {
        jobs.withLock { jobs in
            if let job = jobs[key] { return .joined(job) }
            guard jobs.count < limit else { return .saturated }
            // The job removes itself under the same lock, so it cannot
            // finish before it is in the table.
            let job = Task { [weak self] in
                let value = await work()
                self?.jobs.withLock { $0[key] = nil }
                return value
            }
            jobs[key] = job
            return .started(job)
        }
    }
}
#endif
