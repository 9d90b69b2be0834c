import Foundation

/// Writes results to stdout and diagnostics to stderr, one line at a time,
/// from any task.
///
/// When stdout's reader has gone (`imago … | head`), the process ends as
/// a Unix tool killed by `SIGPIPE` does, quietly; another failure to write
/// the results is reported on stderr and ends the process with status 1.
/// Failures to write diagnostics are ignored.
public enum Output {
    private static let lock = NSLock()

    /// Prints a line on stdout.
    public static func line(_ text: String) {
        raw(text + "\n")
    }

    /// Writes text to stdout as it is.
    public static func raw(_ text: String) {
        lock.withLock {
            do {
                try FileHandle.standardOutput.write(contentsOf: Data(text.utf8))
            } catch {
                stdoutFailed(error)
            }
        }
    }

    /// Prints a line on stderr.
    public static func error(_ text: String) {
        lock.withLock {
            try? FileHandle.standardError.write(contentsOf: Data((text + "\n").utf8))
        }
    }

    /// Ends the process after a failed write to stdout.
    private static func stdoutFailed(_ error: any Error) -> Never {
        let underlying = (error as NSError).userInfo[NSUnderlyingErrorKey] as? NSError
        if underlying?.domain == NSPOSIXErrorDomain && underlying?.code == Int(EPIPE) {
            // The reader quit: die of SIGPIPE, which the networking code ignores.
            signal(SIGPIPE, SIG_DFL)
            raise(SIGPIPE)
        }
        try? FileHandle.standardError.write(contentsOf: Data("imago: cannot write the output: \(error)\n".utf8))
        exit(1)
    }

    /// Whether colour may be written: not when `NO_COLOR` is set to anything
    /// but the empty string (https://no-color.org).
    public static var colorEnabled: Bool {
        (ProcessInfo.processInfo.environment["NO_COLOR"] ?? "").isEmpty
    }

    /// Whether stderr is a terminal (progress bars are drawn only then).
    public static var stderrIsTerminal: Bool { isatty(STDERR_FILENO) == 1 }

    /// Whether stdout is a terminal.
    public static var stdoutIsTerminal: Bool { isatty(STDOUT_FILENO) == 1 }

    /// Writes raw text to stderr without a newline.
    public static func rawError(_ text: String) {
        lock.withLock {
            try? FileHandle.standardError.write(contentsOf: Data(text.utf8))
        }
    }
}

/// A one-line progress bar on stderr, drawn only when stderr is a terminal.
public final class ProgressBar: @unchecked Sendable {
    // @unchecked Sendable: every mutable field is guarded by `lock`.
    private let lock = NSLock()
    private let total: Int
    private let enabled: Bool
    private var done = 0
    private var failed = 0

    public init(total: Int) {
        self.total = total
        self.enabled = Output.stderrIsTerminal && total > 0
        draw()
    }

    /// Records one finished item.
    public func advance(succeeded: Bool) {
        lock.withLock {
            done += 1
            if !succeeded { failed += 1 }
        }
        draw()
    }

    /// Clears the bar.
    public func finish() {
        guard enabled else { return }
        Output.rawError("\r\u{1B}[2K")
    }

    private func draw() {
        guard enabled else { return }
        let (done, failed) = lock.withLock { (self.done, self.failed) }
        let width = 30
        let filled = total == 0 ? width : done * width / total
        let colour = Output.colorEnabled
        let fill = String(repeating: "█", count: filled), rest = String(repeating: "░", count: width - filled)
        let bar = colour ? "\u{1B}[32m\(fill)\u{1B}[0m\(rest)" : fill + rest
        let failures = failed == 0 ? "" : colour ? " \u{1B}[31m(\(failed) failed)\u{1B}[0m" : " (\(failed) failed)"
        Output.rawError("\r\u{1B}[2K\(bar) \(done)/\(total)" + failures)
    }
}
