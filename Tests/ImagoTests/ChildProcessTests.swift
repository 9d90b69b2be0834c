#if os(Linux)
import ChildProcesses
import Foundation
import Testing

/// Test children end with the test process: a crashed or killed test run
/// leaves no server, worker or loop behind.
@Suite struct ChildProcessTests {
    /// The kernel is asked to kill the child when its parent ends.
    @Test func aTiedChildHasAParentDeathSignal() async throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
        process.arguments = ["--dump"]
        let output = Pipe()
        process.standardOutput = output
        try await process.runToExit()
        let dump = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(dump.contains("Parent death signal: KILL"), "\(dump)")
    }

    /// The signal follows the thread that started the child; a child
    /// started from a thread that then ends stays alive, because every
    /// child is started from one thread that lives as long as the process.
    @Test func aChildOutlivesTheThreadThatAskedForIt() async throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sleep")
        process.arguments = ["600"]
        let started = DispatchSemaphore(value: 0)
        let thread = Thread {
            try? process.startTiedToThisProcess()
            started.signal()
        }
        thread.start()
        try await offTheTestThreads { started.wait() }
        defer { process.terminate() }
        try await Task.sleep(for: .milliseconds(300))
        #expect(process.isRunning, "the child was killed when the thread that asked for it ended")
    }
}
#endif
