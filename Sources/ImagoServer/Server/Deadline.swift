#if Server
import Foundation
import Imago

/// A result-store operation that did not finish within the server's
/// ``ImageServerConfiguration/resultStoreTimeout``.
struct ResultStoreTimeout: Error, CustomStringConvertible {
    let seconds: Double
    var description: String { "the result store did not answer within \(seconds) s" }
}

/// The value of `operation`, or `timeout(seconds)`'s error once `seconds`
/// pass first (``ResultStoreTimeout`` unless told). The operation is then
/// cancelled and left to end on its own: an operation that ignores
/// cancellation (a hung connection, a render in a work queue) holds no caller.
func withinDeadline<Value: Sendable>(
    _ seconds: Double, timeout: @escaping @Sendable (Double) -> any Error = { ResultStoreTimeout(seconds: $0) },
    _ operation: @escaping @Sendable () async throws -> Value
) async throws -> Value {
    let waiting = Locked<CheckedContinuation<Value, any Error>?>(nil)
    let tasks = Locked<(work: Task<Void, Never>?, timer: Task<Void, Never>?)>((nil, nil))
    return try await withCheckedThrowingContinuation { continuation in
        waiting.withLock { $0 = continuation }
        let timer = Task {
            try? await Task.sleep(for: .seconds(seconds))
            guard !Task.isCancelled, let continuation = waiting.withLock({ $0.take() }) else { return }
            tasks.withLock { $0.work }?.cancel()
            continuation.resume(throwing: timeout(seconds))
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
