import ChildProcesses
import Foundation

/// The `imago-harness` binary next to the test bundle, run to its end.
enum HarnessProcess {
    /// The built harness.
    static let binary: URL = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        .deletingLastPathComponent().appendingPathComponent("imago-harness")

    /// Runs the harness with `arguments` and returns its exit status and output.
    ///
    /// The exit is awaited, not waited for on a thread: a soak runs for a
    /// minute or more under the thread sanitizer, and two blocked test
    /// threads (as many as cores) stalled every other suite.
    static func run(_ arguments: [String]) async throws -> (status: Int32, stdout: String, stderr: String) {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("imago-harness-test-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let out = directory.appendingPathComponent("stdout"), err = directory.appendingPathComponent("stderr")
        try Data().write(to: out)
        try Data().write(to: err)
        let process = Process()
        process.executableURL = binary
        process.arguments = arguments
        process.standardOutput = try FileHandle(forWritingTo: out)
        process.standardError = try FileHandle(forWritingTo: err)
        try await process.runToExit()
        return (process.terminationStatus, try String(contentsOf: out, encoding: .utf8), try String(contentsOf: err, encoding: .utf8))
    }
}
