import Foundation

// Helpers every test target shares (the library's, the server's and the
// tools' integration tests). No test framework is imported: a helper that
// fails throws, and the test that called it fails with the error.

/// What ``eventually(within:file:line:_:)`` throws when its condition never held.
public struct ConditionNeverHeld: Error, CustomStringConvertible {
    public let seconds: Double
    public let file: String
    public let line: Int
    public var description: String { "the condition at \(file):\(line) did not hold within \(seconds) s" }
}

/// Waits until `condition` holds: yields to other tasks, and between rounds
/// suspends for a millisecond, so work on other threads (a loader's,
/// dispatch queues', a server's) gets the CPU even when many tests run at
/// once. Throws ``ConditionNeverHeld`` after `seconds`, so a broken
/// expectation fails its test instead of hanging the run.
public func eventually(
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
