import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Metrics
import ServiceLifecycle
import SharedState

/// A swift-metrics backend that sends every metric to a DogStatsD agent
/// (Datadog's StatsD) as text lines over UDP, in the public datagram format:
///
///     imago_server_responses:3|c|#service:imago,status:200
///     imago_server_in_flight:0|g
///     imago_server_request_duration:12.5|ms
///     some_histogram:512|h|#key:value
///
/// Counters are summed and gauges (meters, and recorders that do not
/// aggregate) keep their last value: both are sent once a flush, a counter
/// only when it moved. Timers (`|ms`, in milliseconds) and aggregating
/// recorders (`|h`) are sent sample by sample. Lines are batched into
/// datagrams of at most ``DogStatsDSender/maximumPayload`` bytes; a full
/// datagram goes out at once, the rest at each ``flush()`` (every second
/// by ``DogStatsDFlusher``, and at shutdown).
///
/// Nothing here waits on the network: a send that fails (no agent, a full
/// socket buffer) is dropped and counted as `imago_dogstatsd_dropped_datagrams`.
final class DogStatsDMetricsFactory: MetricsFactory {
    let sender: DogStatsDSender
    /// `|#tag,...` for every line, from `--dogstatsd-tag`.
    private let globalTags: [String]
    private let counters = Locked<[String: DogStatsDCounter]>([:])
    private let gauges = Locked<[String: DogStatsDGauge]>([:])
    private let samples = Locked<[String: DogStatsDSample]>([:])

    /// - Parameter tags: `KEY:VALUE` (or bare) tags added to every metric.
    init(sender: DogStatsDSender, tags: [String]) {
        self.sender = sender
        self.globalTags = tags.map(DogStatsDFormat.tag)
    }

    /// Sends what the counters and gauges hold and every line waiting.
    func flush() {
        let counters = counters.withLock { Array($0.values) }
        let gauges = gauges.withLock { Array($0.values) }
        for line in counters.compactMap({ $0.takeLine() }) + gauges.compactMap({ $0.line() }) {
            sender.enqueue(line)
        }
        sender.flush()
    }

    /// The part of a line after the value: `|TYPE` and the tags.
    private func suffix(type: String, dimensions: [(String, String)]) -> String {
        let tags = globalTags + dimensions.map { DogStatsDFormat.tag("\($0.0):\($0.1)") }
        return "|" + type + (tags.isEmpty ? "" : "|#" + tags.joined(separator: ","))
    }

    /// The handler of `label` and `dimensions` in `table`, made once.
    private func handler<Handler>(_ table: Locked<[String: Handler]>, _ label: String, _ dimensions: [(String, String)], type: String,
                                  make: (String, String) -> Handler) -> Handler {
        let key = ([label, type] + dimensions.flatMap { [$0.0, $0.1] }).joined(separator: "\u{0}")
        return table.withLock { handlers in
            if let existing = handlers[key] { return existing }
            let made = make(DogStatsDFormat.name(label), suffix(type: type, dimensions: dimensions))
            handlers[key] = made
            return made
        }
    }

    func makeCounter(label: String, dimensions: [(String, String)]) -> any CounterHandler {
        handler(counters, label, dimensions, type: "c") { DogStatsDCounter(name: $0, suffix: $1) }
    }

    func makeFloatingPointCounter(label: String, dimensions: [(String, String)]) -> any FloatingPointCounterHandler {
        handler(counters, label, dimensions, type: "c") { DogStatsDCounter(name: $0, suffix: $1) }
    }

    func makeMeter(label: String, dimensions: [(String, String)]) -> any MeterHandler {
        handler(gauges, label, dimensions, type: "g") { DogStatsDGauge(name: $0, suffix: $1) }
    }

    func makeRecorder(label: String, dimensions: [(String, String)], aggregate: Bool) -> any RecorderHandler {
        guard aggregate else { return handler(gauges, label, dimensions, type: "g") { DogStatsDGauge(name: $0, suffix: $1) } }
        return handler(samples, label, dimensions, type: "h") { DogStatsDSample(name: $0, suffix: $1, sender: sender) }
    }

    func makeTimer(label: String, dimensions: [(String, String)]) -> any TimerHandler {
        handler(samples, label, dimensions, type: "ms") { DogStatsDSample(name: $0, suffix: $1, sender: sender) }
    }

    func destroyCounter(_ handler: any CounterHandler) { forget(handler, in: counters) }
    func destroyFloatingPointCounter(_ handler: any FloatingPointCounterHandler) { forget(handler, in: counters) }
    func destroyMeter(_ handler: any MeterHandler) { forget(handler, in: gauges) }
    func destroyRecorder(_ handler: any RecorderHandler) {
        forget(handler, in: gauges)
        forget(handler, in: samples)
    }
    func destroyTimer(_ handler: any TimerHandler) { forget(handler, in: samples) }

