import ChildProcesses
import Foundation
import Imago
@testable import imago_harness
import Testing

/// Crash safety of the disk cache (``DataCache`` writes a temporary file and
/// renames it into place: readers see an entry whole or not at all), with real processes:
/// `imago-harness cache` writers killed with SIGKILL at random moments, and two
/// processes sharing one directory. Values are self-describing
/// (``BenchCacheValue``), so every entry that reads back can be checked for
/// completeness whichever process and version wrote it.
@Suite(.serialized) struct DataCacheCrashTests {
    let directory: URL
    let cacheDirectory: URL
    static let keys = 50
    static let sizeLimit = 2_000_000

    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("imago-cache-crash-\(UUID().uuidString)")
        cacheDirectory = directory.appendingPathComponent("cache")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    /// A running `imago-harness cache`, its output going to files.
    struct Running {
        let process: Process
        let stdout: URL
        let stderr: URL
        let handles: [FileHandle]

        /// Waits until the process has opened the cache (its first stderr line), at most `timeout`.
        ///
        /// Every wait in this suite suspends instead of blocking a thread:
        /// the suite runs for a minute or more beside the others, and a
        /// blocked thread of the test runner's few would starve them.
        func waitUntilRunning(timeout: Duration = .seconds(60)) async -> Bool {
            let deadline = ContinuousClock.now + timeout
            while ContinuousClock.now < deadline && process.isRunning {
                if ((try? FileManager.default.attributesOfItem(atPath: stderr.path)[.size] as? Int) ?? 0) > 0 { return true }
                try? await Task.sleep(for: .milliseconds(1))
            }
            return false
        }

        /// Awaits the exit and closes the output files; returns stdout.
        func finish() async throws -> String {
            await process.exited()
            for handle in handles { try handle.close() }
            return try String(contentsOf: stdout, encoding: .utf8)
        }

        var errors: String { (try? String(contentsOf: stderr, encoding: .utf8)) ?? "" }
    }

    func start(_ arguments: [String], sizeLimit: Int = Self.sizeLimit) throws -> Running {
        let process = Process()
        process.executableURL = HarnessProcess.binary
        process.arguments = ["cache", "--dir", cacheDirectory.path, "--keys", "\(Self.keys)", "--size-limit", "\(sizeLimit)"] + arguments
        let name = UUID().uuidString
        let out = directory.appendingPathComponent("\(name).out"), err = directory.appendingPathComponent("\(name).err")
        try Data().write(to: out)
        try Data().write(to: err)
        let handles = [try FileHandle(forWritingTo: out), try FileHandle(forWritingTo: err)]
        process.standardOutput = handles[0]
        process.standardError = handles[1]
        try process.startTiedToThisProcess()
        return Running(process: process, stdout: out, stderr: err, handles: handles)
    }

