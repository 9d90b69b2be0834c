import Dispatch
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Child processes for the tools' tests, waited for without blocking a
/// thread: the test runner has as many threads as cores, and every suite
/// shares them, so one test blocked in `waitUntilExit` or a pipe read for
/// a minute (a soak, a browser, a server under the thread sanitizer)
/// stalls all the others.
extension Process {
    /// Starts the process so that it ends with this one, however this one
    /// ends (a crash or a kill included): a test's child must not outlive
    /// the test run.
    ///
    /// On Linux the command runs through `setpriv --pdeathsig KILL`, which
    /// asks the kernel to kill it when its parent ends, then runs the
    /// command in its place (same process ID). The kernel's "parent" is the
    /// thread that started the child, so every child is started from one
    /// thread that lives as long as the process (a thread of Swift's pool
    /// may exit when idle, which would kill its children early).
    public func startTiedToThisProcess() throws {
        #if os(Linux)
        let setpriv = URL(fileURLWithPath: "/usr/bin/setpriv")
        if let executable = executableURL, FileManager.default.isExecutableFile(atPath: setpriv.path) {
            arguments = ["--pdeathsig", "KILL", "--", executable.path] + (arguments ?? [])
            executableURL = setpriv
        }
        #endif
        try SpawningThread.shared.run { try self.run() }
    }

    /// Starts the process (tied to this one, ``startTiedToThisProcess()``) and returns once it has exited.
    public func runToExit() async throws {
        try await withCheckedThrowingContinuation { (exited: CheckedContinuation<Void, any Error>) in
            terminationHandler = { _ in exited.resume() }
            do {
                try startTiedToThisProcess()
            } catch {
                terminationHandler = nil
                exited.resume(throwing: error)
            }
        }
        // Foundation's Process keeps itself alive through its run-loop source
        // (a retain cycle with the termination handler and the standard
        // streams) until `waitUntilExit` clears it; the child has exited, so
        // this returns at once and frees them (the address sanitizer's leak
        // check reports the cycle otherwise).
        waitUntilExit()
    }

    /// Returns once a process already started has exited (checked every 10 ms, suspending in between).
    public func exited() async {
        while isRunning { try? await Task.sleep(for: .milliseconds(10)) }
    }
}

/// The one thread every test child is started from: it never exits, so a
/// parent-death signal fires only when the whole process ends.
private final class SpawningThread: @unchecked Sendable {
    static let shared = SpawningThread()

    /// Guards `pending`; `@unchecked Sendable` because of it.
    private let condition = NSCondition()
    private var pending: [() -> Void] = []

    private init() {
        let thread = Thread { [self] in loop() }
        thread.name = "test child spawner"
        thread.start()
    }

    private func loop() -> Never {
        while true {
            condition.lock()
            while pending.isEmpty { condition.wait() }
            let next = pending.removeFirst()
            condition.unlock()
            next()
        }
    }

    /// Runs `body` on the thread and waits for it (a spawn takes milliseconds).
    func run(_ body: @escaping () throws -> Void) throws {
        let done = DispatchSemaphore(value: 0)
        nonisolated(unsafe) var failure: (any Error)?
        condition.lock()
        pending.append {
            do { try body() } catch { failure = error }
            done.signal()
        }
        condition.signal()
        condition.unlock()
        done.wait()
        if let failure { throw failure }
    }
}

/// Runs blocking `work` (a pipe read, a blocking socket) on a thread of
/// its own and returns its result, so no thread of the test runner waits.
public func offTheTestThreads<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread { continuation.resume(with: Result { try work() }) }.start()
    }
}

/// Whether this test binary links a sanitizer's runtime (thread or
/// address). The binaries built beside it (`imago`, the SVG child) then
/// link it too: their resident memory holds the sanitizer's shadow, and
/// they set no address-space limit of their own.
public enum SanitizerRuntime {
    public static var isLinked: Bool {
        let everywhere = UnsafeMutableRawPointer(bitPattern: 0)  // RTLD_DEFAULT
        return ["__tsan_init", "__asan_init"].contains { (name: String) in name.withCString { dlsym(everywhere, $0) } != nil }
    }
}
