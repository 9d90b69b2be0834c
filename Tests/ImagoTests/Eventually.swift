import Foundation

// Polling, for the few waits that have nothing to await. Everywhere else a
// test awaits an event: `MockDataLoader.waitForTask(for:)`, a held
// `MockDataTask`'s steps, `ImageDisplayTask.finished()`,
// `ManualQueue.waitForWork()`, a `Recorder`, a task's value. What is left
// to poll is state that changes on another task and announces nothing:
//
// - the pipeline's `statistics` counters (a request joining shared work);
// - `MockDataTask.isCancelled`, set when the code under test stops a load
//   (the cancel travels through the pipeline's jobs on their own tasks);
// - the n-th load of one URL, or how many loads have started
//   (`MockDataLoader.waitForTask(for:)` gives the first load of a URL);
// - `ImagePrefetcher.activeCount` (a prefetch announces no end);
// - `CapacityGates.waitingCount(at:)` (a caller queued on a gate), and
//   `WorkQueue.waitingCount` (a job queued for a slot).

/// What ``eventually(within:file:line:_:)`` throws when its condition never held.
struct ConditionNeverHeld: Error, CustomStringConvertible {
    let seconds: Double
    let file: String
    let line: Int
    var description: String { "the condition at \(file):\(line) did not hold within \(seconds) s" }
}

/// Waits until `condition` holds: yields to other tasks, and between rounds
/// suspends for a millisecond, so work on other threads (a loader's,
/// dispatch queues') gets the CPU even when many tests run at once. Throws
/// ``ConditionNeverHeld`` after `seconds`, so a broken expectation fails its
/// test instead of hanging the run. Only for the waits listed above.
func eventually(
    within seconds: Double = 10, file: String = #fileID, line: Int = #line, _ condition: () async throws -> Bool
) async throws {
    let deadline = Date().addingTimeInterval(seconds)
    while Date() < deadline {
        for _ in 0..<10 {
            if try await condition() { return }
            await Task.yield()
        }
        try? await Task.sleep(nanoseconds: 1_000_000)
    }
    if try await condition() { return }
    throw ConditionNeverHeld(seconds: seconds, file: file, line: line)
}
