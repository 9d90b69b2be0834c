import ArgumentParser
import CommandLineSupport
import Foundation
import Imago

extension Harness {
    /// `imago-harness cache`: a process that reads and writes a disk cache, for crash-safety tests.
    ///
    /// Every value is self-describing (see ``BenchCacheValue``): whoever reads
    /// it can check that it is complete and belongs to the key it was read for,
    /// whichever process or version wrote it. A read that returns bytes which
    /// fail that check is a corrupt read; a miss is fine.
    struct Cache: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Read and write a disk cache directory, verifying every read, until killed or for --seconds.",
            discussion: """
                write: store entries under --keys keys (so they are overwritten), values of varied sizes.
                mixed: half reads, half writes.
                verify: read every key once, then store and read back a fresh entry, and exit.
                A one-line JSON summary is printed at the end; the exit status is 1 after any corrupt read.
                """
        )

        enum Mode: String, ExpressibleByArgument, CaseIterable {
            case write, mixed, verify
        }

        @Option(help: ArgumentHelp("The cache directory (created when missing).", valueName: "DIR"))
        var dir: String

        @Option(help: "write, mixed or verify.")
        var mode: Mode = .mixed

        @Option(help: ArgumentHelp("Stop after this many seconds (default: run until killed).", valueName: "N"))
        var seconds: Double?

        @Option(help: "How many distinct keys.")
        var keys: Int = 50

        @Option(help: ArgumentHelp("The cache's size limit in bytes (small, so trimming runs too).", valueName: "BYTES"))
        var sizeLimit: Int = 4 << 20

        @Option(help: ArgumentHelp("The smallest value in bytes.", valueName: "BYTES"))
        var minSize: Int = 1 << 10

        @Option(help: ArgumentHelp("The largest value in bytes.", valueName: "BYTES"))
        var maxSize: Int = 300 << 10

        func validate() throws {
            if keys < 1 { throw ValidationError("--keys must be at least 1.") }
            if sizeLimit < 1 { throw ValidationError("--size-limit must be at least 1.") }
            if minSize < BenchCacheValue.headerSize || maxSize < minSize {
                throw ValidationError("--min-size must be at least \(BenchCacheValue.headerSize) and --max-size at least --min-size.")
            }
            if let seconds, !(seconds >= 0) { throw ValidationError("--seconds must be at least 0.") }
        }

        func run() async throws {
            let cache = DataCache(configuration: .init(directory: URL(fileURLWithPath: dir), sizeLimit: sizeLimit))
            Output.error("imago-harness cache: \(mode.rawValue) in \(dir), pid \(getpid())")
            if mode == .verify {
                try verify(cache)
            } else {
                try loop(cache)
            }
        }

        /// Writes (and in mixed mode reads) until the deadline, or forever.
        private func loop(_ cache: DataCache) throws {
            var random = SystemRandomNumberGenerator()
            let process = UInt64(UInt32(truncatingIfNeeded: getpid())) << 32
            var counter: UInt64 = 0
            var writes = 0, reads = 0, hits = 0, corrupt = 0
            let started = ContinuousClock.now
            let deadline = seconds.map { started + .seconds($0) }
            while deadline.map({ ContinuousClock.now < $0 }) ?? true {
                let index = Int.random(in: 0..<keys, using: &random)
                if mode == .mixed && Bool.random(using: &random) {
                    reads += 1
                    Self.checkedRead(cache, index: index, hits: &hits, corrupt: &corrupt)
                } else {
                    counter += 1
                    let version = process | counter
                    let size = minSize + Int(BenchCacheValue.mix(UInt64(index) &* 31 &+ version) % UInt64(maxSize - minSize + 1))
                    cache.store(BenchCacheValue.entry(index: index, version: version, size: size), for: BenchCacheValue.key(index))
                    writes += 1
                }
            }
            let elapsed = (ContinuousClock.now - started).milliseconds / 1_000
            Output.line(JSONValue.object([
                ("benchmark", .string("cache")), ("mode", .string(mode.rawValue)), ("seconds", .double(elapsed)),
                ("writes", .int(writes)), ("reads", .int(reads)), ("hits", .int(hits)), ("misses", .int(reads - hits)),
                ("corrupt", .int(corrupt)), ("size", .int(cache.totalSize)),
            ]).text)
            if corrupt > 0 { throw ExitCode(1) }
        }

        /// Reads the value of key `index`, counting a hit or a corrupt read (reported on stderr).
        private static func checkedRead(_ cache: DataCache, index: Int, hits: inout Int, corrupt: inout Int) {
            switch BenchCacheValue.read(cache, index: index) {
            case .miss: break
            case .valid: hits += 1
            case .corrupt(let reason):
                hits += 1
                corrupt += 1
                Output.error("imago-harness cache: corrupt read of key \(index): \(reason)")
            }
        }

        /// Reads every key once, then checks that a fresh entry stores and reads back.
        private func verify(_ cache: DataCache) throws {
            let names = (try? FileManager.default.contentsOfDirectory(atPath: cache.configuration.directory.path)) ?? []
            var hits = 0, corrupt = 0
            for index in 0..<keys {
                Self.checkedRead(cache, index: index, hits: &hits, corrupt: &corrupt)
            }
            // A key outside the bench's set, so no other writer touches it.
            let probe = keys + 1_000_000 + Int.random(in: 0..<1_000_000)
            let version = UInt64(UInt32(truncatingIfNeeded: getpid())) << 32
            cache.store(BenchCacheValue.entry(index: probe, version: version, size: minSize), for: BenchCacheValue.key(probe))
            let readBack = BenchCacheValue.read(cache, index: probe)
            let works = readBack == .valid
            if !works { Output.error("imago-harness cache: a fresh entry did not read back: \(readBack)") }
            cache.removeEntry(for: BenchCacheValue.key(probe))
            Output.line(JSONValue.object([
                ("benchmark", .string("cache")), ("mode", .string("verify")), ("keys", .int(keys)),
                ("entries", .int(names.filter { $0.hasSuffix(".entry") }.count)),
                ("temporary_files", .int(names.filter { $0.hasPrefix(".tmp-") }.count)),
                ("reads", .int(keys)), ("hits", .int(hits)), ("misses", .int(keys - hits)), ("corrupt", .int(corrupt)),
                ("works", .bool(works)),
            ]).text)
            if corrupt > 0 || !works { throw ExitCode(1) }
        }
    }
}

