import Foundation
import Imago
import Testing

/// The disk cache's trim order and its sweep of abandoned files, found by the
/// crash-safety soak (`scripts/cache-crash-soak`, `DataCacheCrashTests`).
@Suite struct DataCacheHousekeepingTests {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("imago-data-cache-housekeeping-\(UUID().uuidString)")

    private func entry(_ size: Int) -> DataCacheEntry {
        DataCacheEntry(data: Data(repeating: 3, count: size), storedAt: Date(), expiresAt: Date().addingTimeInterval(60))
    }

    @Test func anEntryJustStoredIsNotTheFirstOneItsOwnTrimDeletes() {
        defer { try? FileManager.default.removeItem(at: directory) }
        // Hits stamp an entry's "last used" time from `Date`; the file system
        // stamps a new file from a coarser clock, up to a few milliseconds
        // behind. Unless a store stamps its file from `Date` too, an entry just
        // written can sort before entries read a moment earlier, and be deleted
        // by the trim its own store starts.
        for round in 0..<40 {
            // Given 30 entries from another instance (another process), together under the limit
            let directory = directory.appendingPathComponent("\(round)")
            let writer = DataCache(configuration: .init(directory: directory, sizeLimit: 1 << 30))
            for index in 0..<30 { writer.store(entry(1_800), for: "old\(index)") }
            let size = writer.totalSize
            // When a new instance reads them all, then stores one more, which crosses its limit
            let cache = DataCache(configuration: .init(directory: directory, sizeLimit: size + 1_000))
            for index in 0..<30 { _ = cache.entry(for: "old\(index)") }
            cache.store(entry(1_800), for: "new")
            // Then the trim deletes entries read before, not the one just stored
            #expect(cache.totalSize <= size)
            #expect(cache.entry(for: "new") != nil, "round \(round)")
        }
    }

    @Test func aCacheUnderItsLimitSweepsAbandonedTemporaryFilesAtItsFirstStore() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        // Given temporary files left by writers that crashed, one long ago, one just now
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let abandoned = directory.appendingPathComponent(".tmp-crashed-long-ago")
        try Data(count: 5_000).write(to: abandoned)
        try FileManager.default.setAttributes([.modificationDate: Date().addingTimeInterval(-3_600)], ofItemAtPath: abandoned.path)
        let recent = directory.appendingPathComponent(".tmp-writing-now")
        try Data(count: 5_000).write(to: recent)
        // When a new cache, far under its limit (it never trims), stores an entry
        let cache = DataCache(configuration: .init(directory: directory, sizeLimit: 1 << 30))
        cache.store(entry(100), for: "k")
        // Then the old one is gone, and a live writer's file is left alone
        #expect(!FileManager.default.fileExists(atPath: abandoned.path))
        #expect(FileManager.default.fileExists(atPath: recent.path))
        #expect(cache.entry(for: "k") != nil)
    }
}
