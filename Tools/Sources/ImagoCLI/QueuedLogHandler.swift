import Foundation
import Logging
import Metrics

/// A log handler for the server: each line goes into a bounded queue that
/// one thread of its own writes out, so a reader that stops reading (a
/// stuck log collector on the other end of a pipe) never blocks the code
/// that logs. When the queue is full, lines are dropped and counted
/// (`imago_log_lines_dropped`) instead.
///
/// Lines look like swift-log's `StreamLogHandler`'s:
/// `2026-11-26T04:15:53+0000 info imago: key=value [Module] message`.
struct QueuedLogHandler: LogHandler {
    var logLevel: Logger.Level = .info
    var metadata: Logger.Metadata = [:]
    var metadataProvider: Logger.MetadataProvider?
    let label: String
    let queue: LogQueue

    init(label: String, queue: LogQueue) {
        self.label = label
        self.queue = queue
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        var merged = metadata
        if let provided = metadataProvider?.get() { merged.merge(provided) { $1 } }
        if let own = event.metadata { merged.merge(own) { $1 } }
        let pairs = merged.isEmpty ? "" : " " + merged.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
        queue.enqueue("\(LogQueue.timestamp()) \(event.level) \(label):\(pairs) [\(event.source)] \(event.message)\n")
    }
}

/// The lines waiting to be written to a file descriptor, at most
/// `capacity` bytes of them, and the thread that writes them.
final class LogQueue: @unchecked Sendable {
    private let condition = NSCondition()
    private var lines: [String] = []
    private var bytes = 0
    private var writing = false
    private let capacity: Int
    private let descriptor: Int32

    /// Starts the writer thread for `descriptor` (standard error by default).
    init(descriptor: Int32 = 2, capacity: Int) {
        self.descriptor = descriptor
        self.capacity = max(4096, capacity)
        let thread = Thread { [unowned self] in self.drain() }
        thread.name = "imago-log-writer"
        thread.start()
    }

    /// Queues `line`, or drops and counts it when the queue is full. Never blocks on the output.
    func enqueue(_ line: String) {
        let size = line.utf8.count
        condition.lock()
        guard bytes + size <= capacity else {
            condition.unlock()
            Counter(label: "imago_log_lines_dropped").increment()
            return
        }
        lines.append(line)
        bytes += size
        condition.signal()
        condition.unlock()
    }

    /// Waits up to `seconds` for the queued lines to be written (at exit; a
    /// reader that does not read makes it give up rather than hang).
    func flush(waitingAtMost seconds: Double) {
        let deadline = Date().addingTimeInterval(seconds)
        condition.lock()
        while (!lines.isEmpty || writing) && condition.wait(until: deadline) {}
        condition.unlock()
    }

    private func drain() {
        while true {
            condition.lock()
            while lines.isEmpty { condition.wait() }
            let batch = lines.joined()
            lines.removeAll(keepingCapacity: true)
            bytes = 0
            writing = true
            condition.unlock()
            write(batch)
            condition.lock()
            writing = false
            condition.broadcast()
            condition.unlock()
        }
    }

    /// Writes all of `text`, retrying after interruptions; gives up on an error (a closed pipe).
    private func write(_ text: String) {
        var bytes = Array(text.utf8)[...]
        while !bytes.isEmpty {
            let written = bytes.withUnsafeBytes { Foundation.write(descriptor, $0.baseAddress, $0.count) }
            if written < 0 {
                if errno == EINTR { continue }
                return
            }
            bytes = bytes.dropFirst(written)
        }
    }

    /// The current time as `StreamLogHandler` writes it.
    static func timestamp() -> String {
        var buffer = [Int8](repeating: 0, count: 64)
        var now = time(nil)
        var parts = tm()
        localtime_r(&now, &parts)
        let count = strftime(&buffer, buffer.count, "%Y-%m-%dT%H:%M:%S%z", &parts)
        return String(decoding: buffer.prefix(count).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
