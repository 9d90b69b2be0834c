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
    /// Starts the process and returns once it has exited.
    public func runToExit() async throws {
        try await withCheckedThrowingContinuation { (exited: CheckedContinuation<Void, any Error>) in
            terminationHandler = { _ in exited.resume() }
            do {
                try run()
            } catch {
                terminationHandler = nil
                exited.resume(throwing: error)
            }
        }
    }

    /// Returns once a process already started has exited (checked every 10 ms, suspending in between).
    public func exited() async {
        while isRunning { try? await Task.sleep(for: .milliseconds(10)) }
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