    /// Drops `handler` from `table` (what a counter held is sent first).
    private func forget<Handler: AnyObject>(_ handler: AnyObject, in table: Locked<[String: Handler]>) {
        if let counter = handler as? DogStatsDCounter, let line = counter.takeLine() { sender.enqueue(line) }
        table.withLock { handlers in
            if let key = handlers.first(where: { $0.value === handler })?.key { handlers[key] = nil }
        }
    }
}

/// The text of DogStatsD lines: names and tags made safe, numbers written short.
enum DogStatsDFormat {
    /// `label` as a metric name: ASCII letters, digits, `_` and `.` only
    /// (anything else becomes `_`), starting with a letter, at most 200 bytes.
    static func name(_ label: String) -> String {
        let name = String(String.UnicodeScalarView(label.unicodeScalars.map { safe($0, also: "_.") }.drop { !isLetter($0) }.prefix(200)))
        return name.isEmpty ? "metric" : name
    }

    /// A tag, `key:value` or bare: ASCII letters, digits and `_-:./` only
    /// (anything else, such as `,`, `|` or `#`, becomes `_`), at most 200 bytes.
    static func tag(_ text: String) -> String {
        String(String.UnicodeScalarView(text.unicodeScalars.map { safe($0, also: "_-:./") }.prefix(200)))
    }

    private static func isLetter(_ scalar: Unicode.Scalar) -> Bool { ("a"..."z").contains(scalar) || ("A"..."Z").contains(scalar) }

    /// `scalar` when it is an ASCII letter or digit or one of `extra`, else `_`.
    private static func safe(_ scalar: Unicode.Scalar, also extra: String) -> Unicode.Scalar {
        isLetter(scalar) || ("0"..."9").contains(scalar) || extra.unicodeScalars.contains(scalar) ? scalar : "_"
    }

    /// `value` as DogStatsD reads it: whole numbers without a fraction;
    /// `nil` for a value that is not finite (such a sample is not sent).
    static func number(_ value: Double) -> String? {
        guard value.isFinite else { return nil }
        if value == value.rounded(), abs(value) < 1e15 { return String(Int64(value)) }
        return String(value)
    }
}

/// A counter: what it was incremented by since the last flush.
final class DogStatsDCounter: CounterHandler, FloatingPointCounterHandler {
    private let name: String
    private let suffix: String
    private let pending = Locked(0.0)

    init(name: String, suffix: String) {
        self.name = name
        self.suffix = suffix
    }

    func increment(by amount: Int64) { pending.withLock { $0 += Double(amount) } }
    func increment(by amount: Double) { pending.withLock { $0 += amount } }
    func reset() { pending.withLock { $0 = 0 } }

    /// The line of what was counted since the last call, and a fresh start; `nil` when nothing was.
    func takeLine() -> String? {
        let count = pending.withLock { value in
            defer { value = 0 }
            return value
        }
        guard count != 0, let text = DogStatsDFormat.number(count) else { return nil }
        return name + ":" + text + suffix
    }
}

/// A gauge: a meter, or a recorder that keeps only its last value.
final class DogStatsDGauge: MeterHandler, RecorderHandler {
    private let name: String
    private let suffix: String
    private let value = Locked<Double?>(nil)

    init(name: String, suffix: String) {
        self.name = name
        self.suffix = suffix
    }

    func set(_ value: Int64) { set(Double(value)) }
    func set(_ value: Double) { self.value.withLock { $0 = value } }
    func increment(by amount: Double) { value.withLock { $0 = ($0 ?? 0) + amount } }
    func decrement(by amount: Double) { value.withLock { $0 = ($0 ?? 0) - amount } }
    func record(_ value: Int64) { set(Double(value)) }
    func record(_ value: Double) { set(value) }

    /// The line of its value; `nil` before it has one.
    func line() -> String? {
        guard let current = value.withLock({ $0 }), let text = DogStatsDFormat.number(current) else { return nil }
        return name + ":" + text + suffix
    }
}

/// A timer (`|ms`) or a histogram (`|h`): each sample is a line of its own.
final class DogStatsDSample: TimerHandler, RecorderHandler {
    private let name: String
    private let suffix: String
    private let sender: DogStatsDSender

    init(name: String, suffix: String, sender: DogStatsDSender) {
        self.name = name
        self.suffix = suffix
        self.sender = sender
    }

    func recordNanoseconds(_ duration: Int64) { record(Double(duration) / 1_000_000) }
    func record(_ value: Int64) { record(Double(value)) }
    func record(_ value: Double) {
        guard let text = DogStatsDFormat.number(value) else { return }
        sender.enqueue(name + ":" + text + suffix)
    }
}

