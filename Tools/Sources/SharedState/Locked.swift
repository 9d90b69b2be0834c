import Foundation

/// A value behind a lock, for the tools' small shared state.
///
/// The library keeps its own (package-level) lock; a second package cannot
/// see it, so the tools have this one. `NSLock` rather than
/// `Synchronization.Mutex`: the thread sanitizer understands pthread mutexes
/// on Linux, and the tools build for every OS the library supports.
///
/// `@unchecked Sendable`: `value` is only touched while `lock` is held.
public final class Locked<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value

    /// Creates the lock around `value`.
    public init(_ value: Value) {
        self.value = value
    }

    /// Runs `body` with exclusive access to the value.
    public func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
