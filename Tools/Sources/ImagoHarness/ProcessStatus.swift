import CommandLineSupport
import Foundation
import SharedState

/// Samples the resident set while the run goes on.
final class MemorySampler: Sendable {
    struct Summary: Sendable {
        var firstQuarterMB: Double?
        var lastQuarterMB: Double?
        var peakMB: Double?
        var samples: Int
    }

    private let total: Int
    private let samples = Locked<[(progress: Int, kilobytes: Int)]>([])

    init(total: Int) {
        self.total = total
    }

    /// Samples every 100 ms until cancelled; `progress` is how many requests have finished.
    func run(progress: @Sendable () -> Int) async {
        while !Task.isCancelled {
            ProcessStatus.trimFreeMemory()
            if let rss = ProcessStatus.kilobytes("VmRSS") {
                let done = progress()
                samples.withLock { $0.append((done, rss)) }
            }
            try? await Task.sleep(for: .milliseconds(100))
        }
    }

    func summary() -> Summary {
        let samples = samples.withLock { $0 }
        func average(_ range: Range<Int>) -> Double? {
            let values = samples.filter { range.contains($0.progress) }.map(\.kilobytes)
            return values.isEmpty ? nil : Double(values.reduce(0, +)) / Double(values.count) / 1024
        }
        return Summary(
            firstQuarterMB: average(0..<max(1, total / 4)),
            lastQuarterMB: average(total * 3 / 4..<total + 1),
            peakMB: ProcessStatus.kilobytes("VmHWM").map { Double($0) / 1024 },
            samples: samples.count
        )
    }
}

/// What `/proc/self` says about this process (Linux; `nil` elsewhere).
enum ProcessStatus {
    /// A `kB` field of `/proc/self/status`, such as `VmRSS` or `VmHWM`.
    static func kilobytes(_ field: String) -> Int? {
        guard let text = procFile("/proc/self/status") else { return nil }
        for line in text.split(separator: "\n") where line.hasPrefix(field + ":") {
            return Int(line.dropFirst(field.count + 1).trimmingCharacters(in: .whitespaces).split(separator: " ").first ?? "")
        }
        return nil
    }

    /// A file under `/proc`, read to its end (they report no size, and a
    /// single read returns one page at most).
    private static func procFile(_ path: String) -> String? {
        guard let handle = FileHandle(forReadingAtPath: path) else { return nil }
        defer { try? handle.close() }
        var data = Data()
        while true {
            guard let chunk = try? handle.read(upToCount: 65_536), !chunk.isEmpty else { break }
            data.append(chunk)
        }
        return String(decoding: data, as: UTF8.self)
    }

    /// Makes glibc return large buffers (a gzip bomb's 25 MB) to the system
    /// when they are freed, so the resident set follows live memory rather
    /// than the allocator's high-water mark: `mallopt(M_MMAP_THRESHOLD, 1 MB)`
    /// (by default the threshold grows up to 32 MB as big buffers come and go).
    static func returnLargeAllocationsAtOnce() {
        #if os(Linux)
        typealias Mallopt = @convention(c) (Int32, Int32) -> Int32
        guard let symbol = dlsym(nil, "mallopt") else { return }
        let mmapThreshold: Int32 = -3   // M_MMAP_THRESHOLD in <malloc.h>
        _ = unsafeBitCast(symbol, to: Mallopt.self)(mmapThreshold, 1 << 20)
        #endif
    }

    /// Hands memory that is free but still mapped back to the system
    /// (`malloc_trim(0)`, every arena), so the resident set counts live
    /// memory: the small buffers a gzip bomb streams through otherwise stay
    /// mapped in the allocator's per-thread arenas after they are freed.
    static func trimFreeMemory() {
        #if os(Linux)
        typealias MallocTrim = @convention(c) (Int) -> Int32
        guard let symbol = dlsym(nil, "malloc_trim") else { return }
        _ = unsafeBitCast(symbol, to: MallocTrim.self)(0)
        #endif
    }

    /// How many file descriptors are open.
    static func openFileDescriptors() -> Int? {
        (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")).map(\.count)
    }

    /// The descriptor count, less client sockets to `port`, once it is within
    /// `margin` of `target`, or after five seconds: (that count, the sockets left out).
    static func settledFileDescriptors(target: Int?, margin: Int, excludingSocketsTo port: Int) async -> (count: Int, excluded: Int)? {
        let deadline = ContinuousClock.now + .seconds(5)
        while true {
            guard let count = openFileDescriptors() else { return nil }
            let excluded = clientSockets(toPort: port)
            guard let target else { return (count - excluded, excluded) }
            if count - excluded <= target + margin || ContinuousClock.now >= deadline { return (count - excluded, excluded) }
            try? await Task.sleep(for: .milliseconds(100))
        }
    }

    /// How many of this process's descriptors are TCP sockets whose remote end is `port` on loopback.
    static func clientSockets(toPort port: Int) -> Int {
        var inodes = Set<String>()
        for table in ["/proc/self/net/tcp", "/proc/self/net/tcp6"] {
            guard let text = procFile(table) else { continue }
            for line in text.split(separator: "\n").dropFirst() {
                let fields = line.split(separator: " ")
                guard fields.count > 9, let remotePort = fields[2].split(separator: ":").last.flatMap({ Int($0, radix: 16) }),
                      remotePort == port else { continue }
                inodes.insert(String(fields[9]))
            }
        }
        guard !inodes.isEmpty, let descriptors = try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd") else { return 0 }
        return descriptors.filter { descriptor in
            guard let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/" + descriptor),
                  target.hasPrefix("socket:[") else { return false }
            return inodes.contains(String(target.dropFirst(8).dropLast()))
        }.count
    }
}