/// Lines batched into datagrams, sent over a connected UDP socket without
/// ever waiting: a datagram the socket does not take at once (no agent
/// listening, a full buffer) is dropped and counted.
final class DogStatsDSender: Sendable {
    /// The most bytes of one datagram: what fits in a 1500-byte Ethernet
    /// frame after the IP and UDP headers (Datadog's clients' default).
    static let maximumPayload = 1432

    private let descriptor: Int32
    private let pending = Locked<[UInt8]>([])
    private let droppedCount = Locked(0)

    /// The datagrams dropped so far.
    var dropped: Int { droppedCount.withLock { $0 } }

    /// Resolves `host` (IPv4 first, as Datadog's clients) and connects a UDP socket to it.
    ///
    /// - Throws: ``Unreachable`` when `host` does not resolve or no socket can be made.
    init(host: String, port: Int) throws {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Self.datagramType
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, String(port), &hints, &list)
        guard status == 0, let list else { throw Unreachable(detail: "\(host) does not resolve: \(String(cString: gai_strerror(status)))") }
        defer { freeaddrinfo(list) }
        var entries: [addrinfo] = []
        var cursor: UnsafeMutablePointer<addrinfo>? = list
        while let entry = cursor {
            entries.append(entry.pointee)
            cursor = entry.pointee.ai_next
        }
        for entry in entries.filter({ $0.ai_family == AF_INET }) + entries.filter({ $0.ai_family != AF_INET }) {
            let made = socket(entry.ai_family, Self.datagramType, 0)
            guard made >= 0 else { continue }
            _ = fcntl(made, F_SETFD, FD_CLOEXEC)
            if connect(made, entry.ai_addr, entry.ai_addrlen) == 0 {
                descriptor = made
                return
            }
            close(made)
        }
        throw Unreachable(detail: "no UDP socket reaches \(host):\(port): \(String(cString: strerror(errno)))")
    }

    deinit { close(descriptor) }

    /// Adds `line` to the datagram being filled; sends that datagram first when the line does not fit in it.
    func enqueue(_ line: String) {
        let bytes = Array(line.utf8)
        let full = pending.withLock { buffer -> [UInt8]? in
            var full: [UInt8]?
            if !buffer.isEmpty, buffer.count + 1 + bytes.count > Self.maximumPayload {
                full = buffer
                buffer.removeAll(keepingCapacity: true)
            }
            if !buffer.isEmpty { buffer.append(UInt8(ascii: "\n")) }
            buffer.append(contentsOf: bytes)
            return full
        }
        if let full { transmit(full) }
    }

    /// Sends the datagram being filled, if it holds anything.
    func flush() {
        let datagram = pending.withLock { buffer in
            defer { buffer.removeAll(keepingCapacity: true) }
            return buffer
        }
        if !datagram.isEmpty { transmit(datagram) }
    }

    private func transmit(_ datagram: [UInt8]) {
        let sent = datagram.withUnsafeBytes { Self.sendWithoutWaiting(descriptor, $0) }
        guard sent != datagram.count else { return }
        droppedCount.withLock { $0 += 1 }
        Counter(label: "imago_dogstatsd_dropped_datagrams").increment()
    }

    /// send(2) with MSG_DONTWAIT: the bytes sent, or -1.
    private static func sendWithoutWaiting(_ descriptor: Int32, _ bytes: UnsafeRawBufferPointer) -> Int {
        #if canImport(Glibc)
        Glibc.send(descriptor, bytes.baseAddress, bytes.count, Int32(MSG_DONTWAIT))
        #else
        Darwin.send(descriptor, bytes.baseAddress, bytes.count, MSG_DONTWAIT)
        #endif
    }

    #if canImport(Glibc)
    private static let datagramType = Int32(SOCK_DGRAM.rawValue)
    #else
    private static let datagramType = SOCK_DGRAM
    #endif

    /// The agent's address cannot be used.
    struct Unreachable: Error, CustomStringConvertible {
        let detail: String
        var description: String { detail }
    }
}

/// Flushes the DogStatsD lines every `interval` and once more when the
/// server stops (it is the last service stopped, so the last requests'
/// metrics go out).
struct DogStatsDFlusher: Service {
    let factory: DogStatsDMetricsFactory
    var interval: Duration = .seconds(1)

    func run() async throws {
        while !Task.isCancelled, !Task.isShuttingDownGracefully {
            do {
                try await cancelWhenGracefulShutdown { try await Task.sleep(for: interval) }
            } catch {
                break
            }
            factory.flush()
        }
        factory.flush()
    }
}
