import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A child process that swaps two names (`renameat2` with
/// `RENAME_EXCHANGE`) as fast as it can, for races against code that must
/// not be led out of a folder by a component swapped for a link.
public final class NameSwapper {
    private let process = Process()

    /// Starts the loop over `first` and `second` (tied to this process) and
    /// returns once it runs.
    public init(_ first: URL, _ second: URL) throws {
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-c", """
            import ctypes, sys
            libc = ctypes.CDLL(None, use_errno=True)
            a, b = sys.argv[1].encode(), sys.argv[2].encode()
            print("swapping", flush=True)
            while True:
                if libc.renameat2(-100, a, -100, b, 2) != 0:
                    sys.exit(ctypes.get_errno())
            """, first.path, second.path]
        let output = Pipe()
        process.standardOutput = output
        try process.startTiedToThisProcess()
        _ = output.fileHandleForReading.readData(ofLength: 9)   // "swapping\n": the loop has started
    }

    /// Whether the loop still runs (it stops at the first failed swap).
    public var isRunning: Bool { process.isRunning }

    /// Stops the loop and waits for it (SIGKILL: SIGTERM may be blocked in a child of a test process).
    public func stop() {
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }
}
