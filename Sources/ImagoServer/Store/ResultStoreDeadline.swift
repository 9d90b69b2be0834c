#if Server
import Foundation
import Imago

/// A result-store operation that did not finish within the server's
/// ``ImageServerConfiguration/resultStoreTimeout``.
struct ResultStoreTimeout: Error, CustomStringConvertible {
    let seconds: Double
    var description: String { "the result store did not answer within \(seconds) s" }
}

/// The value of `operation`, or ``ResultStoreTimeout`` once `seconds` pass
/// first. The operation is then cancelled and left to end on its own: a
/// store that ignores cancellation (a hung connection) holds no caller.
func withinDeadline<Value: Sendable>(
    _ seconds: Double, _ operation: @escaping @Sendable () async throws -> Value
) async throws -> Value {
    let waiting = Locked<CheckedContinuation<Value, any Error>?>(nil)
    let tasks = Locked<(work: Task<Void, Never>?, timer: Task<Void, Never>?)>((nil, nil))
    return try await withCheckedThrowingContinuation { continuation in
        waiting.withLock { $0 = continuation }
        let timer = Task {
            try? await Task.sleep(for: .seconds(seconds))
            guard !Task.isCancelled, let continuation = waiting.withLock({ $0.take() }) else { return }
            tasks.withLock { $0.work }?.cancel()
            continuation.resume(throwing: ResultStoreTimeout(seconds: seconds))
        }
        let work = Task {
            let result: Result<Value, any Error>
            do { result = .success(try await operation()) } catch { result = .failure(error) }
            tasks.withLock { $0.timer }?.cancel()
            waiting.withLock { $0.take() }?.resume(with: result)
        }
        tasks.withLock { $0 = (work, timer) }
    }
}
#endif
