import Dispatch

/// Something that runs work later: the seam for "which queue do completions
/// run on".
///
/// `DispatchQueue` conforms. `ImagoTesting` ships `ImmediateQueue` (runs the
/// work at once, on the caller's thread) and `ManualQueue` (holds the work
/// until the test runs it).
public protocol Dispatching: Sendable {
    /// Schedules `work` to run.
    func dispatch(_ work: @escaping @Sendable () -> Void)
}

extension DispatchQueue: Dispatching {
    /// Runs `work` asynchronously on this queue.
    public func dispatch(_ work: @escaping @Sendable () -> Void) {
        async(execute: work)
    }
}