/// The values `imago-harness cache` stores: a 32-byte header (the magic
/// `IMGOBNCH`, then the key's index, the version and the total length, each
/// a little-endian `UInt64`) and a payload generated from the index and the
/// version. The entry's ETag repeats the index and the version, so header
/// and body must come from the same write.
enum BenchCacheValue {
    static let headerSize = 32
    private static let magic = UInt64(littleEndian: Array("IMGOBNCH".utf8).withUnsafeBytes { $0.loadUnaligned(as: UInt64.self) })

    enum Read: Equatable {
        case miss
        case valid
        case corrupt(String)
    }

    static func key(_ index: Int) -> String { "https://bench.example/cache/\(index)" }

    static func etag(index: Int, version: UInt64) -> String { "\"\(index)-\(version)\"" }

    /// SplitMix64's finaliser.
    static func mix(_ value: UInt64) -> UInt64 {
        var z = value &+ 0x9E37_79B9_7F4A_7C15
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// The payload's word at `offset`, for `index` and `version`.
    private static func word(seed: UInt64, offset: Int) -> UInt64 {
        mix(seed &+ UInt64(offset) &* 0xD1B5_4A32_D192_ED03)
    }

    private static func seed(index: Int, version: UInt64) -> UInt64 {
        mix(UInt64(truncatingIfNeeded: index) ^ mix(version))
    }

    /// The entry for `index` at `version`, `size` bytes long.
    static func entry(index: Int, version: UInt64, size: Int) -> DataCacheEntry {
        var data = Data(count: size)
        let seed = seed(index: index, version: version)
        data.withUnsafeMutableBytes { raw in
            raw.storeBytes(of: magic.littleEndian, toByteOffset: 0, as: UInt64.self)
            raw.storeBytes(of: UInt64(truncatingIfNeeded: index).littleEndian, toByteOffset: 8, as: UInt64.self)
            raw.storeBytes(of: version.littleEndian, toByteOffset: 16, as: UInt64.self)
            raw.storeBytes(of: UInt64(size).littleEndian, toByteOffset: 24, as: UInt64.self)
            var offset = headerSize
            while offset + 8 <= size {
                raw.storeBytes(of: word(seed: seed, offset: offset).littleEndian, toByteOffset: offset, as: UInt64.self)
                offset += 8
            }
            withUnsafeBytes(of: word(seed: seed, offset: offset).littleEndian) { tail in
                for byte in 0..<(size - offset) { raw[offset + byte] = tail[byte] }
            }
        }
        let now = Date()
        return DataCacheEntry(data: data, contentType: "application/x-imago-bench", etag: etag(index: index, version: version),
                              storedAt: now, expiresAt: now.addingTimeInterval(3_600))
    }

    /// Reads `index` from `cache` and checks what comes back.
    static func read(_ cache: some DataCaching, index: Int) -> Read {
        guard let entry = cache.entry(for: key(index)) else { return .miss }
        return check(entry, index: index)
    }

    /// Whether `entry` is a complete, self-consistent value for `index`.
    static func check(_ entry: DataCacheEntry, index: Int) -> Read {
        let data = entry.data
        guard data.count >= headerSize else { return .corrupt("\(data.count) bytes, shorter than the header") }
        return data.withUnsafeBytes { raw -> Read in
            let header = (0..<4).map { UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: $0 * 8, as: UInt64.self)) }
            guard header[0] == magic else { return .corrupt("bad magic") }
            guard header[1] == UInt64(truncatingIfNeeded: index) else { return .corrupt("holds key \(header[1])") }
            let version = header[2]
            guard header[3] == UInt64(data.count) else { return .corrupt("\(data.count) bytes, the header says \(header[3])") }
            guard entry.etag == etag(index: index, version: version) else {
                return .corrupt("ETag \(entry.etag ?? "none") does not match version \(version)")
            }
            let seed = seed(index: index, version: version)
            var offset = headerSize
            while offset + 8 <= data.count {
                if UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: offset, as: UInt64.self)) != word(seed: seed, offset: offset) {
                    return .corrupt("payload differs at byte \(offset)")
                }
                offset += 8
            }
            let expected = word(seed: seed, offset: offset).littleEndian
            let matches = withUnsafeBytes(of: expected) { tail in
                (0..<(data.count - offset)).allSatisfy { raw[offset + $0] == tail[$0] }
            }
            return matches ? .valid : .corrupt("payload differs in the last bytes")
        }
    }
}
