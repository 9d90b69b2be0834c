import Foundation

/// A value behind a lock, for small shared state.
///
/// `Synchronization.Mutex` would be the natural choice, but on Linux the
/// thread sanitizer cannot see its locking (Swift 6.3: every access behind
/// it is reported as a race), and the test suite must run clean under the
/// sanitizer. `NSLock` is a pthread mutex, which the sanitizer understands.
///
/// `@unchecked Sendable`: `value` is only touched while `lock` is held.
package final class Locked<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value

    /// Creates the lock around `value`.
    package init(_ value: Value) {
        self.value = value
    }

    /// Runs `body` with exclusive access to the value.
    package func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
