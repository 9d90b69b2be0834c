import Foundation

/// Writes results to stdout and diagnostics to stderr, one line at a time,
/// from any task.
public enum Output {
    private static let lock = NSLock()

    /// Prints a line on stdout.
    public static func line(_ text: String) {
        lock.withLock {
            FileHandle.standardOutput.write(Data((text + "\n").utf8))
        }
    }

    /// Prints a line on stderr.
    public static func error(_ text: String) {
        lock.withLock {
            FileHandle.standardError.write(Data((text + "\n").utf8))
        }
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
            FileHandle.standardError.write(Data(text.utf8))
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
