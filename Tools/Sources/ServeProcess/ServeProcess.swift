import ChildProcesses
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A running `imago serve`, for the tools' tests: started tied to the test
/// process, on a free port, and stopped (or killed) when the test is done.
public final class ServeProcess: @unchecked Sendable {
    /// The `imago` executable beside the running test bundle (SwiftPM builds both into one folder).
    public static let defaultExecutable: URL = {
        let running = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        return running.deletingLastPathComponent().appendingPathComponent("imago")
    }()

    public let process = Process()
    /// The port it listens on (0 on a Unix socket).
    public private(set) var port = 0
    /// The Unix socket it listens on (`--network unix`), else `nil`.
    public private(set) var socketPath: String?
    /// Where its standard error goes (deleted with this object).
    public let stderr: URL
    /// Standard error when it is a pipe nobody reads (a stuck log collector).
    public private(set) var unreadStandardError: Pipe?

    /// Starts `imago serve ARGUMENTS` and returns once it listens (awaited:
    /// no thread of the test runner waits). Before `arguments`: `--port 0
    /// --no-cache --timeout 120 --download-timeout 120` (a long render
    /// deadline and download timeout unless the test sets its own: the last
    /// one given wins). `descriptorLimit` starts it
    /// under that `RLIMIT_NOFILE` (through util-linux's `prlimit`, which
    /// sets it and execs imago as the same process).
    public init(_ arguments: [String], environment: [String: String] = [:], replacingEnvironment: Bool = false,
                standardErrorUnread: Bool = false, descriptorLimit: (soft: Int, hard: Int)? = nil,
                executable: URL = ServeProcess.defaultExecutable) async throws {
        stderr = FileManager.default.temporaryDirectory.appendingPathComponent("imago-serve-\(UUID().uuidString).log")
        try Data().write(to: stderr)
        let serve = ["serve", "--port", "0", "--no-cache", "--timeout", "120", "--download-timeout", "120"] + arguments
        if let limit = descriptorLimit {
            process.executableURL = URL(fileURLWithPath: "/usr/bin/prlimit")
            process.arguments = ["--nofile=\(limit.soft):\(limit.hard)", executable.path] + serve
        } else {
            process.executableURL = executable
            process.arguments = serve
        }
        process.environment = replacingEnvironment ? environment : ProcessInfo.processInfo.environment.merging(environment) { $1 }
        let output = Pipe()
        process.standardOutput = output
        if standardErrorUnread {
            let pipe = Pipe()
            unreadStandardError = pipe
            process.standardError = pipe
        } else {
            process.standardError = try FileHandle(forWritingTo: stderr)
        }
        try process.startTiedToThisProcess()
        // The first line on stdout says where it listens.
        let text = try await offTheTestThreads { ServeProcess.firstLine(of: output) }
        if text.hasPrefix("listening on unix:") {
            socketPath = String(text.dropFirst("listening on unix:".count))
            return
        }
        guard text.hasPrefix("listening on http://"), let port = Int(text.split(separator: ":").last ?? "") else {
            process.terminate()
            throw NoListeningLine(line: text, log: log)
        }
        self.port = port
    }

    /// What it has written to standard error so far.
    public var log: String { (try? String(contentsOf: stderr, encoding: .utf8)) ?? "" }

    /// `http://127.0.0.1:PORT` followed by `path`.
    public func url(_ path: String) -> URL { URL(string: "http://127.0.0.1:\(port)\(path)")! }

    /// A GET of `path`.
    public func get(_ path: String) async throws -> (status: Int, body: Data, headers: [AnyHashable: Any]) {
        let (data, response) = try await URLSession.shared.data(from: url(path))
        let http = response as! HTTPURLResponse
        return (http.statusCode, data, http.allHeaderFields)
    }

    /// Sends SIGTERM and awaits the exit status.
    public func stop() async -> Int32 {
        if process.isRunning { kill(process.processIdentifier, SIGTERM) }
        await process.exited()
        return process.terminationStatus
    }

    deinit {
        if process.isRunning { process.terminate() }
        // Its log has been read by whatever failed; nothing is left in the temporary folder.
        try? FileManager.default.removeItem(at: stderr)
    }

    /// `imago serve` ended or wrote something else before listening.
    public struct NoListeningLine: Error, CustomStringConvertible {
        public let line: String
        public let log: String
        public var description: String { "no listening line: \"\(line)\"; stderr: \(log)" }
    }

    /// The first line a process writes to `pipe`, trimmed (what there is, if it ends before a newline).
    public static func firstLine(of pipe: Pipe) -> String {
        var line = Data()
        while !line.contains(UInt8(ascii: "\n")) {
            let chunk = pipe.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            line.append(chunk)
        }
        return String(decoding: line, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
