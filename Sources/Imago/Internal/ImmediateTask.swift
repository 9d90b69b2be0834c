/// Starts `operation` in a new task that runs on the caller's thread until
/// its first real suspension (a download in flight, a hop to a work queue),
/// instead of being scheduled for later.
///
/// This is what lets a load whose every stage answers at once (a memory
/// hit, a mock loader, an ``Dispatching`` that runs work immediately)
/// finish before the call that started it returns: the synchronous,
/// "immediate queue" style of test. With real loaders and queues it changes
/// nothing but where the first few microseconds run.
///
/// Where the runtime has no `Task.immediate` (Apple systems before the 2025
/// releases) the task is scheduled as usual.
@discardableResult
func startImmediately<Success: Sendable>(
    _ operation: @escaping @Sendable () async throws -> Success
) -> Task<Success, any Error> {
    if #available(macOS 26.0, iOS 26.0, tvOS 26.0, watchOS 26.0, visionOS 26.0, *) {
        return Task.immediate { try await operation() }
    }
    return Task { try await operation() }
}

/// ``startImmediately(_:)`` for work that cannot fail.
@discardableResult
func startImmediately(_ operation: @escaping @Sendable () async -> Void) -> Task<Void, Never> {
    if #available(macOS 26.0, iOS 26.0, tvOS 26.0, watchOS 26.0, visionOS 26.0, *) {
        return Task.immediate { await operation() }
    }
    return Task { await operation() }
}