    /// The JSON summary line of a finished run.
    static func summary(_ stdout: String) -> [String: Any] {
        stdout.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }.last ?? [:]
    }

    /// `imago-harness cache --mode verify`: its summary, after checking that it passed.
    func verifyProcess(_ comment: String, sizeLimit: Int = Self.sizeLimit) async throws -> [String: Any] {
        let running = try start(["--mode", "verify"], sizeLimit: sizeLimit)
        let summary = Self.summary(try await running.finish())
        #expect(running.process.terminationStatus == 0, "\(comment): \(running.errors)")
        #expect(summary["corrupt"] as? Int == 0, "\(comment): \(summary)")
        #expect(summary["works"] as? Bool == true, "\(comment): \(summary)")
        return summary
    }

    struct Check {
        var hits = 0
        var corrupt: [String] = []
        /// Files under an entry's final name that the cache rejected: a rename is atomic, so none.
        var damagedFiles = 0
    }

    /// Reads every key in this process: each entry must be complete and valid.
    func checkInProcess() -> Check {
        let cache = DataCache(configuration: .init(directory: cacheDirectory, sizeLimit: Self.sizeLimit))
        var check = Check()
        for index in 0..<Self.keys {
            let existed = FileManager.default.fileExists(atPath: cache.fileURL(for: BenchCacheValue.key(index)).path)
            switch BenchCacheValue.read(cache, index: index) {
            case .miss: if existed { check.damagedFiles += 1 }
            case .valid: check.hits += 1
            case .corrupt(let reason): check.corrupt.append("key \(index): \(reason)")
            }
        }
        return check
    }

    func temporaryFiles() -> [URL] {
        ((try? FileManager.default.contentsOfDirectory(at: cacheDirectory, includingPropertiesForKeys: nil)) ?? [])
            .filter { $0.lastPathComponent.hasPrefix(".tmp-") }
    }

    @Test func benchValuesRevealEveryKindOfDamage() {
        defer { try? FileManager.default.removeItem(at: directory) }
        let value = BenchCacheValue.entry(index: 3, version: 0x1234_0000_0005, size: 5_003)
        #expect(BenchCacheValue.check(value, index: 3) == .valid)
        var damaged: [DataCacheEntry] = []
        for size in [0, 31, 32, 4_999, 5_002] {
            var cut = value
            cut.data = value.data.prefix(size)
            damaged.append(cut)
        }
        for offset in [0, 9, 17, 25, 40, 4_000, 5_002] {
            var flipped = value
            flipped.data[offset] ^= 0x10
            damaged.append(flipped)
        }
        var otherVersion = value
        otherVersion.etag = BenchCacheValue.etag(index: 3, version: 6)
        damaged.append(otherVersion)
        var longer = value
        longer.data.append(0)
        damaged.append(longer)
        for entry in damaged {
            guard case .corrupt = BenchCacheValue.check(entry, index: 3) else {
                Issue.record("damage not seen: \(entry.data.count) bytes")
                continue
            }
        }
        // A complete value of another key is corrupt for this one.
        guard case .corrupt = BenchCacheValue.check(BenchCacheValue.entry(index: 4, version: 5, size: 100), index: 3) else {
            Issue.record("another key's value passed")
            return
        }
    }

    @Test func writersKilledAtRandomMomentsLeaveOnlyCompleteEntries() async throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let kills = 200
        var verified = 0, damagedFiles = 0, mostTemporaryFiles = 0
        var corrupt: [String] = []
        var checking = Duration.zero, starting = Duration.zero
        let started = ContinuousClock.now
        for round in 1...kills {
            // Writers and mixed readers-writers, killed 2-100 ms into their loop.
            let launched = ContinuousClock.now
            let running = try start(["--mode", round % 2 == 0 ? "write" : "mixed"])
            #expect(await running.waitUntilRunning(), "kill \(round): the writer did not start: \(running.errors)")
            starting += ContinuousClock.now - launched
            try await Task.sleep(for: .milliseconds(Int.random(in: 2...100)))
            kill(running.process.processIdentifier, SIGKILL)
            _ = try await running.finish()
            #expect(running.process.terminationReason == .uncaughtSignal, "kill \(round): \(running.errors)")
            try? FileManager.default.removeItem(at: running.stdout)
            try? FileManager.default.removeItem(at: running.stderr)

            // After every other kill, every entry is read back here (the check is the slow part under
            // the thread sanitizer); every 25 kills, a fresh process checks too, and stores a new entry.
            if round % 2 == 0 {
                let checkStarted = ContinuousClock.now
                let check = checkInProcess()
                checking += ContinuousClock.now - checkStarted
                verified += check.hits
                damagedFiles += check.damagedFiles
                corrupt += check.corrupt.map { "kill \(round): \($0)" }
            }
            mostTemporaryFiles = max(mostTemporaryFiles, temporaryFiles().count)
            if round % 25 == 0 { _ = try await verifyProcess("after kill \(round)") }
        }
        print("DataCacheCrash: \(kills) kills in \(ContinuousClock.now - started) (starting writers \(starting), checking \(checking)), \(verified) entries verified, \(corrupt.count) corrupt reads, "
              + "\(damagedFiles) damaged entry files, at most \(mostTemporaryFiles) leftover temporary files")
        #expect(corrupt.isEmpty, "\(corrupt.prefix(10))")
        #expect(damagedFiles == 0)
        #expect(verified > kills / 2)

        // Leftover temporary files (the writers' and one made here, cut short) break nothing...
        let cutShort = cacheDirectory.appendingPathComponent(".tmp-\(UUID().uuidString)")
        try Data(BenchCacheValue.entry(index: 0, version: 1, size: 10_000).data.prefix(5_000)).write(to: cutShort)
        let leftovers = temporaryFiles()
        #expect(leftovers.count >= 1)
        _ = try await verifyProcess("with \(leftovers.count) temporary files")
        // ...and once older than ten minutes, the next process to store an entry sweeps them,
        // even one far under its size limit, which never trims.
        let old = Date().addingTimeInterval(-11 * 60)
        for file in leftovers { try FileManager.default.setAttributes([.modificationDate: old], ofItemAtPath: file.path) }
        _ = try await verifyProcess("sweeping", sizeLimit: 1 << 40)
        let remaining = Set(temporaryFiles().map(\.lastPathComponent))
        #expect(leftovers.allSatisfy { !remaining.contains($0.lastPathComponent) }, "\(remaining)")
        // A writer over the limit still trims, and the cache still works.
        let writer = try start(["--mode", "write", "--seconds", "0.5"])
        let summary = Self.summary(try await writer.finish())
        #expect(writer.process.terminationStatus == 0, "\(writer.errors)")
        #expect((summary["writes"] as? Int ?? 0) > 0)
        let cache = DataCache(configuration: .init(directory: cacheDirectory, sizeLimit: Self.sizeLimit))
        #expect(cache.totalSize <= Self.sizeLimit)
        let fresh = BenchCacheValue.entry(index: 7, version: 99, size: 12_345)
        cache.store(fresh, for: BenchCacheValue.key(7))
        #expect(cache.entry(for: BenchCacheValue.key(7))?.data == fresh.data)
        #expect(checkInProcess().corrupt.isEmpty)
    }

    @Test func twoProcessesReadingAndWritingOneDirectoryNeverReadACorruptEntry() async throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let processes = try (0..<2).map { _ in try start(["--mode", "mixed", "--seconds", "3"]) }
        var reads = 0, writes = 0
        for running in processes {
            let summary = Self.summary(try await running.finish())
            #expect(running.process.terminationStatus == 0, "\(running.errors)")
            #expect(summary["corrupt"] as? Int == 0, "\(summary)")
            #expect((summary["hits"] as? Int ?? 0) > 0, "\(summary)")
            reads += summary["reads"] as? Int ?? 0
            writes += summary["writes"] as? Int ?? 0
        }
        print("DataCacheCrash: two processes for 3 s: \(reads) reads, \(writes) writes, 0 corrupt")
        #expect(reads > 0 && writes > 0)
        _ = try await verifyProcess("after two processes")
        let check = checkInProcess()
        #expect(check.corrupt.isEmpty && check.damagedFiles == 0, "\(check.corrupt)")
    }
}
